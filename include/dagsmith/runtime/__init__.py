"""How one microservice invocation runs: in a container (docker API) or as a local subprocess."""

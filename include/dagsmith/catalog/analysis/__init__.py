"""What dagsmith understands a microservice to do: from its code (static, optionally worded by a model), or from
its documentation alone (the baseline)."""

"""Self-healing: read why a step failed and choose what to run instead."""

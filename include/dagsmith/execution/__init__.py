"""Executing stored pipelines: workspaces, step runs with self-healing, checks between steps."""

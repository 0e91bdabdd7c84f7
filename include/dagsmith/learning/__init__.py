"""Execution history and the patterns learned from it (read by the recommender, written by the executor)."""

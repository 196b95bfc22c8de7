"""Gymnasium classic-control envs as registered ding_env types."""

"""Configs for the hybrid-action env types."""

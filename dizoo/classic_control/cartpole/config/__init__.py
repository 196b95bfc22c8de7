"""Configs for the cartpole env."""

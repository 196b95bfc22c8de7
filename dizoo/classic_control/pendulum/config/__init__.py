"""Configs for the pendulum env."""

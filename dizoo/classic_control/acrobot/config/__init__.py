"""Configs for the acrobot env."""

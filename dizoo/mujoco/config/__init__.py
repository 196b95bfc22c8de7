"""Configs for MuJoCo envs."""

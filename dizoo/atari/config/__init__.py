"""Configs for Atari games."""

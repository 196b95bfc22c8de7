"""Configs for the PettingZoo env types."""

"""Configs for the card game."""

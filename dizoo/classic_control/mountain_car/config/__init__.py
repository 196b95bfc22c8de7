"""Configs for the mountain_car env."""

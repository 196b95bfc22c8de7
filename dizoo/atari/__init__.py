"""Atari games (ALE) with DeepMind's preprocessing, registered as env type 'atari'."""

"""Atari games (ALE) with DeepMind's preprocessing, registered as env type 'atari'."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)  # see dizoo/__init__.py

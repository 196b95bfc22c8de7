"""A Blackjack-inspired card game: the model to copy for a custom ``BaseEnv``."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)  # see dizoo/__init__.py

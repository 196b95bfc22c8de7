"""The card_game env type."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)  # see dizoo/__init__.py

from dizoo.card_game.envs.card_game_env import CardGameEnv

__all__ = ["CardGameEnv"]

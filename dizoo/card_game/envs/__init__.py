"""The card_game env type."""

from dizoo.card_game.envs.card_game_env import CardGameEnv

__all__ = ["CardGameEnv"]

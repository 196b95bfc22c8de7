"""Breakout: collector and evaluator envs, in DI-engine's main_config / create_config shape."""

from dizoo.atari.config.atari_config import make_atari_config

main_config, create_config = make_atari_config("ALE/Breakout-v5", stop_value=400)

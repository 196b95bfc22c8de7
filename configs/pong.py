"""Pong (ALE/Pong-v5) with DeepMind's preprocessing: ``ding-env run configs/pong.py``."""

from dizoo.atari.config.atari_config import make_atari_config

# Every key is documented in dizoo/atari/config/atari_config.py; override with --set.
main_config, create_config = make_atari_config("ALE/Pong-v5", stop_value=20)
main_config.env.collector_env_num = 4

"""The atari env type."""

from dizoo.atari.envs.atari_env import AtariEnv

__all__ = ["AtariEnv"]

"""The petting_zoo env type."""

from dizoo.petting_zoo.envs.simple_spread_env import SimpleSpreadEnv

__all__ = ["SimpleSpreadEnv"]

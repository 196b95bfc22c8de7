"""DI-engine's ``ding.envs.env.base_env`` import path: ``BaseEnv``, ``BaseEnvTimestep`` and the env registry lookups."""

from ding_env.base_env import BaseEnv
from ding_env.registry import get_env_cls, get_vec_env_setting
from ding_env.timestep import BaseEnvTimestep

__all__ = ["BaseEnv", "BaseEnvTimestep", "get_env_cls", "get_vec_env_setting"]

"""DI-engine's ``ding.envs.env.ding_env_wrapper`` import path: ``DingEnvWrapper``."""

from ding_env.wrappers import DingEnvWrapper

__all__ = ["DingEnvWrapper"]

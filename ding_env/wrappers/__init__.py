"""Adapters from Gymnasium (and legacy gym) envs to ``BaseEnv``."""

from ding_env.wrappers.ding_env_wrapper import DingEnvWrapper
from ding_env.wrappers.registry import WRAPPER_REGISTRY

__all__ = ["DingEnvWrapper", "WRAPPER_REGISTRY"]

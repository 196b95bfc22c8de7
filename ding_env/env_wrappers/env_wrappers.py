"""DI-engine's ``ding.envs.env_wrappers.env_wrappers`` import path: every wrapper of ``ding_env.wrappers``."""

from ding_env.wrappers import *  # noqa: F403 - this module only re-exports the wrappers
from ding_env.wrappers import __all__  # noqa: F401

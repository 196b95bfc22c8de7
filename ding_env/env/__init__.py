"""DI-engine's ``ding.envs.env`` import path: the env base class, its timestep and wrapper, and the checks.

``from ding.envs.env import BaseEnv, BaseEnvTimestep`` ports as
``from ding_env.env import BaseEnv, BaseEnvTimestep``. The raising checks are
those of ``ding_env.checker.compat`` (``ding_env.checker.check_env`` returns a full report instead).
"""

from ding_env.base_env import BaseEnv
from ding_env.checker import compat
from ding_env.checker.compat import *  # noqa: F403 - DI-engine's raising checks
from ding_env.registry import get_env_cls, get_vec_env_setting
from ding_env.timestep import BaseEnvTimestep
from ding_env.wrappers import DingEnvWrapper

__all__ = ["BaseEnv", "BaseEnvTimestep", "DingEnvWrapper", "get_env_cls", "get_vec_env_setting", *compat.__all__]

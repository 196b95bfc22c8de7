"""ding_env: the DI-engine env layer (``ding.envs``), with exact RL semantics and fast managers.

Port DI-engine code by replacing ``ding.envs`` with ``ding_env``::

    from ding_env import BaseEnv, BaseEnvTimestep, DingEnvWrapper, BaseEnvManager
    from ding_env import MaxAndSkipWrapper, WarpFrameWrapper, FrameStackWrapper
    from ding_env.env_manager import SyncSubprocessEnvManager
    from ding_env.env_wrappers import EvalEpisodeReturnWrapper
"""

from __future__ import annotations

from ding_env import wrappers as _wrappers
from ding_env.base_env import BaseEnv
from ding_env.checker import compat as _compat
from ding_env.checker.compat import *  # noqa: F403 - DI-engine's ding.envs exports its raising checks
from ding_env.config import deep_merge_dicts
from ding_env.env_manager import (
    AsyncSubprocessEnvManager,
    BaseEnvManager,
    BaseEnvManagerV2,
    EnvSupervisor,
    ObsBatch,
    SubprocessEnvManagerV2,
    SyncSubprocessEnvManager,
    TimestepBatch,
    create_env_manager,
    get_env_manager_cls,
    setup_ding_env_manager,
)
from ding_env.registry import ENV_REGISTRY, get_env_cls, get_vec_env_setting
from ding_env.timestep import BaseEnvTimestep
from ding_env.version import __version__
from ding_env.wrappers import *  # noqa: F403 - DI-engine's ding.envs exports every wrapper

__all__ = [
    "ENV_REGISTRY",
    "AsyncSubprocessEnvManager",
    "BaseEnv",
    "BaseEnvManager",
    "BaseEnvManagerV2",
    "BaseEnvTimestep",
    "EnvSupervisor",
    "ObsBatch",
    "SubprocessEnvManagerV2",
    "SyncSubprocessEnvManager",
    "TimestepBatch",
    "__version__",
    "create_env_manager",
    "deep_merge_dicts",
    "get_env_cls",
    "get_env_manager_cls",
    "get_vec_env_setting",
    "setup_ding_env_manager",
    *_wrappers.__all__,
    *_compat.__all__,
]

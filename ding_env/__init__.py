"""ding_env: the DI-engine env layer (``ding.envs``), with exact RL semantics and fast managers.

Port DI-engine code by replacing ``ding.envs`` with ``ding_env``::

    from ding_env import BaseEnv, BaseEnvTimestep, DingEnvWrapper, BaseEnvManager
    from ding_env import MaxAndSkipWrapper, WarpFrameWrapper, FrameStackWrapper
    from ding_env.env_manager import SyncSubprocessEnvManager
    from ding_env.env_wrappers import EvalEpisodeReturnWrapper

The package reads as the architecture: ``env`` (the contract), ``env_wrappers`` (preprocessing),
``env_manager`` (managers and their backends), ``checker``, and the ``ding-env`` command line.
"""

from ding_env.config import deep_merge_dicts

# ding_env.env comes before the checker: its raising checks (DI-engine's ding.envs.env has them) import the
# checker, whose modules import ding_env.env.base_env while ding_env.env is still being initialised.
from ding_env.env import (  # isort: skip
    BaseBatchEnv,
    BaseEnv,
    BaseEnvInfo,
    BatchStep,
    BaseEnvTimestep,
    DingEnvWrapper,
    EnvCheckError,
    check_all,
    check_array_space,
    check_different_memory,
    check_obs_deepcopy,
    check_reset,
    check_space_dtype,
    check_step,
    demonstrate_correct_procedure,
)
from ding_env.env_manager import (
    AsyncSubprocessEnvManager,
    BaseEnvManager,
    BaseEnvManagerV2,
    EnvSupervisor,
    GymVectorEnvManager,
    ObsBatch,
    PoolEnvManager,
    SubprocessEnvManagerV2,
    SyncSubprocessEnvManager,
    TimestepBatch,
    create_env_manager,
    get_env_manager_cls,
    setup_ding_env_manager,
)
from ding_env.env_wrappers.action import ActionDiscretizeWrapper, ActionRepeatWrapper, GymHybridDictActionWrapper
from ding_env.env_wrappers.atari import (
    EpisodicLifeWrapper,
    FireResetWrapper,
    MaxAndSkipWrapper,
    NoopResetWrapper,
    RamWrapper,
    WarpFrameWrapper,
)
from ding_env.env_wrappers.env_wrappers import ENV_WRAPPER_REGISTRY, create_env_wrapper
from ding_env.env_wrappers.legacy_gym import GymToGymnasiumWrapper
from ding_env.env_wrappers.multi_agent import PettingZooEnv
from ding_env.env_wrappers.observation import (
    FlatObsWrapper,
    FrameStackWrapper,
    ObservationClipWrapper,
    ObsNormWrapper,
    ObsPlusPrevActRewWrapper,
    ObsTransposeWrapper,
    RunningMeanStd,
    ScaledFloatFrameWrapper,
    StaticObsNormWrapper,
    TransposeWrapper,
)
from ding_env.env_wrappers.presets import get_default_wrappers
from ding_env.env_wrappers.reward import (
    ClipRewardWrapper,
    DelayRewardWrapper,
    EvalEpisodeReturnWrapper,
    RewardNormWrapper,
    SparseRewardWrapper,
)
from ding_env.env_wrappers.reward_in_obs import AllinObsWrapper
from ding_env.env_wrappers.shapes import update_shape
from ding_env.env_wrappers.time_limit import TimeLimitWrapper
from ding_env.registry import ENV_REGISTRY, get_env_cls, get_vec_env_setting
from ding_env.version import __version__

# A module of the package, as DI-engine's ding.envs imports its gym_env (ding.envs.gym_env.env after import ding.envs).
from ding_env import gym_env  # isort: skip

__all__ = [
    # the env contract
    "BaseBatchEnv",
    "BaseEnv",
    "BaseEnvInfo",
    "BatchStep",
    "BaseEnvTimestep",
    "DingEnvWrapper",
    "ENV_REGISTRY",
    "get_env_cls",
    "get_vec_env_setting",
    # env managers
    "AsyncSubprocessEnvManager",
    "BaseEnvManager",
    "BaseEnvManagerV2",
    "EnvSupervisor",
    "ObsBatch",
    "SubprocessEnvManagerV2",
    "SyncSubprocessEnvManager",
    "TimestepBatch",
    "create_env_manager",
    "get_env_manager_cls",
    "setup_ding_env_manager",
    "gym_env",
    # wrappers
    "ENV_WRAPPER_REGISTRY",
    "ActionDiscretizeWrapper",
    "ActionRepeatWrapper",
    "AllinObsWrapper",
    "ClipRewardWrapper",
    "DelayRewardWrapper",
    "EpisodicLifeWrapper",
    "EvalEpisodeReturnWrapper",
    "FireResetWrapper",
    "FlatObsWrapper",
    "FrameStackWrapper",
    "GymHybridDictActionWrapper",
    "GymToGymnasiumWrapper",
    "GymVectorEnvManager",
    "MaxAndSkipWrapper",
    "NoopResetWrapper",
    "ObsNormWrapper",
    "ObsPlusPrevActRewWrapper",
    "ObsTransposeWrapper",
    "ObservationClipWrapper",
    "PettingZooEnv",
    "PoolEnvManager",
    "RamWrapper",
    "RewardNormWrapper",
    "RunningMeanStd",
    "ScaledFloatFrameWrapper",
    "SparseRewardWrapper",
    "StaticObsNormWrapper",
    "TimeLimitWrapper",
    "TransposeWrapper",
    "WarpFrameWrapper",
    "create_env_wrapper",
    "get_default_wrappers",
    "update_shape",
    # DI-engine's raising env checks
    "EnvCheckError",
    "check_all",
    "check_array_space",
    "check_different_memory",
    "check_obs_deepcopy",
    "check_reset",
    "check_space_dtype",
    "check_step",
    "demonstrate_correct_procedure",
    "deep_merge_dicts",
    "__version__",
]

"""The preprocessing wrappers: Gymnasium wrappers under DI-engine's names, grouped by what they change.

This is DI-engine's ``ding.envs.env_wrappers``: ``from ding.envs.env_wrappers import MaxAndSkipWrapper``
ports as ``from ding_env.env_wrappers import MaxAndSkipWrapper``. One module per family:
``atari``, ``observation``, ``reward``, ``action``, ``time_limit``; ``replay`` records videos;
``reward_in_obs`` wraps a ``BaseEnv``; ``multi_agent`` turns a PettingZoo parallel env into one;
``presets`` holds what ``env_wrapper='default'`` applies per env family; ``env_wrappers`` holds
``ENV_WRAPPER_REGISTRY``, the names configs give the wrappers (DI-engine's, with its meanings).
``DingEnvWrapper``, which applies them, is the contract's: ``ding_env.env``.
"""

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

__all__ = [
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
    "MaxAndSkipWrapper",
    "NoopResetWrapper",
    "ObsNormWrapper",
    "ObsPlusPrevActRewWrapper",
    "ObsTransposeWrapper",
    "ObservationClipWrapper",
    "PettingZooEnv",
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
]

"""Adapters from Gymnasium (and legacy gym) envs to ``BaseEnv``, and the preprocessing wrappers.

The wrappers are Gymnasium wrappers under DI-engine's names, one family per module:
``atari``, ``observation``, ``reward``, ``action``, ``time_limit``; ``replay`` records videos;
``reward_in_obs`` wraps a ``BaseEnv``; ``multi_agent`` turns a PettingZoo parallel env into
one. ``registry`` holds the names configs use, ours
(``WRAPPER_REGISTRY``) and DI-engine's (``ENV_WRAPPER_REGISTRY``, ``create_env_wrapper``).
"""

from ding_env.wrappers.action import ActionDiscretizeWrapper, ActionRepeatWrapper, GymHybridDictActionWrapper
from ding_env.wrappers.atari import (
    EpisodicLifeWrapper,
    FireResetWrapper,
    MaxAndSkipWrapper,
    NoopResetWrapper,
    RamWrapper,
    WarpFrameWrapper,
)
from ding_env.wrappers.ding_env_wrapper import DingEnvWrapper
from ding_env.wrappers.legacy_gym import GymToGymnasiumWrapper
from ding_env.wrappers.multi_agent import PettingZooEnv
from ding_env.wrappers.observation import (
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
from ding_env.wrappers.presets import get_default_wrappers
from ding_env.wrappers.registry import ENV_WRAPPER_REGISTRY, WRAPPER_REGISTRY, create_env_wrapper
from ding_env.wrappers.reward import (
    ClipRewardWrapper,
    DelayRewardWrapper,
    EvalEpisodeReturnWrapper,
    RewardNormWrapper,
    SparseRewardWrapper,
)
from ding_env.wrappers.reward_in_obs import AllinObsWrapper
from ding_env.wrappers.shapes import update_shape
from ding_env.wrappers.time_limit import TimeLimitWrapper

__all__ = [
    "ENV_WRAPPER_REGISTRY",
    "WRAPPER_REGISTRY",
    "ActionDiscretizeWrapper",
    "ActionRepeatWrapper",
    "AllinObsWrapper",
    "ClipRewardWrapper",
    "DelayRewardWrapper",
    "DingEnvWrapper",
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

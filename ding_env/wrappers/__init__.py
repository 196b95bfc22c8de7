"""Adapters from Gymnasium (and legacy gym) envs to ``BaseEnv``, and the preprocessing wrappers.

The wrappers are Gymnasium wrappers under DI-engine's names, one family per module:
``atari``, ``observation``, ``reward``, ``action``, ``time_limit``; ``replay`` records videos.
"""

from ding_env.wrappers.action import ActionDiscretizeWrapper, ActionRepeatWrapper
from ding_env.wrappers.atari import (
    EpisodicLifeWrapper,
    FireResetWrapper,
    MaxAndSkipWrapper,
    NoopResetWrapper,
    RamWrapper,
    WarpFrameWrapper,
)
from ding_env.wrappers.ding_env_wrapper import DingEnvWrapper
from ding_env.wrappers.observation import (
    FrameStackWrapper,
    ObservationClipWrapper,
    ObsNormWrapper,
    ObsTransposeWrapper,
    ScaledFloatFrameWrapper,
)
from ding_env.wrappers.registry import WRAPPER_REGISTRY
from ding_env.wrappers.reward import ClipRewardWrapper, EvalEpisodeReturnWrapper, RewardNormWrapper, SparseRewardWrapper
from ding_env.wrappers.time_limit import TimeLimitWrapper

__all__ = [
    "WRAPPER_REGISTRY",
    "ActionDiscretizeWrapper",
    "ActionRepeatWrapper",
    "ClipRewardWrapper",
    "DingEnvWrapper",
    "EpisodicLifeWrapper",
    "EvalEpisodeReturnWrapper",
    "FireResetWrapper",
    "FrameStackWrapper",
    "MaxAndSkipWrapper",
    "NoopResetWrapper",
    "ObsNormWrapper",
    "ObsTransposeWrapper",
    "ObservationClipWrapper",
    "RamWrapper",
    "RewardNormWrapper",
    "ScaledFloatFrameWrapper",
    "SparseRewardWrapper",
    "TimeLimitWrapper",
    "WarpFrameWrapper",
]

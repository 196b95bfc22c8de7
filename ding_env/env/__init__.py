"""The env contract: ``BaseEnv``, ``BaseEnvTimestep``, ``DingEnvWrapper`` and DI-engine's raising checks.

This is DI-engine's ``ding.envs.env``: ``from ding.envs.env import BaseEnv, BaseEnvTimestep`` ports as
``from ding_env.env import BaseEnv, BaseEnvTimestep``. Its modules: ``base_env`` (the abstract env),
``timestep`` (the step record and its named constructors), ``batch_env`` (``BaseBatchEnv``: many envs
stepped with one call) and ``batch_step`` (its record), ``seeding`` (per-episode seeds), ``spaces``
(strict membership of values in spaces) and ``ding_env_wrapper`` (Gymnasium envs as ``BaseEnv``);
``batch_sources`` holds EnvPool's and Gymnasium's batched envs as ``BaseBatchEnv``. The raising checks
are ``ding_env.checker.compat``'s (``ding_env.checker.check_env`` returns a full report instead).
"""

from ding_env.checker.compat import (
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
from ding_env.env.base_env import BaseEnv, BaseEnvInfo
from ding_env.env.batch_env import BaseBatchEnv, BatchStep
from ding_env.env.ding_env_wrapper import DingEnvWrapper
from ding_env.env.timestep import BaseEnvTimestep
from ding_env.env_wrappers.presets import get_default_wrappers
from ding_env.registry import get_env_cls, get_vec_env_setting

__all__ = [
    "BaseBatchEnv",
    "BaseEnv",
    "BaseEnvInfo",
    "BatchStep",
    "BaseEnvTimestep",
    "DingEnvWrapper",
    "EnvCheckError",
    "check_all",
    "check_array_space",
    "check_different_memory",
    "check_obs_deepcopy",
    "check_reset",
    "check_space_dtype",
    "check_step",
    "demonstrate_correct_procedure",
    "get_default_wrappers",
    "get_env_cls",
    "get_vec_env_setting",
]

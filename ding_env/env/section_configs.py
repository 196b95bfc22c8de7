"""How an env section becomes ``DingEnvWrapper`` envs: one config per env, or batch envs of ``batch`` sub-envs.

``DingEnvWrapper`` takes them as its class and static methods; ``get_vec_env_setting`` calls them on the env
type's class (``DingEnvWrapper`` or a subclass such as the ``cartpole`` type), as DI-engine's calls its env
classes'.
"""

from __future__ import annotations

from easydict import EasyDict

from ding_env.config import check_env_keys, per_batch_env, with_replays_off
from ding_env.env.base_env import BaseEnv
from ding_env.env.batch_env import BaseBatchEnv
from ding_env.env_wrappers.wrapper_config import WRAPPER_CONFIG


def batch_env(cls: type, cfg: dict) -> BaseBatchEnv:
    """The batch env of ``cfg['batch']`` sub-envs that ``cfg`` describes (``batch_sources.from_wrapper_config``).

    Raises:
        ConfigError: For an unknown key, no ``batch``, or a key the batch source cannot honour.
    """
    from ding_env.env.batch_sources.from_wrapper_config import batch_env_from_wrapper_config

    check_env_keys(cfg, cls.config, f"{cls.__name__} config")
    # A key the source does not read must be off, as DingEnvWrapper's own default has it: a subclass's
    # default that turns it on (the mujoco type's act_scale) would go unapplied.
    neutral = {**cls.config, **{key: value for key, value in WRAPPER_CONFIG.items() if key in cls.config}}
    return batch_env_from_wrapper_config({**cls.config, **cfg}, neutral, f"{cls.__name__} config")


def create_collector_env_cfg(cfg: dict) -> list[EasyDict]:
    """Per-env configs as ``BaseEnv``'s, with no replays; with ``batch``, one per batch env."""
    return per_batch_env(BaseEnv.create_collector_env_cfg(with_replays_off(cfg)), cfg, "collector_env_num")


def create_evaluator_env_cfg(cfg: dict) -> list[EasyDict]:
    """Per-env configs as ``BaseEnv``'s, with no replays; with ``batch``, one per batch env."""
    return per_batch_env(BaseEnv.create_evaluator_env_cfg(with_replays_off(cfg)), cfg, "evaluator_env_num")

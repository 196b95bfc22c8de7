"""The batch env a ``DingEnvWrapper`` config with ``batch=N`` describes.

Example::

    cfg = dict(env_id="CartPole-v1", batch=16)                          # Gymnasium's vector env of 16
    env = DingEnvWrapper.batch_env(cfg)
    cfg = dict(env_id="Pong-v5", batch=8, batch_source="envpool")       # EnvPool, with the Atari preset

``get_vec_env_setting`` builds these for an env section with ``batch``: ``collector_env_num`` (and
``evaluator_env_num``) still count envs, so a manager gets ``collector_env_num / batch`` batch envs.

A batch source applies only the preprocessing it can give exactly: EnvPool gives the Atari preset from
its own options (``env_wrapper='default'``; see ``EnvPoolBatchEnv``); a Gymnasium vector env gives none,
so there ``env_wrapper='default'`` is accepted only for families whose preset is empty (classic
control, MuJoCo, Box2D, ...). Other keys must keep their defaults; a key set otherwise is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ding_env.config import PIPELINE_KEYS, check_batch, check_batch_source
from ding_env.env.batch_env import BaseBatchEnv
from ding_env.env.batch_sources.envpool_env import ATARI_KEYS, EnvPoolBatchEnv
from ding_env.env.batch_sources.gym_vector_env import GymVectorBatchEnv, picks_autoreset_mode, vector_creator
from ding_env.env.gym_ids import register_env_id
from ding_env.env_wrappers.family import ATARI, family_of_env_id
from ding_env.env_wrappers.presets import wrapper_specs
from ding_env.errors import ConfigError
from ding_env.summary import describe_value

# The keys each source reads, beside env_id, make_kwargs, env_wrapper, batch and batch_source.
SOURCE_KEYS = {"gym_vector": ("act_scale", "action_clip"), "envpool": ATARI_KEYS}


def batch_env_from_wrapper_config(cfg: Mapping, defaults: Mapping, where: str) -> BaseBatchEnv:
    """The batch env of ``cfg['batch']`` sub-envs that a ``DingEnvWrapper`` config describes.

    Args:
        cfg: The config, merged over ``defaults``.
        defaults: The config values that change nothing (a key that differs from them must be one the source
            reads): ``DingEnvWrapper``'s defaults, and a subclass's for its own keys.
        where: Names the env class in errors.

    Raises:
        ConfigError: For no ``batch``, an unknown ``batch_source``, or a key the source cannot honour.
    """
    batch = check_batch(cfg, where)
    if batch is None:
        raise ConfigError(f"{where}: a batch env needs cfg.batch (sub-envs per batch env), got none")
    source = check_batch_source(cfg, where)
    if not cfg.get("env_id"):
        raise ConfigError(f"{where}: a batch env needs cfg.env_id, got none")
    read = {"env_id", "make_kwargs", "env_wrapper", "batch", "batch_source", *SOURCE_KEYS[source]}
    for key, value in cfg.items():
        if key not in read and key not in PIPELINE_KEYS and key in defaults and value != defaults[key]:
            raise ConfigError(
                f"{where} with batch_source {source!r}: key {key!r}={describe_value(value)} cannot be applied to a "
                f"batch env; set {key}={describe_value(defaults[key])} (the source takes "
                f"{sorted(read - {'batch', 'batch_source'})})"
            )
    if source == "envpool":
        keys = {key: cfg[key] for key in (*ATARI_KEYS, "env_wrapper") if key in cfg}
        make_kwargs = dict(cfg.get("make_kwargs") or {})
        env_cfg = dict(env_id=cfg["env_id"], num_envs=batch, make_kwargs=make_kwargs, **keys)
        if "is_train" in cfg:
            env_cfg["is_train"] = cfg["is_train"]
        return EnvPoolBatchEnv(env_cfg)
    return _gym_vector(cfg, batch, where)


def _gym_vector(cfg: Mapping, batch: int, where: str) -> GymVectorBatchEnv:
    env_id, env_wrapper = cfg["env_id"], cfg.get("env_wrapper", "default")
    register_env_id(env_id)
    family = family_of_env_id(env_id)
    # A preset with no wrappers for the family (classic control's and MuJoCo's 'default', 'mujoco_default'):
    # what it leaves to DingEnvWrapper (float32 observations, act_scale) the vector source gives itself.
    if wrapper_specs(env_wrapper, family, cfg):
        envpool = " or batch_source='envpool', which gives Atari's preset itself" if family == ATARI else ""
        raise ConfigError(
            f"{where} with batch_source 'gym_vector': env_wrapper {describe_value(env_wrapper)} cannot be applied "
            f"to a Gymnasium vector env of {env_id!r}; use env_wrapper=None (the vector env as it is){envpool}"
        )
    # A vector entry point that resets a sub-env only with the next step cannot give the contract
    # (see GymVectorBatchEnv): Gymnasium's sync vector env over the id's envs then.
    creator = vector_creator(env_id)
    mode = "vector_entry_point" if creator is not None and picks_autoreset_mode(creator) else "sync"
    env_cfg: dict[str, Any] = dict(
        env_id=env_id, num_envs=batch, vectorization_mode=mode, make_kwargs=dict(cfg.get("make_kwargs") or {})
    )
    env_cfg.update({key: cfg[key] for key in SOURCE_KEYS["gym_vector"] if key in cfg})
    try:
        return GymVectorBatchEnv(env_cfg)
    except ConfigError as error:
        raise ConfigError(f"{where}: {error}") from error

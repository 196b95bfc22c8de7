"""DI-engine's ``ding.envs.gym_env``: ``env(cfg)``, a ``DingEnvWrapper`` of ``cfg.env_id``.

DI-engine's example configs end with ``env = ding.envs.gym_env.env`` (or a ``partial`` of it with
``gym.make`` arguments), and its agents call ``env(cfg=cfg.env)``. DI-engine makes the env with
legacy ``gym.make`` at once; this one looks the id up as ``DingEnvWrapper`` does (Gymnasium, then
legacy gym when installed) and makes the env on its first reset.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ding_env.config import check_config_dict
from ding_env.env.ding_env_wrapper import DingEnvWrapper
from ding_env.errors import ConfigError


def env(cfg: Mapping, seed_api: bool = True, caller: str = "collector", **kwargs: Any) -> DingEnvWrapper:
    """A ``DingEnvWrapper`` of ``cfg.env_id`` with ``kwargs`` for ``gymnasium.make``.

    Args:
        cfg: The env section (``env_id`` and the wrapper's keys; pipeline keys such as
            ``collector_env_num`` are allowed).
        seed_api: False for an env that cannot be seeded.
        caller: 'collector' or 'evaluator': the training or the evaluation preprocessing.
        **kwargs: Passed to ``gymnasium.make`` (added to ``cfg.make_kwargs``), e.g. ``continuous=True``.

    Raises:
        ConfigError: For a ``cfg`` that is not a dict, an unknown key, no ``env_id`` or another caller, or
            ``norm_obs`` / ``norm_reward`` asking for normalisation (see ``without_unapplied_keys``).
    """
    cfg = without_unapplied_keys(cfg, "ding_env.gym_env.env cfg")
    if kwargs:
        make_kwargs = cfg.get("make_kwargs") or {}
        check_config_dict(make_kwargs, "ding_env.gym_env.env cfg.make_kwargs")
        cfg["make_kwargs"] = {**make_kwargs, **kwargs}
    return DingEnvWrapper(cfg=cfg, seed_api=seed_api, caller=caller)


# Keys DI-engine's example configs give this env and its DingEnvWrapper never read.
UNAPPLIED_KEYS = ("norm_obs", "norm_reward")


def without_unapplied_keys(cfg: Mapping | None, where: str) -> dict:
    """``cfg`` without the ``UNAPPLIED_KEYS`` that ask for nothing (None, False, or ``use_norm`` False).

    DI-engine's ``gym_env.env`` ignored them whatever they said; a key that asks for normalisation is refused
    here rather than ignored.

    Raises:
        ConfigError: For a ``cfg`` that is not a dict, or a key asking for normalisation, naming ``where``.
    """
    check_config_dict(cfg, where)
    cfg = dict(cfg or {})
    for key in UNAPPLIED_KEYS:
        value = cfg.get(key)
        asks = value.get("use_norm", False) if isinstance(value, Mapping) else value
        if asks is None or asks is False or (isinstance(asks, int) and asks == 0):  # a bool, 0 or None: no
            cfg.pop(key, None)
        else:
            raise ConfigError(
                f"{where} {key}={value!r}: a DingEnvWrapper of env_id does not normalise (DI-engine's gym_env.env "
                "ignored the key); drop it, or use the registered 'mujoco' env type, which applies it"
            )
    return cfg

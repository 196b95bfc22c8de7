"""``DingEnvWrapper.clone``: one more env with the same settings, for a manager made from one wrapper (DI-engine's)."""

from __future__ import annotations

import copy
import inspect
from typing import Any


def clone(env: Any, caller: str = "collector") -> Any:
    """``env.clone(caller)``: see ``DingEnvWrapper.clone``."""
    from ding_env.env.ding_env_wrapper import DingEnvWrapper

    of_type = _clone_of_type(env, caller, DingEnvWrapper)
    if of_type is not None:
        return of_type
    instance = None
    if env._user_env is not None:
        try:
            instance = copy.deepcopy(env._user_env)
        except Exception as error:  # noqa: BLE001 - whatever deepcopy raised, named with the env
            raise TypeError(
                f"{env!r}.clone(): the env instance cannot be deep-copied ({type(error).__name__}: {error}); "
                "give cfg.env_id, or build one DingEnvWrapper per env"
            ) from error
    return DingEnvWrapper(
        instance, env._user_cfg, seed_api=env._seed_api, caller=caller, is_gymnasium=env._is_gymnasium
    )


def _clone_of_type(env: Any, caller: str, base: type) -> Any | None:
    """A clone built by ``env``'s own subclass of ``base``; None when ``clone`` builds a plain ``base``.

    An env type (``cartpole``, ``minigrid``, ...) has config keys and an ``env_id`` of its own, which a plain
    ``DingEnvWrapper`` refused or lacked. None for ``base`` itself, an env given as an instance, or a
    constructor that takes no ``cfg``.
    """
    if type(env) is base or env._user_env is not None:
        return None
    parameters = inspect.signature(type(env)).parameters
    if "cfg" not in parameters:
        return None
    cfg = dict(env._user_cfg)
    cfg.setdefault("is_train", caller == "collector")
    settings = {"cfg": cfg, "seed_api": env._seed_api, "is_gymnasium": env._is_gymnasium}
    # A constructor that takes no seed_api or is_gymnasium passes its own on: those this env has.
    return type(env)(**{name: value for name, value in settings.items() if name in parameters})

"""``BaseEnvManagerV2`` and ``SubprocessEnvManagerV2``: the managers of DI-engine's task pipelines.

DI-engine's ``ding.framework`` middleware reads ``manager.ready_obs`` as one
stacked array, calls ``manager.step(actions)`` with one action per ready env (in
``ready_obs_id`` order) and gets back one ``treetensor.numpy`` array per stepped
env, with ``obs``, ``reward``, ``done``, ``info`` and ``env_id``. These adapters hold
a ``BaseEnvManager`` or ``SyncSubprocessEnvManager`` and add that interface; seeding,
auto-reset, configs, the batched API and everything else are those managers'.

Unlike DI-engine, each timestep also carries ``truncated`` (False unless the
episode was cut short), and a step with a different number of actions than
ready envs is an error instead of stepping the first ones only.

They need DI-treetensor (``pip install 'ding-env[treetensor]'``), which imports
torch: it is imported when a V2 manager is built, never by ``import ding_env``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

import numpy as np
from easydict import EasyDict

from ding_env.env.base_env import BaseEnv
from ding_env.env_manager import arrays


def treetensor_numpy(manager_name: str) -> ModuleType:
    """``treetensor.numpy``, or an ImportError that says how to install it."""
    try:
        return importlib.import_module("treetensor.numpy")
    except ImportError as error:
        raise ImportError(
            f"{manager_name} returns DI-treetensor arrays, and DI-treetensor is not installed "
            f"({error}); install it with: pip install 'ding-env[treetensor]'"
        ) from error


def identifier_keys(info: Mapping) -> dict:
    """``info`` as a treetensor can hold it: keys usable as attributes, no string values.

    As in DI-engine, ``.`` in a key becomes ``_`` (``TimeLimit.truncated`` is read as
    ``info.TimeLimit_truncated``), a key starting with a digit gets a leading ``_``,
    and string values (an abnormal step's ``error`` text, say) are left out, since
    they cannot become tensors. Nested dicts are treated the same way.
    """
    plain = {}
    for key, value in info.items():
        if isinstance(value, str):
            continue
        name = str(key).replace(".", "_")
        if name[:1].isdigit():
            name = "_" + name
        plain[name] = identifier_keys(value) if isinstance(value, Mapping) else value
    return plain


def treetensor_timestep(tnp: ModuleType, env_id: int, timestep: Any) -> Any:
    """A ``BaseEnvTimestep`` of env ``env_id`` as the ``treetensor.numpy`` array DI-engine's V2 APIs return.

    It holds ``obs``, ``reward``, ``done``, ``truncated``, ``info`` (see :func:`identifier_keys`) and ``env_id``.
    """
    return tnp.array(
        {
            "obs": timestep.obs,
            "reward": timestep.reward,
            "done": timestep.done,
            "truncated": timestep.truncated,
            "info": identifier_keys(timestep.info),
            "env_id": env_id,
        }
    )


def _plain_tree(value: Any, tree_class: type) -> Any:
    """A treetensor action (a ``tree_class`` of arrays) as nested dicts, which the managers check; others unchanged."""
    if isinstance(value, tree_class):
        return {key: _plain_tree(sub, tree_class) for key, sub in value.items()}
    return value


def _per_env_actions(actions: Any, tree_class: type) -> list[Any]:
    """One action per env from a sequence, a stacked array, or a stacked treetensor array."""
    actions = _plain_tree(actions, tree_class)
    if isinstance(actions, Mapping):  # a stacked tree (dict action space): one tree per row
        return arrays.unstack(actions)
    return [_plain_tree(action, tree_class) for action in actions]


class TreetensorManager:
    """DI-engine's V2 interface over a manager of class ``manager_cls``, which it holds.

    ``ready_obs`` and ``step`` are the V2 ones; every other attribute is the held manager's.
    """

    manager_type = "base_v2"
    manager_cls: type = None  # set by each V2 class

    def __init__(self, env_fn: Sequence[Callable[[], BaseEnv]], cfg: dict | None = None) -> None:
        self._tnp = treetensor_numpy(type(self).__name__)
        self._tree_class = importlib.import_module("treevalue").TreeValue  # what every treetensor array is
        self._manager = self.manager_cls(env_fn, cfg)

    @classmethod
    def default_config(cls) -> EasyDict:
        """The held manager's config defaults, with ``type`` set to this manager."""
        cfg = cls.manager_cls.default_config()
        cfg.type = cls.manager_type
        return cfg

    def __getattr__(self, name: str) -> Any:
        manager = self.__dict__.get("_manager")
        if manager is None or name.startswith("_"):
            raise AttributeError(name)
        return getattr(manager, name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(dir(self._manager)))

    def __enter__(self) -> TreetensorManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._manager.__exit__(*exc_info)

    @property
    def ready_obs(self) -> Any:
        """The ready envs' observations stacked, row ``k`` for ``ready_obs_id[k]``.

        A numpy array, a ``treetensor.numpy`` array for dict observations (as in
        DI-engine, a tuple inside one becomes one array per env), a tuple of arrays
        for tuple observations; always a copy, valid after the next step.
        """
        batch = self._manager.ready_obs_batch
        if isinstance(batch.obs, dict) and len(batch.env_id):
            # One tree per env, stacked as DI-engine stacks them (a tuple inside becomes an array per env).
            rows = arrays.split_rows(batch.obs, len(batch.env_id), copy=True)
            return self._tnp.stack([self._tnp.array(row) for row in rows])
        obs = arrays.map_tree(np.array, batch.obs)
        return self._tnp.array(obs) if isinstance(obs, dict) else obs

    def step(self, actions: Any) -> list[Any]:
        """Step every ready env, ``actions[k]`` going to ``ready_obs_id[k]``.

        Args:
            actions: A list with one action per ready env, or the actions stacked
                (a numpy array, or a treetensor array for dict actions).

        Returns:
            One ``treetensor.numpy`` array per stepped env, in env id order, with
            ``obs`` (the true final observation where ``done``), ``reward``,
            ``done``, ``truncated``, ``info`` (see :func:`identifier_keys`) and ``env_id``.

        Raises:
            ValueError: When the number of actions is not the number of ready envs.
        """
        env_ids = self._manager.ready_obs_id
        per_env = _per_env_actions(actions, self._tree_class)
        if len(per_env) != len(env_ids):
            raise ValueError(
                f"{type(self).__name__}(env_num={self._manager.env_num}): step() takes one action per ready env, "
                f"in ready_obs_id order: expected {len(env_ids)} for envs {env_ids}, got {len(per_env)}"
            )
        timesteps = self._manager.step(dict(zip(env_ids, per_env, strict=True)))
        return [treetensor_timestep(self._tnp, env_id, timestep) for env_id, timestep in timesteps.items()]

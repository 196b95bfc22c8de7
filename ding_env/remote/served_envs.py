"""The envs a server hosts: N envs in worker processes, answering the requests of ``messages.REQUESTS``.

They run in a :class:`~ding_env.env_manager.SyncSubprocessEnvManager` (shared-memory workers,
crash isolation, the manager's timeouts), driven through its public API. The client decides when
an env restarts (``reset_on_done``), so the manager here never auto-resets on its own.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np

from ding_env import BaseEnv
from ding_env.checker.di_engine_mode import default_cfg, requires_cfg
from ding_env.config import deep_merge_dicts
from ding_env.env_manager import SyncSubprocessEnvManager, arrays
from ding_env.env_manager.status import CALLABLE, MISSING
from ding_env.errors import DingEnvError, EnvError

# Settings the served manager needs whatever the server's config says. Results are copies (copy_on_get)
# because replies send their arrays zero-copy: a view of the workers' buffers could change before it is sent.
SERVED_SETTINGS = {"auto_reset": False, "step_error": "raise", "episode_num": float("inf"), "copy_on_get": True}


class ServedEnvs:
    """The envs of one server; every method answers the request of the same name with a reply body.

    Args:
        env_fns: One constructor per env.
        manager_cfg: Settings of the worker manager (``step_timeout``, ``context``, ``num_workers``, ...).
    """

    def __init__(self, env_fns: list[Callable[[], BaseEnv]], manager_cfg: Mapping | None = None) -> None:
        cfg = {**(manager_cfg or {}), **SERVED_SETTINGS}
        self.env_num = len(env_fns)
        self._manager = SyncSubprocessEnvManager(env_fns, cfg)
        self._reset_params: dict[int, dict] = {}
        self._launched = False

    def hello(self) -> dict:
        """What a client learns on connecting."""
        return {"env_num": self.env_num}

    def launch(self) -> dict:
        """The envs' spaces (workers start at the first reset)."""
        manager = self._manager
        return {"spaces": [manager.observation_space, manager.action_space, manager.reward_space]}

    def seed(self, env_id: int, seed: int, dynamic_seed: bool | None) -> dict:
        """Seed one env; it takes effect at its next reset."""
        self._manager.seed({env_id: seed}, dynamic_seed)
        return {}

    def set_reset_param(self, env_id: int, param: dict) -> dict:
        """Keep ``param`` as the ``env.reset`` kwargs of one env."""
        self._check_ids([env_id])
        self._reset_params[env_id] = param
        return {}

    def reset(self, env_ids: list[int]) -> dict:
        """Reset ``env_ids``: the ids now ready and the errors of those that are not."""
        self._check_ids(env_ids)
        try:
            self._reset(env_ids)
        except DingEnvError as error:
            ready = set(self._manager.ready_obs_id) if self._launched else set()
            return {"ready": [env_id for env_id in env_ids if env_id in ready], "errors": [error]}
        return {"ready": list(env_ids), "errors": []}

    def step(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray) -> dict:
        """Step ``env_ids``; restart at once each env whose episode ends where ``reset_on_done``."""
        env_ids = env_ids.astype(np.int64)
        errors: dict[int, DingEnvError] = {}
        try:
            batch = self._manager.step_batch(env_ids, actions)
        except DingEnvError as error:  # an env raised, or a worker died or hung: the others' results are on it
            if getattr(error, "results", None) is None:
                raise  # refused before any env stepped
            batch = error.results
            rows = {env_id: row for row, env_id in enumerate(batch.env_id.tolist())}
            errors = {rows[env_id]: env_error for env_id, env_error in error.errors.items()}
        restart = {int(env_ids[row]): row for row in np.flatnonzero(batch.done & reset_on_done) if row not in errors}
        if restart:
            try:
                self._reset(list(restart))  # one reset for all: each worker resets its share at once
            except DingEnvError as reset_error:
                # Envs that are not ready failed; the error raised names the first of them (others' are lost).
                ready = set(self._manager.ready_obs_id)
                errors.update({row: reset_error for env_id, row in restart.items() if env_id not in ready})
        body = batch._asdict()
        body["info"] = dict(zip(batch.env_id.tolist(), batch.info, strict=True))  # errors name the env's info
        return {**body, "errors": errors, "reset_on_done": reset_on_done}

    def ready_obs(self, env_ids: np.ndarray) -> dict:
        """The ready observations of ``env_ids``, stacked."""
        ready = self._manager.ready_obs_batch
        rows = np.searchsorted(ready.env_id, env_ids)
        if not np.array_equal(ready.env_id[np.minimum(rows, len(ready.env_id) - 1)], env_ids):
            raise ValueError(f"envs {sorted(set(env_ids.tolist()) - set(ready.env_id.tolist()))} are not ready")
        return {"obs": arrays.take(ready.obs, rows)}

    def call(self, env_ids: list[int], name: str, args: list | tuple, kwargs: dict) -> dict:
        """Call method ``name`` of each of ``env_ids``."""
        return {"values": self._manager.call_env_method(name, *args, env_ids=env_ids, **kwargs)}

    def get_attr(self, env_ids: list[int], name: str) -> dict:
        """Attribute ``name`` of each of ``env_ids``: ``MISSING`` where absent, ``CALLABLE`` where callable."""
        self._check_ids(env_ids)
        try:
            # The manager's attribute broadcast, past the manager's own attributes of the same name.
            values = type(self._manager).__getattr__(self._manager, name)
        except AttributeError:
            return {"values": [MISSING] * len(env_ids)}
        if callable(values):
            return {"values": [CALLABLE] * len(env_ids)}
        return {"values": [values[env_id] for env_id in env_ids]}

    def set_attr(self, env_ids: list[int], name: str, values: list) -> dict:
        """Set attribute ``name`` of each of ``env_ids`` to its value."""
        self._manager.set_env_attr(name, values, env_ids)
        return {}

    def close(self) -> dict:
        """Close every env and worker: the ``(env_id, error text)`` of envs that failed to close."""
        try:
            self._manager.close()
        except EnvError as error:
            return {"failures": [[error.env_id, error.message]]}
        return {"failures": []}

    def _reset(self, env_ids: list[int]) -> None:
        if not self._launched:
            # The first reset starts the workers and resets every env once.
            self._manager.launch({env_id: self._reset_params.get(env_id, {}) for env_id in range(self.env_num)})
            self._launched = True
            return
        self._manager.reset({env_id: self._reset_params.get(env_id, {}) for env_id in env_ids})

    def _check_ids(self, env_ids: list[int]) -> None:
        unknown = [env_id for env_id in env_ids if not 0 <= env_id < self.env_num]
        if unknown:
            raise ValueError(
                f"env ids {unknown[:10]} are not among this server's {self.env_num} envs (0..{self.env_num - 1})"
            )


def env_fns_for(
    env_fn_or_class: Callable[..., BaseEnv], cfg: Mapping | None, count: int
) -> list[Callable[[], BaseEnv]]:
    """``count`` env constructors for what ``resolve_target`` returned.

    A ``BaseEnv`` class gets its ``default_config()`` merged under ``cfg`` when it takes a cfg; each env
    gets a copy of its own.
    """
    if not isinstance(env_fn_or_class, type):
        return [env_fn_or_class] * count
    if cfg is not None or requires_cfg(env_fn_or_class):
        cfg = deep_merge_dicts(default_cfg(env_fn_or_class), cfg)
        return [partial(env_fn_or_class, copy.deepcopy(cfg)) for _ in range(count)]
    return [env_fn_or_class] * count

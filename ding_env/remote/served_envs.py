"""The envs a server hosts: N envs in its own process or in worker processes, answering ``headers.REQUESTS``.

A constructor that builds a batch env (``BaseBatchEnv``) gives the server one env id per sub-env,
consecutive, as it gives a local manager; a batch env is stepped with one call for all its ids.

The envs run in a :class:`~ding_env.env_manager.backends.workers.WorkerBackend` (shared-memory
workers, crash isolation, the manager's timeouts), or with ``num_workers=0`` in the server process
itself (an ``InProcessBackend``: fewer processes, as ``BaseEnvManager``), with the server's env ids
``0..N-1``; each request is one of the backend's methods. The client's manager owns the envs' state; a mirror
of it (an ``EnvLedger`` fed with every reset and step) answers the backend's two ledger calls
for envs lost with a worker, and the ids it lost travel back in the reply's ``lost`` field. The
server's ``EnvSetup`` holds the seeds and reset kwargs the client's requests bring, for its backend
to read as the client's backends read the manager's.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np

from ding_env import BaseEnv
from ding_env.checker.di_engine_mode import requires_cfg
from ding_env.config import deep_merge_dicts, default_cfg
from ding_env.env.batch_env import BaseBatchEnv
from ding_env.env_manager import arrays
from ding_env.env_manager.actions import ActionChecker
from ding_env.env_manager.backends.in_process import InProcessBackend
from ding_env.env_manager.backends.settings import EnvSetup, HostSettings, WorkerSettings
from ding_env.env_manager.backends.workers import WorkerBackend
from ding_env.env_manager.config import manager_config
from ding_env.env_manager.env_layout import EnvLayout, describe_entry
from ding_env.env_manager.ledger import EnvLedger
from ding_env.env_manager.shares import check_spaces_alike
from ding_env.env_manager.status import NEEDS_RESET, READY, STEPPING
from ding_env.errors import ConfigError, EnvError
from ding_env.remote.info_wire import InfoSender
from ding_env.remote.protocol import CLIENT_SETTINGS


class ServedEnvs:
    """The envs of one server; every public method answers the request of the same name with a reply body.

    Args:
        env_fns: One constructor per env, or per batch env (whose sub-envs each get an env id).
        server_cfg: Manager settings of the server's side (``context``, ``num_workers``, ``connect_timeout``, ...).
    """

    def __init__(self, env_fns: list[Callable[[], BaseEnv | BaseBatchEnv]], server_cfg: Mapping | None = None) -> None:
        # A constructor of a batch env gives as many env ids as it has sub-envs, as in the local managers.
        layout = EnvLayout(env_fns)
        self.env_num = layout.env_num
        self._env_fns = dict(enumerate(layout.entries))
        self._server_cfg = dict(server_cfg or {})
        # num_workers=0: the envs run in the server process itself (no crash isolation, no hard timeouts).
        self._in_server = self._server_cfg.get("num_workers") == 0
        if self._in_server:
            self._server_cfg["num_workers"] = None
        self._backend: WorkerBackend | InProcessBackend | None = None
        self._mirror: EnvLedger | None = None
        self._setup = EnvSetup()
        self._reset_on_done = np.ones(self.env_num, dtype=bool)  # each env's flag in its latest step
        self._lost: set[int] = set()
        self._infos = InfoSender(self.env_num)
        self._actions: ActionChecker | None = None  # the envs' action space's, from launch
        self._described: str | None = None  # what the envs are, for hello's reply

    def hello(self) -> dict:
        """What a client learns on connecting: the env count, and what the envs are (``env_layout.describe_entry``)."""
        if self._described is None:  # once: a client's connections again build no env to name them
            self._described = describe_entry(self._env_fns[0])
        return {"env_num": self.env_num, "env": self._described}

    def launch(self, settings: dict) -> dict:
        """Start the workers with the client's ``settings`` (see ``CLIENT_SETTINGS``); the envs' spaces."""
        unknown = sorted(set(settings) - set(CLIENT_SETTINGS))
        if unknown:
            raise ConfigError(f"launch settings {unknown} are not among {CLIENT_SETTINGS}")
        self.close()  # a client that launches again (after a failed launch) gets new workers
        cfg = manager_config({**self._server_cfg, **settings, "type": "subprocess"}, self.env_num)
        # The client decides each restart (reset_on_done) and counts episodes; the mirror only follows.
        self._mirror = EnvLedger(self.env_num, False, float("inf"), cfg.step_error)
        self._setup = EnvSetup()  # the client's seeds and reset kwargs, as its requests bring them
        self._infos = InfoSender(self.env_num)  # the client's receiver starts afresh at launch too
        if self._in_server:
            self._backend = InProcessBackend(self._env_fns, HostSettings.of(cfg), "served envs", self, self._setup)
        else:
            num_workers = cfg.num_workers or min(self.env_num, os.cpu_count() or 1)
            settings = WorkerSettings.of(cfg)
            self._backend = WorkerBackend(self._env_fns, settings, "served envs", self, self._setup, num_workers)
        try:
            spaces = self._backend.launch()
            try:
                check_spaces_alike([self._backend], [spaces])  # as a local manager refuses envs of other spaces
            except EnvError as error:
                for failure in self._backend.close():
                    error.add_note(f"closing the envs also failed: {failure.summary}")
                raise
            self._actions = ActionChecker(spaces[1], f"served envs ({self.env_num})")
            return {"spaces": list(spaces)}
        except BaseException:
            self._backend = None  # a backend whose launch failed has closed what it started
            raise

    def seed(self, env_id: int, seed: int | str, dynamic_seed: bool | None) -> dict:
        """Seed one env; it takes effect at its next reset (a seed of 2**64 or more comes as its digits)."""
        backend = self._running()
        self._setup.seeds[self._check([env_id])[0]] = (int(seed), dynamic_seed)
        backend.seed(env_id)
        return {}

    def reset(self, env_ids: list[int], params: dict[int, dict] | None = None) -> dict:
        """Reset ``env_ids`` (with new ``env.reset`` kwargs for those in ``params``, kept for their later resets).

        Returns the ids now ready and the errors of those that are not.
        """
        backend = self._running()
        self._check(env_ids)
        self._setup.reset_params.update(params or {})
        backend.cancel(env_ids)
        self._mirror.mark(env_ids, NEEDS_RESET)
        ready, errors = backend.reset(env_ids)
        self._mirror.mark(ready, READY)
        return {"ready": ready, "errors": errors, "obs": self._ready_obs_copy(ready)}

    def step(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray) -> dict:
        """Step ``env_ids``; restart at once each env whose episode ends where ``reset_on_done``.

        The result may hold rows for envs not asked for: idle envs of a worker that died in the step. Its
        ``env_id`` and ``reset_on_done`` are None when its rows are ``env_ids`` with their flags, as sent.
        """
        backend = self._running()
        ids = env_ids.tolist()
        # Increasing (so distinct) ids of this server, checked on Python ints: fewer calls than numpy's on a step.
        if ids and (ids[0] < 0 or ids[-1] >= self.env_num or any(map(int.__ge__, ids, ids[1:]))):
            self._check(ids)
            raise ValueError(f"step env ids must be increasing and distinct, got {ids[:20]}")
        env_ids = env_ids.astype(np.int64, copy=False)
        if not self._mirror.all_ready():
            not_ready = env_ids[self._mirror.status[env_ids] != READY]
            if len(not_ready):
                raise ValueError(f"envs {not_ready.tolist()[:20]} are not ready for an action: reset them first")
        # Checked as a local manager checks them: a client that is not a ding-env manager may send anything.
        actions = self._actions.check_batch(env_ids, actions)
        self._mirror.mark(env_ids, STEPPING)
        self._reset_on_done[env_ids] = reset_on_done
        if isinstance(actions, list):  # actions of a space without an array form, one value each
            actions = arrays.object_rows(actions)
        backend.send(env_ids, actions, reset_on_done)
        outcome = backend.collect(True)
        self._mirror.apply(outcome)
        # The rows' ids and flags are left to the request when they are its own (the usual step).
        as_sent = outcome.env_id.tolist() == ids and outcome.reset_on_done.tolist() == reset_on_done.tolist()
        # Copies of the arrays: the worker buffers change at the next step, and a reply's large arrays are sent
        # without copying. The flags travel as lists, made as the reply is encoded (before the next step).
        return {
            "env_id": None if as_sent else outcome.env_id,
            "reset_on_done": None if as_sent else outcome.reset_on_done,
            "obs": arrays.copy_tree(outcome.obs),
            "reward": np.array(outcome.reward),
            "done": outcome.done,
            "truncated": outcome.truncated,
            "errors": dict(outcome.errors),
            # The ready observations that are not the step's: of envs that ended (and restarted) in it.
            "restart_obs": self._ready_obs_copy(outcome.env_id[outcome.done].tolist())
            if np.count_nonzero(outcome.done)
            else None,
            **self._infos.fields(outcome.env_id, outcome.info),
        }

    def step_reply_unsent(self) -> None:
        """The last step's reply could not be encoded: the info schemas it announced never reached the client."""
        self._infos.retract()

    def _ready_obs_copy(self, env_ids: list[int]) -> Any:
        if not env_ids:
            return None
        return arrays.copy_tree(self._backend.ready_obs(np.array(env_ids, dtype=np.int64)))

    def ready_obs(self, env_ids: np.ndarray) -> dict:
        """The ready observations of ``env_ids``, stacked."""
        backend = self._running()
        env_ids = np.asarray(self._check(env_ids.tolist()), dtype=np.int64)
        not_ready = env_ids[self._mirror.status[env_ids] != READY]
        if len(not_ready):
            raise ValueError(f"envs {not_ready.tolist()[:20]} have no ready observation")
        return {"obs": arrays.copy_tree(backend.ready_obs(env_ids))}

    def call(self, env_ids: list[int], name: str, args: list | tuple, kwargs: dict) -> dict:
        """Call method ``name`` of each of ``env_ids``."""
        return {"values": self._running().call(self._check(env_ids), name, tuple(args), kwargs)}

    def get_attr(self, env_ids: list[int], name: str) -> dict:
        """Attribute ``name`` of each of ``env_ids``: ``MISSING`` where absent, ``CALLABLE`` where callable."""
        return {"values": self._running().get_attr(self._check(env_ids), name)}

    def set_attr(self, env_ids: list[int], name: str, values: list) -> dict:
        """Set attribute ``name`` of each of ``env_ids`` to its value."""
        self._running().set_attr(self._check(env_ids), name, values)
        return {}

    def close(self) -> dict:
        """Close every env and worker: an ``EnvError`` for each env that failed to close."""
        backend, self._backend = self._backend, None
        return {"failures": [] if backend is None else backend.close()}

    def take_lost(self) -> list[int]:
        """The envs that lost their episodes with a replaced worker since the last call."""
        lost, self._lost = sorted(self._lost), set()
        return lost

    # ---- the backend's ledger (backends.base.Ledger) ---------------------

    def claim_idle(self, env_ids: list[int]) -> dict[int, bool]:
        """Ready envs of a worker that died in a step: they get abnormal results in the step's reply."""
        idle = [env_id for env_id in env_ids if self._mirror.status[env_id] == READY]
        self._mirror.mark(idle, STEPPING)
        return {env_id: bool(self._reset_on_done[env_id]) for env_id in idle}

    def lose(self, env_ids: list[int]) -> None:
        """Envs whose worker was replaced: the client hears of them in the reply."""
        self._mirror.lose(env_ids)
        self._lost.update(env_ids)

    # ---- checks --------------------------------------------------------

    def _running(self) -> WorkerBackend | InProcessBackend:
        if self._backend is None:
            raise ConfigError("the envs are not launched: send launch first")
        return self._backend

    def _check(self, env_ids: list[int]) -> list[int]:
        unknown = [env_id for env_id in env_ids if not 0 <= env_id < self.env_num]
        if unknown:
            raise ValueError(
                f"env ids {unknown[:10]} are not among this server's {self.env_num} (0..{self.env_num - 1})"
            )
        if len(set(env_ids)) != len(env_ids):  # a reset of [0, 0] reset env 0 twice and replied with two rows
            twice = sorted({env_id for env_id in env_ids if env_ids.count(env_id) > 1})
            raise ValueError(f"env ids {twice[:10]} are named more than once in {env_ids[:20]}")
        return env_ids


def env_fns_for(
    env_fn_or_class: Callable[..., BaseEnv | BaseBatchEnv], cfg: Mapping | None, count: int
) -> list[Callable[[], BaseEnv | BaseBatchEnv]]:
    """``count`` env constructors for what ``resolve_target`` returned.

    A ``BaseEnv`` (or ``BaseBatchEnv``) class gets its ``default_config()`` merged under ``cfg`` when it
    takes a cfg; each env gets a copy of its own.
    """
    if not isinstance(env_fn_or_class, type):
        return [env_fn_or_class] * count
    if cfg is not None or requires_cfg(env_fn_or_class):
        cfg = deep_merge_dicts(default_cfg(env_fn_or_class), cfg)
        return [partial(env_fn_or_class, copy.deepcopy(cfg)) for _ in range(count)]
    return [env_fn_or_class] * count

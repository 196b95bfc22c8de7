"""``EnvSupervisor``: DI-engine's supervisor-style manager, as an adapter over ding_env's managers.

DI-engine's ``EnvSupervisor`` (``ding.envs.EnvSupervisor``) runs each env as a child process or
thread of ``ding.framework``'s ``Supervisor``; its calls take ``block=False``, and ``recv()`` then
returns one :class:`RecvPayload` per env result. This class keeps that interface and holds a
ding_env manager: ``ChildType.PROCESS`` envs run in worker processes (``SyncSubprocessEnvManager``),
``ChildType.THREAD`` envs in the calling process (``BaseEnvManager``). A call with ``block=False``
runs at once and queues its results for ``recv()``.

As in DI-engine, a failing step comes back as a done timestep with ``info.abnormal`` and its env is
reset (``step_error='abnormal'``); a reset that fails ``max_try`` times closes the supervisor and
raises; a launch may follow a close. Timesteps are ``treetensor.numpy`` arrays with ``obs``,
``reward``, ``done``, ``truncated``, ``info`` and ``env_id`` (DI-treetensor is needed, as for the
V2 managers); the spaces are those the envs declare.
"""

from __future__ import annotations

import collections
import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ding_env.env_manager import validation
from ding_env.env_manager.base_env_manager import create_env_manager
from ding_env.env_manager.config import MANAGER_CONFIG
from ding_env.env_manager.di_engine_calls import EnvState
from ding_env.env_manager.env_layout import EnvLayout
from ding_env.env_manager.treetensor_managers import treetensor_numpy, treetensor_timestep
from ding_env.errors import ClosedEnvError, ConfigError, DingEnvError, EnvStateError


class ChildType(enum.Enum):
    """Where the envs run: ``PROCESS`` (worker processes) or ``THREAD`` (the calling process)."""

    PROCESS = "process"
    THREAD = "thread"


class EnvRetryType(str, enum.Enum):
    """What a failed reset retries on: the same env (``RESET``) or a new one (``RENEW``)."""

    RESET = "reset"
    RENEW = "renew"


@dataclass
class RecvPayload:
    """One result for ``recv()``: env ``proc_id``'s ``method`` ('reset' or 'step') gave ``data``."""

    proc_id: int
    req_id: str | None = None
    method: str | None = None
    data: Any = None
    err: Exception | None = None
    extra: Any = None


# Manager config keys the supervisor sets itself, or that name the manager type.
_OWN_KEYS = {"type", "episode_num", "max_retry", "retry_type", "auto_reset", "step_timeout", "reset_timeout"}


def _child_type(type_: Any) -> ChildType:
    """``type_`` as a :class:`ChildType`: ours, DI-engine's ``ding.framework.supervisor.ChildType``, or its value."""
    value = getattr(type_, "value", type_)
    try:
        return ChildType(value)
    except ValueError:
        raise ConfigError(
            f"EnvSupervisor type_: expected ChildType.PROCESS or ChildType.THREAD, got {type_!r}"
        ) from None


class EnvSupervisor:
    """DI-engine's ``EnvSupervisor`` interface over a ding_env manager.

    Args:
        type_: ``ChildType.PROCESS`` or ``ChildType.THREAD`` (DI-engine's enum is accepted too).
        env_fn: One callable per env returning a fresh env.
        retry_type: 'reset' or 'renew' (``EnvRetryType``).
        max_try: Tries of a reset before it fails (``max_retry`` is DI-engine's older name); default 1.
        max_retry: Alias of ``max_try``.
        auto_reset: Reset an env when its episode ends.
        reset_timeout: Seconds a reset may take (None: no limit).
        step_timeout: Seconds a step may take (None: no limit).
        retry_waiting_time: Seconds between reset tries (None: the manager's default).
        episode_num: Episodes per env.
        shared_memory: Observations through shared memory (process children).
        copy_on_get: Results copied out of shared memory (process children).
        **kwargs: Other manager config keys (``ding_env.env_manager.config.MANAGER_CONFIG``).

    Raises:
        ConfigError: For an unknown key or child type.
    """

    def __init__(
        self,
        type_: Any = ChildType.PROCESS,
        env_fn: Sequence[Callable[[], Any]] | None = None,
        retry_type: str = EnvRetryType.RESET,
        max_try: int | None = None,
        max_retry: int | None = None,
        auto_reset: bool = True,
        reset_timeout: float | None = None,
        step_timeout: float | None = None,
        retry_waiting_time: float | None = None,
        episode_num: float = float("inf"),
        shared_memory: bool = True,
        copy_on_get: bool = True,
        **kwargs: Any,
    ) -> None:
        unknown = sorted(set(kwargs) - set(MANAGER_CONFIG))
        if unknown:
            raise ConfigError(f"EnvSupervisor: unknown keys {unknown}; valid extra keys: {sorted(MANAGER_CONFIG)}")
        self._type = _child_type(type_)
        self._env_fn = [] if env_fn is None else validation.check_env_fns(env_fn)
        self._env_num: int | None = None  # env ids (a batch env's env_fn gives several), counted on first use
        self._tnp = treetensor_numpy(type(self).__name__)
        cfg = {key: value for key, value in kwargs.items() if key not in _OWN_KEYS}
        cfg.update(
            type="subprocess" if self._type is ChildType.PROCESS else "base",
            episode_num=episode_num,
            max_retry=max_try or max_retry or 1,
            retry_type=EnvRetryType(retry_type).value,
            auto_reset=auto_reset,
            reset_timeout=reset_timeout,
            step_timeout=step_timeout,
            shared_memory=shared_memory,
            copy_on_get=copy_on_get,
            step_error="abnormal",  # as DI-engine's supervisor: a failed step is an abnormal timestep, then a reset
        )
        if retry_waiting_time is not None:
            cfg["retry_waiting_time"] = retry_waiting_time
        self._cfg = cfg
        self._manager: Any = None
        self._env_ref: Any = None
        self._seed: Any = None
        self._dynamic_seed: bool | None = None
        self._replay_path: Any = None
        self._payloads: collections.deque[RecvPayload] = collections.deque()
        self._ended: set[int] = set()  # envs whose episode ended and that wait for a reset

    # ---- lifecycle ---------------------------------------------------------

    def launch(self, reset_param: Mapping[int, dict] | None = None, block: bool = True) -> None:
        """Start the envs (seeded and recording as asked before) and reset them.

        Raises:
            EnvStateError: When already launched.
            EnvError: When an env fails to reset ``max_try`` times (the supervisor is closed again).
            EnvTimeoutError: When a reset passes ``reset_timeout`` (the supervisor is closed again).
        """
        if not self.closed:
            raise EnvStateError("EnvSupervisor is already launched; close() it before launching again")
        manager = create_env_manager(self._cfg, self._env_fn)
        if self._seed is not None:
            manager.seed(self._seed, self._dynamic_seed)
        if self._replay_path is not None:
            manager.enable_save_replay(self._replay_path)
        manager.launch(self._reset_params(reset_param))  # a failed launch has closed the manager
        self._manager = manager
        self._ended.clear()
        if not block:
            self._queue_ready_obs(range(self.env_num))

    def reset(self, reset_param: Mapping[int, dict] | Sequence[dict] | None = None, block: bool = True) -> None:
        """Reset the envs of ``reset_param`` (every env when None) with those kwargs.

        Raises:
            EnvError: When an env fails to reset ``max_try`` times (the supervisor is then closed).
        """
        manager = self._running()
        params = self._reset_params(reset_param) or {env_id: {} for env_id in range(self.env_num)}
        try:
            manager.reset(params)
        except DingEnvError:
            self.close()  # as DI-engine's supervisor shuts down after a reset that cannot succeed
            raise
        self._ended.difference_update(params)
        if not block:
            self._queue_ready_obs(params)

    def step(self, actions: Mapping[int, Any] | Sequence[Any], block: bool = True) -> list[Any] | None:
        """Step the envs of ``actions`` (``{env_id: action}``, or a list with one action per env id from 0).

        Returns:
            One ``treetensor.numpy`` timestep per stepped env (with ``block=False``, None: ``recv()``
            returns them one by one).

        Raises:
            ValueError: For empty actions.
        """
        manager = self._running()
        if not isinstance(actions, Mapping):
            actions = dict(enumerate(actions))
        if not actions:
            raise ValueError("EnvSupervisor.step: got no actions; give {env_id: action} for ready envs")
        results = manager.step(dict(actions))
        ready = set(manager.ready_obs_id)
        for env_id, timestep in results.items():
            if env_id in ready:
                self._ended.discard(env_id)  # mid-episode, or auto-reset into its next episode
            elif timestep.done:
                self._ended.add(env_id)
        timesteps = [treetensor_timestep(self._tnp, env_id, timestep) for env_id, timestep in results.items()]
        if block:
            return timesteps
        self._payloads.extend(RecvPayload(int(t.env_id), method="step", data=t) for t in timesteps)
        return None

    def recv(self, ignore_err: bool = False) -> RecvPayload:
        """The oldest result of a ``block=False`` call not received yet.

        Errors are raised by the call that met them, so no payload carries one (``ignore_err`` is DI-engine's).

        Raises:
            EnvStateError: When no result is waiting (nothing was started with ``block=False``).
        """
        if not self._payloads:
            raise EnvStateError("EnvSupervisor.recv: no result is waiting; call step() or reset() with block=False")
        return self._payloads.popleft()

    def close(self, timeout: float | None = None) -> None:
        """Close every env; safe to call twice. ``timeout`` is DI-engine's (closing never hangs here)."""
        manager, self._manager = self._manager, None
        self._payloads.clear()
        self._ended.clear()
        if manager is not None:
            manager.close()

    shutdown = close

    # ---- settings ----------------------------------------------------------

    def seed(self, seed: int | Sequence[int] | Mapping[int, int], dynamic_seed: bool | None = None) -> None:
        """Seeds applied at the next ``launch()`` (an int: env ``i`` gets ``seed + i``, as in DI-engine)."""
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seed = [int(seed) + env_id for env_id in range(self.env_num)]
        self._seed, self._dynamic_seed = seed, dynamic_seed

    def enable_save_replay(self, replay_path: str | Sequence[str]) -> None:
        """Record every env's episodes under ``replay_path`` (one path, or one per env) from the next launch."""
        self._replay_path = replay_path
        if self._manager is not None:
            self._manager.enable_save_replay(replay_path)

    # ---- state ---------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True until ``launch()`` and after ``close()`` (or a reset that could not succeed)."""
        return self._manager is None or self._manager.closed

    @property
    def env_num(self) -> int:
        """Number of envs (env ids: each sub-env of a batch env counts)."""
        if self._manager is not None:
            return self._manager.env_num
        if self._env_num is None:  # builds each env, lazily (as a manager does to count a batch env's sub-envs)
            self._env_num = EnvLayout(self._env_fn).env_num
        return self._env_num

    @property
    def env_states(self) -> dict[int, EnvState]:
        """``{env_id: EnvState}``: RUN in an episode, DONE once its episode ended (or all its episodes ran).

        As in DI-engine's supervisor, an env whose episode ended is DONE until it is reset; one that
        failed and waits for a reset is ERROR; every env is VOID while closed.
        """
        if self.closed:
            return dict.fromkeys(range(self.env_num), EnvState.VOID)
        states = {}
        for env_id, state in self._manager.env_states.items():
            if state == EnvState.NEED_RESET:
                state = EnvState.DONE if env_id in self._ended else EnvState.ERROR
            states[env_id] = state
        return states

    def env_state_done(self, env_id: int) -> bool:
        """True when env ``env_id`` is DONE (see ``env_states``)."""
        return self.env_states[env_id] == EnvState.DONE

    @property
    def done(self) -> bool:
        """True when every env is DONE."""
        return all(state == EnvState.DONE for state in self.env_states.values())

    @property
    def ready_obs_id(self) -> list[int]:
        """Ids of the envs in an episode, ready for an action."""
        return [env_id for env_id, state in self.env_states.items() if state == EnvState.RUN]

    @property
    def ready_obs(self) -> Any:
        """The ready envs' observations stacked in env id order (a treetensor array for dict observations)."""
        if self.closed:
            return np.array([])
        ready = self._manager.ready_obs
        obs = [ready[env_id] for env_id in sorted(ready)]
        if not obs:
            return np.array([])
        if isinstance(obs[0], Mapping):
            return self._tnp.stack([self._tnp.array(dict(item)) for item in obs])
        return np.stack(obs)

    @property
    def method_name_list(self) -> list[str]:
        """Env methods DI-engine's supervisor calls on its children."""
        return ["reset", "step", "seed", "close", "enable_save_replay"]

    @property
    def env_ref(self) -> Any:
        """An env built from the first env function and never reset, to read what every env shares."""
        if self._env_ref is None:
            self._env_ref = self._env_fn[0]()
        return self._env_ref

    @property
    def observation_space(self) -> Any:
        """The observation space the envs declare."""
        return self.env_ref.observation_space

    @property
    def action_space(self) -> Any:
        """The action space the envs declare."""
        return self.env_ref.action_space

    @property
    def reward_space(self) -> Any:
        """The reward space the envs declare."""
        return self.env_ref.reward_space

    def __getattr__(self, name: str) -> Any:
        """Env attributes, read from every env: ``supervisor.foo`` is ``[env.foo, ...]`` (after ``launch()``)."""
        if name.startswith("_"):
            raise AttributeError(name)
        if self.closed:
            if hasattr(self.env_ref, name):
                raise EnvStateError(f"EnvSupervisor is not launched; env attribute {name!r} needs launch()")
            raise AttributeError(f"EnvSupervisor has no attribute {name!r}, and its envs have none")
        return getattr(self._manager, name)

    # ---- helpers ---------------------------------------------------------------

    def _running(self) -> Any:
        if self.closed:
            raise ClosedEnvError("EnvSupervisor is closed; call launch() first")
        return self._manager

    def _reset_params(self, reset_param: Any) -> dict[int, dict] | None:
        if reset_param is None:
            return None
        if not isinstance(reset_param, Mapping):
            reset_param = dict(enumerate(reset_param))
        return {env_id: dict(param or {}) for env_id, param in reset_param.items()}

    def _queue_ready_obs(self, env_ids: Any) -> None:
        ready = self._manager.ready_obs
        self._payloads.extend(
            RecvPayload(env_id, method="reset", data=ready[env_id]) for env_id in env_ids if env_id in ready
        )

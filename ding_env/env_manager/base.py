"""``BaseEnvManager``: runs every env in the calling process; the reference semantics.

All managers share this class's state machine and bookkeeping (seeds, reset
params, episode counts, auto-reset, validation) and differ only in the
backend hooks (``_backend_*``) that create, reset, step and close the envs.

A typical loop::

    manager = BaseEnvManager([lambda: DingEnvWrapper(cfg={'env_id': 'CartPole-v1'})] * 4, {})
    manager.seed(0)
    manager.launch()
    while not manager.done:
        actions = {env_id: policy(obs) for env_id, obs in manager.ready_obs.items()}
        timesteps = manager.step(actions)
    manager.close()
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from easydict import EasyDict

from ding_env.base_env import BaseEnv
from ding_env.env_manager import arrays, validation
from ding_env.env_manager.actions import ActionChecker
from ding_env.env_manager.batch import ObsBatch, StepOutcome, TimestepBatch, WorkerView
from ding_env.env_manager.config import MANAGER_CONFIG, manager_config
from ding_env.env_manager.di_engine_state import DIEngineState
from ding_env.env_manager.failures import is_reset_error
from ding_env.env_manager.in_process import InProcessBackend
from ding_env.env_manager.per_env_calls import PerEnvCalls
from ding_env.env_manager.status import (
    CALLABLE,
    FINISHED,
    MISSING,
    NEEDS_RESET,
    READY,
    STEPPING,
    EnvStatus,
)
from ding_env.errors import ClosedEnvError, DingEnvError, EnvStateError
from ding_env.seeding import derive_seeds
from ding_env.summary import describe_value
from ding_env.timestep import BaseEnvTimestep


class BaseEnvManager(PerEnvCalls, DIEngineState, InProcessBackend):
    """Drives ``len(env_fn)`` envs through one dict API and one batched API.

    Args:
        env_fn: One callable per env returning a fresh ``BaseEnv``.
        cfg: Manager settings; see ``ding_env.env_manager.config.MANAGER_CONFIG``.

    Raises:
        ConfigError: For an unknown key or an invalid value in ``cfg``.
        ValueError: For an empty ``env_fn``.
    """

    manager_type = "base"
    # Whether the backend's batched results are views of buffers it reuses (copied for the caller
    # unless copy_on_get=False).
    _backend_views = False

    def __init__(self, env_fn: Sequence[Callable[[], BaseEnv]], cfg: dict | None = None) -> None:
        env_fn = list(env_fn)
        if not env_fn:
            raise ValueError("env_fn must hold at least one env constructor, got an empty list")
        for index, fn in enumerate(env_fn):
            if not callable(fn):
                raise TypeError(f"env_fn[{index}] must be callable, got {type(fn).__name__}")
        self._env_fn = env_fn
        self._env_num = len(env_fn)
        self._cfg = manager_config(cfg, self._env_num)
        self._launched = False
        self._closed = False
        self._env_seeds: list[tuple[int, bool | None] | None] = [None] * self._env_num
        self._replay_paths: list[str] | None = None  # asked for before launch, applied by it
        self._reset_params: dict[int, dict] = {}  # {env_id: env.reset kwargs}, for every later reset
        self._episode_count = np.zeros(self._env_num, dtype=np.int64)
        self._status = np.full(self._env_num, EnvStatus.NEEDS_RESET, dtype=np.int8)
        self._spaces: tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space] | None = None
        self._validated_ids: np.ndarray | None = None
        self._ready: list[Any] = []
        self._always_reset = np.ones(self._env_num, dtype=bool)
        self._always_reset.setflags(write=False)
        # The ids of every env, returned by _ready_ids when all are ready, so _rows_of knows them at once.
        self._every_id = np.arange(self._env_num, dtype=np.int64)
        self._every_id.setflags(write=False)
        self._every_id_list = self._every_id.tolist()
        self._every_row = slice(0, self._env_num)
        self._every_ready_status = np.full(self._env_num, READY, dtype=np.int8).tobytes()
        self._every_finished_status = np.full(self._env_num, FINISHED, dtype=np.int8).tobytes()
        # Episodes restart on done and never run out: the common case the step path takes in few calls.
        self._endless = bool(self._cfg.auto_reset) and self._cfg.episode_num == math.inf

    @classmethod
    def default_config(cls) -> EasyDict:
        """The manager config defaults, with ``type`` set to this manager."""
        cfg = EasyDict(MANAGER_CONFIG)
        cfg.type = cls.manager_type
        return cfg

    # ---- lifecycle -----------------------------------------------------

    def launch(self, reset_param: Mapping[int, dict] | None = None) -> None:
        """Create the envs (and workers) and reset them all.

        Args:
            reset_param: Optional ``{env_id: kwargs for env.reset}``.

        Raises:
            EnvStateError: If already launched.
            EnvError: When an env fails to reset (after ``max_retry`` tries): the envs and workers built
                so far are closed, and ``launch()`` may be called again.
        """
        self._check_open()
        if self._launched:
            raise EnvStateError(f"{self._name} is already launched; call reset() to start over")
        if reset_param is not None:
            validation.check_reset_param(self._name, self._env_num, reset_param)  # before any env is built
        self._backend_launch()
        self._launched = True
        try:
            for env_id, seed in enumerate(self._env_seeds):
                if seed is not None:
                    self._backend_seed(env_id, *seed)
            if self._replay_paths is not None:
                self._enable_replays(self._replay_paths)
            self.reset(reset_param)
        except BaseException as error:
            # As in DI-engine, a launch that fails closes what it built, and launch() may be called again.
            self._launched = False
            try:
                self._backend_close()
            except DingEnvError as close_error:
                error.add_note(f"closing the envs after the failed launch also failed: {close_error}")
            raise

    def seed(self, seed: int | Sequence[int] | Mapping[int, int], dynamic_seed: bool | None = None) -> None:
        """Seed the envs; takes effect at each env's next reset.

        Args:
            seed: An int (env ``i`` gets ``seed + i``), one seed per env, or ``{env_id: seed}``.
            dynamic_seed: Passed to every ``env.seed``; None keeps the env's default (dynamic).
        """
        self._check_open()
        dynamic_seed = validation.check_dynamic_seed(self._name, dynamic_seed)
        if isinstance(seed, Mapping):
            pairs = [(self._check_env_id(env_id), value) for env_id, value in seed.items()]
        elif isinstance(seed, (list, tuple, np.ndarray)):
            if len(seed) != self._env_num:
                raise ValueError(f"{self._name}: got {len(seed)} seeds for {self._env_num} envs")
            pairs = list(enumerate(seed))
        else:
            pairs = list(enumerate(derive_seeds(validation.check_seed(self._name, seed, "seed"), self._env_num)))
        checked = [
            (env_id, validation.check_seed(self._name, value, f"seed of env {env_id}")) for env_id, value in pairs
        ]
        for env_id, value in checked:
            self._env_seeds[env_id] = (value, dynamic_seed)
            if self._launched:
                self._backend_seed(env_id, value, dynamic_seed)

    def reset(self, reset_param: Mapping[int, dict] | None = None) -> None:
        """Reset envs and make them ready.

        Args:
            reset_param: None resets every env and the episode counters;
                ``{env_id: kwargs}`` resets just those envs with ``env.reset(**kwargs)``
                (the kwargs are kept for their later auto-resets).
        """
        self._check_running()
        if reset_param is None:
            env_ids = list(range(self._env_num))
            self._episode_count[:] = 0
            params = {}
        else:
            params = validation.check_reset_param(self._name, self._env_num, reset_param)
            env_ids = list(params)
        previous = {env_id: self._reset_params.get(env_id, {}) for env_id in params}
        for env_id, param in params.items():
            self._set_reset_param(env_id, param)
        self._validated_ids = None
        self._backend_cancel(env_ids)
        self._status[env_ids] = NEEDS_RESET
        try:
            self._backend_reset(env_ids)  # marks each env READY as its reset completes
        except DingEnvError:
            # Params of a reset that failed do not stick: a bad kwarg must not fail every later reset().
            for env_id, param in previous.items():
                if self._status[env_id] != READY:
                    self._set_reset_param(env_id, param)
            raise

    def _set_reset_param(self, env_id: int, param: dict) -> None:
        self._reset_params[env_id] = param
        self._backend_set_reset_param(env_id, param)

    def close(self) -> None:
        """Close every env (and worker). Safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        if self._launched:
            self._backend_close()

    def __enter__(self) -> BaseEnvManager:
        return self

    def __exit__(self, exc_type: type | None, exc: BaseException | None, tb: object) -> None:
        try:
            self.close()
        except DingEnvError as close_error:
            if exc is None:
                raise
            # Keep the error that ended the block; the close failure is secondary.
            warnings.warn(f"{self._name}: closing after {exc_type.__name__} also failed: {close_error}", stacklevel=2)

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            self.close()

    # ---- dict API ------------------------------------------------------

    @property
    def ready_obs(self) -> dict[int, Any]:
        """``{env_id: obs}`` for the envs that can take an action now."""
        self._check_running()
        self._backend_poll()
        env_ids = self._ready_ids()
        return dict(zip(env_ids.tolist(), self._backend_ready_obs_rows(env_ids), strict=True))

    @property
    def ready_obs_id(self) -> list[int]:
        """Ids of the envs that can take an action now."""
        self._check_running()
        self._backend_poll()
        return self._ready_ids().tolist()

    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """Step the envs named in ``actions``.

        Args:
            actions: ``{env_id: action}`` for envs in ``ready_obs``.

        Returns:
            ``{env_id: timestep}``. The synchronous managers return every env
            in ``actions``; the async one may return fewer (and results of
            envs stepped earlier).

        Raises:
            ValueError: For an env id that is unknown or not ready.
            EnvError: If an env raised and ``step_error='raise'``.
        """
        self._check_running()
        if not isinstance(actions, Mapping):
            raise TypeError(
                f"{self._name}: step() takes {{env_id: action}} for envs in ready_obs, got "
                f"{type(actions).__name__} {describe_value(actions)}; "
                "stacked actions go to step_batch(env_ids, actions)"
            )
        env_ids = self._env_ids_of(actions)
        self._check_ready(env_ids)
        checked, batched = self._action_checker().check_mapping(env_ids, actions)
        outcome = self._run_step(env_ids, checked, batched=batched)
        env_id_list = outcome.env_id.tolist()
        obs = outcome.obs
        if not outcome.obs_is_list:
            obs = arrays.split_rows(obs, len(env_id_list), self._cfg.copy_on_get)
        rewards, done, infos = list(outcome.reward.copy()), outcome.done.tolist(), outcome.info
        timesteps = {}
        for row, env_id in enumerate(env_id_list):
            timesteps[env_id] = BaseEnvTimestep(obs[row], rewards[row], done[row], infos[row])
        self._raise_step_errors(outcome, timesteps)
        return timesteps

    # ---- batched API ---------------------------------------------------

    @property
    def ready_obs_batch(self) -> ObsBatch:
        """Stacked observations of the ready envs, ids increasing."""
        self._check_running()
        self._backend_poll()
        env_ids = self._ready_ids()
        if env_ids is not self._every_id:  # read-only already
            env_ids.setflags(write=False)
        # Remembered so step_batch(ready.env_id, ...) can skip re-validating the ids.
        self._validated_ids = env_ids
        obs = self._backend_ready_obs_batch(env_ids)
        if self._backend_views and self._cfg.copy_on_get:
            obs = arrays.copy_tree(obs)
        return ObsBatch(env_ids, obs)

    def step_batch(self, env_id: np.ndarray | Sequence[int], action: Any) -> TimestepBatch:
        """Step the envs ``env_id`` with stacked ``action`` (row ``k`` for ``env_id[k]``).

        Returns:
            A :class:`TimestepBatch` whose arrays belong to the caller; with ``copy_on_get=False``
            they may be views, valid until the next call to the manager.
        """
        self._check_running()
        if env_id is self._validated_ids:
            env_ids = env_id
        else:
            env_ids = self._check_env_id_array(env_id)
            self._check_ready(env_ids)
        action = self._action_checker().check_batch(env_ids, action)
        outcome = self._run_step(env_ids, action, batched=True)
        if outcome.obs_is_list:
            obs, reward, done, truncated = arrays.stack(outcome.obs), outcome.reward, outcome.done, outcome.truncated
        elif self._cfg.copy_on_get:
            obs, reward = arrays.copy_tree(outcome.obs), outcome.reward.copy()
            done, truncated = outcome.done.copy(), outcome.truncated.copy()
        else:
            obs, reward, done, truncated = outcome.obs, outcome.reward, outcome.done, outcome.truncated
        batch = TimestepBatch(outcome.env_id, obs, reward, done, truncated, outcome.info)
        if outcome.errors:
            self._raise_step_errors(outcome, batch)
        return batch

    # ---- state ---------------------------------------------------------

    @property
    def done(self) -> bool:
        """True once every env has run ``episode_num`` episodes."""
        return self._status.tobytes() == self._every_finished_status  # a tenth of np.all's cost

    @property
    def env_num(self) -> int:
        """Number of envs."""
        return self._env_num

    @property
    def closed(self) -> bool:
        """True until ``launch()`` and after ``close()`` (DI-engine runs ``if manager.closed: manager.launch()``)."""
        return self._closed or not self._launched

    @property
    def active_env(self) -> list[int]:
        """Ids of the envs in an episode: ready for an action, or stepping (async)."""
        return np.flatnonzero((self._status == READY) | (self._status == STEPPING)).tolist()

    @property
    def workers(self) -> list[WorkerView]:
        """Diagnostic: the worker processes hosting envs, in order (none when every env is in this process).

        For tests and debugging (pin, kill or watch a worker); the managers' one window on their backends.
        """
        return self._backend_workers()

    @property
    def env_state(self) -> dict[int, EnvStatus]:
        """``{env_id: EnvStatus}``."""
        return {env_id: EnvStatus(status) for env_id, status in enumerate(self._status)}

    @property
    def observation_space(self) -> gym.spaces.Space:
        """The envs' observation space."""
        return self._env_spaces()[0]

    @property
    def action_space(self) -> gym.spaces.Space:
        """The envs' action space."""
        return self._env_spaces()[1]

    @property
    def reward_space(self) -> gym.spaces.Space:
        """The envs' reward space."""
        return self._env_spaces()[2]

    @property
    def method_name_list(self) -> list[str]:
        """Env methods that may be called on every env through the manager."""
        return ["reset", "step", "seed", "close", "enable_save_replay", "random_action"]

    def enable_save_replay(self, replay_path: str | Sequence[str]) -> None:
        """Ask every env to record its episodes under ``replay_path`` (one path, or one per env).

        Before ``launch`` (as DI-engine's evaluators call it), the envs record from their first episode on.
        """
        paths = [replay_path] * self._env_num if isinstance(replay_path, str) else list(replay_path)
        if len(paths) != self._env_num:
            raise ValueError(f"{self._name}: got {len(paths)} replay paths for {self._env_num} envs")
        self._check_open()
        if self._launched:
            self._enable_replays(paths)
        else:
            self._replay_paths = paths

    def _enable_replays(self, paths: list[str]) -> None:
        for env_id, path in enumerate(paths):
            self._backend_call(env_id, "enable_save_replay", (path,), {})

    def set_env_attr(self, name: str, values: Any, env_ids: Sequence[int] | None = None) -> None:
        """Set attribute ``name`` of envs ``env_ids`` (default: every env), as Gymnasium's ``set_attr``.

        Args:
            name: The env attribute (not a private one).
            values: A list or tuple with one value per env of ``env_ids``, or one value for all of them.
            env_ids: The envs to change; None for every env.

        Raises:
            ValueError: For an unknown env id, a private name, or a list of the wrong length.
        """
        self._check_running()
        env_ids = self._env_id_list(env_ids)
        if not isinstance(name, str) or not name or name.startswith("_"):
            raise ValueError(f"{self._name}: set_env_attr takes a public attribute name, got {name!r}")
        if isinstance(values, (list, tuple)):
            if len(values) != len(env_ids):
                raise ValueError(
                    f"{self._name}: set_env_attr({name!r}) got {len(values)} values for {len(env_ids)} envs {env_ids}"
                )
            values = list(values)
        else:
            values = [values] * len(env_ids)
        self._backend_set_attr(env_ids, name, values)

    def call_env_method(self, name: str, *args: Any, env_ids: Sequence[int] | None = None, **kwargs: Any) -> list:
        """Call method ``name`` of envs ``env_ids`` (default: every env); one result per env, in order.

        Raises:
            ValueError: For an unknown env id.
            EnvError: When an env's method raised (named by its env id).
        """
        self._check_running()
        return self._backend_call_each(self._env_id_list(env_ids), name, args, kwargs)

    def _env_id_list(self, env_ids: Sequence[int] | None) -> list[int]:
        if env_ids is None:
            return list(range(self._env_num))
        return self._check_env_id_array(env_ids).tolist()

    def random_action(self) -> dict[int, Any]:
        """A random action for every ready env, drawn by the env itself."""
        env_ids = self.ready_obs_id
        return dict(zip(env_ids, self._backend_call_each(env_ids, "random_action", (), {}), strict=True))

    def __getattr__(self, name: str) -> Any:
        """Broadcast env attributes: ``manager.foo`` is ``[env.foo for env in envs]``.

        A callable attribute gives a function calling it on every env.
        """
        if name.startswith("_"):
            raise AttributeError(name)
        if self.__dict__.get("_closed"):
            raise ClosedEnvError(f"{self._name} is closed; attribute {name!r} is not available")
        if not self.__dict__.get("_launched"):
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r} (env attributes need launch())")
        every = self._every_id_list
        values = self._backend_getattr_each(every, name)
        missing = [env_id for env_id, value in zip(every, values, strict=True) if value is MISSING]
        if missing:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}, and envs {missing} have none")
        if all(value is CALLABLE for value in values):

            def broadcast(*args: Any, **kwargs: Any) -> list[Any]:
                return self._backend_call_each(every, name, args, kwargs)

            return broadcast
        return values

    # ---- shared step logic ---------------------------------------------

    def _run_step(self, env_ids: np.ndarray, actions: Any, batched: bool) -> StepOutcome:
        self._validated_ids = None
        reset_on_done = self._reset_on_done_of(env_ids)
        rows = self._rows_of(env_ids)
        self._set_status(rows, STEPPING)
        outcome = self._backend_step(env_ids, rows, actions, reset_on_done, batched)
        self._settle(outcome)
        return outcome

    def _reset_on_done_of(self, env_ids: np.ndarray) -> np.ndarray:
        """Whether each of ``env_ids`` restarts at once if its episode ends now."""
        if self._endless:
            return self._always_reset_of(len(env_ids))
        return self._cfg.auto_reset & (self._episode_count[env_ids] + 1 < self._cfg.episode_num)

    def _always_reset_of(self, count: int) -> np.ndarray:
        """All-True auto-reset flags for ``count`` envs.

        For every env this is the same array each time, so backends can tell the flags did not change.
        """
        return self._always_reset if count == self._env_num else self._always_reset[:count]

    def _set_status(self, rows: slice | np.ndarray, status: int) -> None:
        """Set the status of ``rows`` (``fill`` costs a third of a slice assignment for every env)."""
        if rows is self._every_row:
            self._status.fill(status)
        else:
            self._status[rows] = status

    def _settle(self, outcome: StepOutcome) -> None:
        """Update statuses and episode counts after ``outcome``."""
        env_ids = outcome.env_id
        if not outcome.errors:
            if np.count_nonzero(outcome.done):  # cheaper than .any() on a few envs
                if not self._endless:
                    self._settle_ended(outcome)
                    return
                # Every ended episode restarted at once: the envs stay ready, and only the counts change.
                self._episode_count[env_ids] += outcome.done
            self._set_status(outcome.rows, READY)
            return
        self._settle_ended(outcome)

    def _settle_ended(self, outcome: StepOutcome) -> None:
        """``_settle`` for steps with errors, or with ended episodes that may not restart.

        A failed step (``step_error='raise'``) does not end an episode; a failed auto-reset
        follows an episode that did end. Both leave the env needing a reset.
        """
        env_ids = outcome.env_id
        ended = outcome.done.copy()
        needs_reset = np.zeros(len(env_ids), dtype=bool)
        for row, error in outcome.errors.items():
            if is_reset_error(error):
                needs_reset[row] = True
            elif self._cfg.step_error == "raise":
                ended[row], needs_reset[row] = False, True
            # With 'abnormal', a failed step is a done step like any other (its env renewed and reset when due).
        self._episode_count[env_ids[ended]] += 1
        status = np.where(ended & ~outcome.reset_on_done, NEEDS_RESET, READY).astype(np.int8)
        status[ended & (self._episode_count[env_ids] >= self._cfg.episode_num)] = FINISHED
        status[needs_reset] = NEEDS_RESET
        self._status[env_ids] = status

    def _raise_step_errors(self, outcome: StepOutcome, results: Any) -> None:
        """Raise the step's first error that must be raised, with every env's result and every error on it.

        Step errors are raised with ``step_error='raise'``; a failed auto-reset always is (the env
        cannot continue without a reset), after the step's results are kept.
        """
        if not outcome.errors:
            return
        raised = [
            error
            for _, error in sorted(outcome.errors.items())
            if self._cfg.step_error == "raise" or is_reset_error(error)
        ]
        if raised:
            error = raised[0]
            error.results = results
            error.errors = {int(outcome.env_id[row]): other for row, other in sorted(outcome.errors.items())}
            raise error

    def _action_checker(self) -> ActionChecker:
        if self.__dict__.get("_actions") is None:
            self._actions = ActionChecker(self.action_space, self._name)
        return self._actions

    def _ready_ids(self) -> np.ndarray:
        if self._status.tobytes() == self._every_ready_status:  # a third of the cost of the search below
            return self._every_id
        env_ids = (self._status == READY).nonzero()[0]
        return env_ids if env_ids.dtype == np.int64 else env_ids.astype(np.int64)

    def _rows_of(self, env_ids: np.ndarray) -> slice | np.ndarray:
        """``arrays.rows_of(env_ids)``, at no cost when ``env_ids`` is every env from ``_ready_ids``.

        Every env in order gives ``self._every_row`` itself.
        """
        if env_ids is self._every_id:
            return self._every_row
        rows = arrays.rows_of(env_ids)
        # Every env in order is always this one slice object, so backends can test it with `is`.
        return self._every_row if isinstance(rows, slice) and rows == self._every_row else rows

    def _env_spaces(self) -> tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space]:
        self._check_open()
        if self._spaces is None:
            self._spaces = self._backend_spaces()
        return self._spaces

    # ---- checks --------------------------------------------------------

    @property
    def _name(self) -> str:
        return f"{type(self).__name__}(env_num={self._env_num})"

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedEnvError(f"{self._name} is closed")

    def _check_running(self) -> None:
        self._check_open()
        if not self._launched:
            raise EnvStateError(f"{self._name} is not launched; call launch() first")

    def _check_env_id(self, env_id: Any) -> int:
        return validation.check_env_id(self._name, self._env_num, env_id)

    def _env_ids_of(self, actions: Mapping[int, Any]) -> np.ndarray:
        """The keys of ``actions`` as checked env ids (plain in-range ints take one pass)."""
        keys = list(actions)
        if keys and all(type(key) is int for key in keys):  # not bool, float or numpy keys, which equal ints
            if keys == self._every_id_list:  # every env in order: the ids _rows_of knows at once
                return self._every_id
            if min(keys) >= 0 and max(keys) < self._env_num:
                return np.array(keys, dtype=np.int64)
        return np.array([self._check_env_id(key) for key in keys], dtype=np.int64)

    def _check_env_id_array(self, env_id: Any) -> np.ndarray:
        return validation.parse_env_ids(self._name, self._env_num, env_id)

    def _check_ready(self, env_ids: np.ndarray) -> None:
        if env_ids is self._every_id and self._status.tobytes() == self._every_ready_status:
            return
        not_ready = env_ids[self._status[env_ids] != READY]
        if len(not_ready):
            env_id = int(not_ready[0])
            status = EnvStatus(self._status[env_id]).name
            raise ValueError(
                f"{self._name}: env {env_id} is not ready for an action (status {status}); "
                f"ready envs: {self._ready_ids().tolist()}"
            )

"""``EnvManager``: the state machine every env manager shares, over the backends that host its envs.

It owns, once for every manager type, what the envs' results mean: statuses and episode counts
(an ``EnvLedger``), seeds, reset params, env-id and action checks, auto-reset, the dict API
(``ready_obs`` / ``step``) and the batched API (``ready_obs_batch`` / ``step_batch``). Where the
envs run is its backends' business (``backends/``): the thin classes of ``base_env_manager`` and
``subprocess_env_manager`` only choose them.

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

import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from easydict import EasyDict

from ding_env.env.base_env import BaseEnv
from ding_env.env.timestep import BaseEnvTimestep
from ding_env.env_manager import validation
from ding_env.env_manager.actions import ActionChecker
from ding_env.env_manager.backends.base import Backend
from ding_env.env_manager.backends.settings import EnvSetup
from ding_env.env_manager.config import MANAGER_CONFIG, manager_config
from ding_env.env_manager.di_engine_calls import DIEngineCalls
from ding_env.env_manager.env_calls import EnvCalls
from ding_env.env_manager.env_layout import EnvLayout
from ding_env.env_manager.failures import first_failure, raise_close_failures, raise_step_errors
from ding_env.env_manager.ledger import EnvLedger
from ding_env.env_manager.manager_state import ManagerState
from ding_env.env_manager.outcome import ObsBatch, TimestepBatch, empty_batch, owned, timesteps_of
from ding_env.env_manager.shares import Shares
from ding_env.env_manager.status import NEEDS_RESET, READY, STEPPING
from ding_env.errors import ClosedEnvError, DingEnvError, EnvStateError
from ding_env.summary import describe_typed


class EnvManager(ManagerState, EnvCalls, DIEngineCalls):
    """Drives ``len(env_fn)`` envs through one dict API and one batched API.

    Args:
        env_fn: Callables returning a fresh ``BaseEnv`` (one env id) or ``BaseBatchEnv`` (one env id per
            sub-env, consecutive; see ``env_layout``). Each is called once here to tell them apart.
        cfg: Manager settings; see ``ding_env.env_manager.config.MANAGER_CONFIG``.

    Raises:
        ConfigError: For an unknown key or an invalid value in ``cfg``.
        ValueError: For an empty ``env_fn``.
    """

    manager_type = "base"
    # A step returns once ``wait_num`` envs have results (the async manager) instead of all of them.
    returns_early = False

    def __init__(self, env_fn: Sequence[Callable[[], BaseEnv]], cfg: dict | None = None) -> None:
        self._env_fn = env_fn = validation.check_env_fns(env_fn)
        self._layout = EnvLayout(env_fn)
        self._env_num = self._layout.env_num
        self._cfg = manager_config(cfg, self._env_num)
        if self._layout.lockstep:
            self._layout.check_lockstep_config(self._name, self.returns_early, self._cfg)
        self._launched = False
        self._closed = False
        # The envs' seeds and reset kwargs: this manager's, read by its backends whenever they (re)build an env.
        self._setup = EnvSetup()
        self._replay_paths: list[str] | None = None  # asked for before launch, applied by it
        self._ledger = EnvLedger(self._env_num, self._cfg.auto_reset, self._cfg.episode_num, self._cfg.step_error)
        self._spaces: tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space] | None = None
        self._shares: Shares | None = None
        self._actions: ActionChecker | None = None
        # The ids ready_obs_batch handed out (read-only): step_batch with that very array needs no parsing.
        self._offered_ids: np.ndarray | None = None
        # Envs whose step a KeyboardInterrupt (or SystemExit) cut: their results are lost until they are reset.
        self._interrupted: set[int] = set()

    def _backends(self) -> list[Backend]:
        """The backends hosting the envs, each a consecutive share of the ids (chosen by each manager class)."""
        raise NotImplementedError(f"{type(self).__name__} chooses no backends")

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
            reset_param: Optional ``{env_id: kwargs for env.reset}``; an env it leaves out is reset with none.

        Raises:
            EnvStateError: If already launched.
            EnvError: When an env fails to reset (after ``max_retry`` tries): the envs and workers built
                so far are closed, and ``launch()`` may be called again.
        """
        self._check_open()
        if self._launched:
            raise EnvStateError(f"{self._name} is already launched; call reset() to start over")
        if reset_param is not None:  # checked before any env is built
            params = validation.check_reset_param(self._name, self._env_num, reset_param)
            self._layout.check_reset_params(self._name, params)
        self._shares, self._spaces = Shares.launch(self._backends())  # the envs seeded as the setup says
        try:
            self._launched = True
            for env_id, path in enumerate(self._replay_paths or ()):
                self.call_env_method("enable_save_replay", path, env_ids=[env_id])
            # Every env is reset: one reset_param leaves out starts with no kwargs (DI-engine asserts it names all).
            self.reset(
                None if reset_param is None else {env_id: params.get(env_id, {}) for env_id in range(self._env_num)}
            )
        except BaseException as error:
            # As in DI-engine, a launch that fails closes what it built, and launch() may be called again.
            self._launched = False
            try:
                raise_close_failures(self._shares.close())
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
        seeds = validation.seed_of_each(self._name, self._env_num, seed)
        self._layout.check_seeded(self._name, [env_id for env_id, _ in seeds])
        if self._launched:  # a seed an env cannot take is refused before any is kept
            for env_id, value in seeds:
                self._shares.backend_of(env_id).check_seed(env_id, value)
        before = {env_id: self._setup.seeds.get(env_id) for env_id, _ in seeds}
        self._setup.seeds.update((env_id, (value, dynamic_seed)) for env_id, value in seeds)
        for position, (env_id, _) in enumerate(seeds if self._launched else ()):
            try:
                self._shares.backend_of(env_id).seed(env_id)
            except BaseException:
                # The envs seeded before keep their new seeds; this one and those after it their old ones.
                for later, _ in seeds[position:]:
                    if before[later] is None:
                        self._setup.seeds.pop(later, None)
                    else:
                        self._setup.seeds[later] = before[later]
                raise

    def enable_save_replay(self, replay_path: str | Sequence[str]) -> None:
        """Ask every env to record its episodes under ``replay_path`` (one path, or one per env).

        Before ``launch`` (as DI-engine's evaluators call it), the envs record from their first episode on.
        """
        paths = [replay_path] * self._env_num if isinstance(replay_path, str) else list(replay_path)
        if len(paths) != self._env_num:
            raise ValueError(f"{self._name}: got {len(paths)} replay paths for {self._env_num} envs")
        self._check_open()
        self._replay_paths = paths
        for env_id, path in enumerate(paths if self._launched else ()):
            self.call_env_method("enable_save_replay", path, env_ids=[env_id])

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
            self._ledger.start_over()
            params = {}
        else:
            params = validation.check_reset_param(self._name, self._env_num, reset_param)
            self._layout.check_reset_params(self._name, params)
            env_ids = list(params)
        reset_params = self._setup.reset_params
        previous = self._setup.params_of(list(params))
        reset_params.update(params)
        self._offered_ids = None
        self._shares.each(env_ids, lambda backend, ids: backend.cancel(ids))
        self._ledger.mark(env_ids, NEEDS_RESET)
        self._interrupted.difference_update(env_ids)
        errors: list[DingEnvError] = []
        for backend, rows in self._shares.split(np.array(env_ids, dtype=np.int64)):
            ready, failed = backend.reset([env_ids[row] for row in rows.tolist()])
            self._ledger.mark(ready, READY)
            errors += failed
        if errors:
            # Params of a reset that failed do not stick: a bad kwarg must not fail every later reset().
            for env_id, param in previous.items():
                if self._ledger.status[env_id] != READY:
                    reset_params[env_id] = param
            raise first_failure(errors)

    def _check_batch_attribute(self, name: str, value_of: dict[int, Any]) -> None:
        """``EnvLayout.check_attribute`` for ``EnvCalls.set_env_attr``."""
        self._layout.check_attribute(self._name, name, value_of)

    def close(self) -> None:
        """Close every env (and worker). Safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        if self._launched:
            raise_close_failures(self._shares.close())

    def __enter__(self) -> EnvManager:
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
        if getattr(self, "_closed", True):
            return
        try:
            self.close()
        except Exception:  # at exit, modules torn down may fail an env's close after the workers were released
            if not sys.is_finalizing():
                raise

    # ---- dict API ------------------------------------------------------

    @property
    def ready_obs(self) -> dict[int, Any]:
        """``{env_id: obs}`` for the envs that can take an action now."""
        env_ids = self._poll_ready_ids()
        rows = self._shares.ready_obs_rows(env_ids, self._cfg.copy_on_get)
        return dict(zip(env_ids.tolist(), rows, strict=True))

    @property
    def ready_obs_id(self) -> list[int]:
        """Ids of the envs that can take an action now."""
        return self._poll_ready_ids().tolist()

    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """Step the envs named in ``actions``.

        Args:
            actions: ``{env_id: action}`` for envs in ``ready_obs``.

        Returns:
            ``{env_id: timestep}``. The synchronous managers return every env
            in ``actions``; the async one may return fewer (and results of
            envs stepped earlier). An empty ``actions`` steps no env: the
            synchronous managers return ``{}``, the async one the results of
            envs still stepping, if any.

        Raises:
            ValueError: For an env id that is unknown or not ready.
            EnvError: If an env raised and ``step_error='raise'``.
        """
        self._check_running()
        if self._interrupted:
            self._raise_interrupted()
        if not isinstance(actions, Mapping):
            raise TypeError(
                f"{self._name}: step() takes {{env_id: action}} for envs in ready_obs, got "
                f"{describe_typed(actions)}; "
                "stacked actions go to step_batch(env_ids, actions)"
            )
        env_ids = validation.parse_env_ids(self._name, self._env_num, actions)
        self._ledger.check_ready(self._name, env_ids)
        outcome, views = self._step(env_ids, self._action_checker().check_mapping(env_ids, actions))
        timesteps = timesteps_of(outcome, self._cfg.copy_on_get and views)
        raise_step_errors(outcome, timesteps, self._cfg.step_error)
        return timesteps

    # ---- batched API ---------------------------------------------------

    @property
    def ready_obs_batch(self) -> ObsBatch:
        """Stacked observations of the ready envs, ids increasing."""
        env_ids = self._poll_ready_ids()
        self._offered_ids = env_ids
        if not len(env_ids):  # no env ready: arrays of no rows, as a step of no env returns them
            return ObsBatch(env_ids, empty_batch(self._spaces).obs)
        return ObsBatch(env_ids, self._shares.ready_obs(env_ids, self._cfg.copy_on_get))

    def step_batch(self, env_id: np.ndarray | Sequence[int], action: Any) -> TimestepBatch:
        """Step the envs ``env_id`` with stacked ``action`` (row ``k`` for ``env_id[k]``).

        Returns:
            A :class:`TimestepBatch` whose arrays belong to the caller; with ``copy_on_get=False``
            they may be views, valid until the next call to the manager.
        """
        self._check_running()
        if self._interrupted:
            self._raise_interrupted()
        # The ids ready_obs_batch handed out need no parsing; readiness is checked again (a poll since
        # may have found a worker lost).
        env_ids = env_id if env_id is self._offered_ids else validation.parse_env_ids(self._name, self._env_num, env_id)
        self._ledger.check_ready(self._name, env_ids)
        action = self._action_checker().check_batch(env_ids, action)
        batch, views = self._step(env_ids, action)
        if self._cfg.copy_on_get and views:
            batch = owned(batch)
        if batch.errors:
            raise_step_errors(batch, batch, self._cfg.step_error)
        return batch

    # ---- stepping ------------------------------------------------------

    def _step(self, env_ids: np.ndarray, actions: Any) -> tuple[TimestepBatch, bool]:
        """Step ``env_ids`` in their backends and settle their statuses from the results.

        Returns:
            The results, and whether their arrays may be views of a backend's buffers.
        """
        self._offered_ids = None
        if self._layout.lockstep:
            self._layout.check_lockstep_step(self._name, env_ids)
        ledger, shares = self._ledger, self._shares
        reset_on_done = ledger.reset_flags(env_ids)
        ledger.mark(env_ids, STEPPING)
        try:
            if len(env_ids):
                shares.send(env_ids, actions, reset_on_done)
            if self.returns_early:  # wait for wait_num of the envs stepping (this step's or earlier ones)
                wait_num = min(self._cfg.wait_num or self._env_num, ledger.count(STEPPING))
                outcome, views = shares.collect_early(wait_num, self._cfg.step_wait_timeout, self._spaces)
            else:
                outcome, views = shares.collect(env_ids)
                if outcome is None:  # no env was stepped
                    outcome, views = empty_batch(self._spaces), False
        except (KeyboardInterrupt, SystemExit):
            # The results of the envs in flight are lost with the interrupted call: rather than wait as
            # stepping for ever, they need a reset, which the next call says (_raise_interrupted).
            stepping = np.flatnonzero(ledger.status == STEPPING)
            ledger.mark(stepping, NEEDS_RESET)
            self._interrupted.update(stepping.tolist())
            raise
        ledger.apply(outcome)
        return outcome, views

    def _action_checker(self) -> ActionChecker:
        if self._actions is None:
            self._actions = ActionChecker(self.action_space, self._name)
        return self._actions

    def _poll_ready_ids(self) -> np.ndarray:
        """The ready envs' ids, after the backends took in what finished meanwhile."""
        self._check_running()
        if self._interrupted:
            self._raise_interrupted()
        self._shares.poll()
        return self._ledger.ready_ids()

    # ---- checks --------------------------------------------------------

    def _raise_interrupted(self) -> None:
        ids = sorted(self._interrupted)
        raise EnvStateError(
            f"{self._name}: envs {ids[:20]} were stepping when a step was interrupted (Ctrl-C) and their "
            f"results are lost: reset them to go on (reset(), or reset({{{ids[0]}: {{}}, ...}}))"
        )

    def _each(self, env_ids: list[int], ask: Callable[[Backend, list[int]], list | None]) -> list:
        """``Shares.each`` for ``EnvCalls``, once the manager runs."""
        self._check_running()
        return self._shares.each(env_ids, ask)

    def _check_env_attribute(self, name: str) -> None:
        """Raise unless env attributes can be read now (``EnvCalls.__getattr__``, hence ``__dict__``)."""
        if self.__dict__.get("_closed"):
            raise ClosedEnvError(f"{self._name} is closed; attribute {name!r} is not available")
        if not self.__dict__.get("_launched"):
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r} (env attributes need launch())")

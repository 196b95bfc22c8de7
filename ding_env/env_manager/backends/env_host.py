"""``EnvHost``: the envs one process runs, with retries, renewal and error capture.

The in-process backend hosts its envs in the caller's process, each worker process its share: both
step them with :meth:`EnvHost.step` into :class:`StepRows`, so stepping, resetting with ``max_retry`` /
``retry_type``, renewal, auto-reset and the output checks are written once for every manager.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.env.base_env import BaseEnv
from ding_env.env.seeding import seed_as_managers_do
from ding_env.env.timestep import StepFields
from ding_env.env_manager import arrays
from ding_env.env_manager.backends.batch_host import BatchHost, batch_hosted
from ding_env.env_manager.backends.call_timeout import time_limit
from ding_env.env_manager.backends.host_calls import HostCalls
from ding_env.env_manager.backends.hosted_env import (
    build_env,
    close_throwaway,
    env_spaces,
    stepper_of,
    takes_int_actions,
)
from ding_env.env_manager.backends.info_table import PutRows
from ding_env.env_manager.backends.settings import EnvSetup, HostSettings
from ding_env.env_manager.backends.step_rows import StepRows
from ding_env.env_manager.status import abnormal_info
from ding_env.errors import DingEnvError, EnvError, EnvTimeoutError
from ding_env.ops import Op

_NO_POSITIONS = np.zeros(0, dtype=np.int64)  # the positions of plain envs in a step of batch envs only


class EnvHost(HostCalls):
    """Creates, seeds, resets and steps a set of envs in this process.

    Args:
        env_fn: ``{env_id: constructor}`` for the hosted envs.
        settings: How the envs are retried, renewed and limited.
        setup: The envs' seeds (applied at launch and renewal) and reset kwargs (at every reset): the
            manager's own for the in-process backend, a worker's copy in a worker.
        obs_layout: Layout every observation must match, or None to skip the check.
        limit_time: Cut a reset or step that passes ``reset_timeout`` / ``step_timeout`` with
            ``EnvTimeoutError`` and renew that env (the serial managers; see ``call_timeout``);
            worker processes leave their time limits to the parent,
        limit_auto_reset: except the auto-resets within a step (and the resets after a renewal there),
            cut at ``reset_timeout`` as ``limit_time`` cuts them, so a step is not charged a slow reset.
    """

    def __init__(
        self,
        env_fn: Mapping[int, Callable[[], BaseEnv]],
        settings: HostSettings,
        setup: EnvSetup,
        obs_layout: Any = None,
        limit_time: bool = False,
        limit_auto_reset: bool = False,
    ) -> None:
        slots = batch_hosted(env_fn)
        self.env_fn = {env_id: fn for env_id, fn in env_fn.items() if env_id not in slots}
        self._reset_timeout = settings.reset_timeout if limit_time else None
        self._auto_reset_timeout = settings.reset_timeout if limit_time or limit_auto_reset else None
        self._step_timeout = settings.step_timeout if limit_time else None
        limits = (self._step_timeout, self._reset_timeout, self._auto_reset_timeout)
        self.batch = BatchHost(slots, settings, setup, limits, self._batch_renewed) if slots else None
        # in_batch[env_id]: whether env_id is a batch env's sub-env, for a step to tell them apart without a loop.
        self._in_batch = np.zeros(max(env_fn, default=-1) + 1, dtype=bool)
        self._in_batch[list(slots)] = True
        self._only_batch = len(slots) == len(env_fn)  # then every stepped id is a batch env's: no need to look
        self.settings, self.setup = settings, setup
        self.set_obs_layout(obs_layout)
        self.envs: dict[int, BaseEnv] = {}
        self._steppers: dict[int, Callable[[Any], StepFields]] = {}
        # Whether every env stepped one at a time takes Discrete actions as ints (known with the spaces).
        self.int_actions, self._action_space = False, None
        self.distinct_spaces: dict[int, tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space]] = {}

    def _batch_renewed(self, first: int, stop: int, env: Any) -> None:  # env calls reach the new env, not the old
        self.envs.update(dict.fromkeys(range(first, stop), env))

    def set_obs_layout(self, layout: Any) -> None:
        """Check every observation against ``layout`` from now on (None: no check)."""
        self._check = _no_check if layout is None else arrays.compile_check(layout, self.describe)
        if self.batch is not None:
            self.batch.set_obs_layout(layout)

    def describe(self, env_id: int) -> str:
        """Names an env in error messages."""
        return f"env {env_id} ({self.envs[env_id]!r})"

    def launch(self) -> None:
        """Build every env (envs are lazy: this is cheap until their first reset).

        Raises:
            EnvError: An ``env_fn`` raised or returned something that is not an env (see ``build_env``).
        """
        try:
            for env_id, fn in self.env_fn.items():
                self.envs[env_id] = build_env(env_id, fn)
            self._steppers = {env_id: stepper_of(env) for env_id, env in self.envs.items()}
            if self.batch is not None:
                self.batch.launch()
                self.envs.update({env_id: self.batch.env_of(env_id) for env_id in self.batch.batch_of})
        except EnvError:
            self.close()  # the envs built so far
            raise

    def spaces(self) -> tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space]:
        """The envs' spaces (the first env's), then every env seeded as the setup says.

        Seeding comes after reading the spaces: an env that knows its spaces only after a reset is
        reset to read them, and that reset must not use up draws of its seeded generator. The other envs'
        spaces are read where they are known without a reset (``distinct_spaces``), so no env is reset twice.
        """
        first = min(self.envs)
        spaces = env_spaces(self.envs[first])
        # The first env's spaces and every other env's that differ: the manager checks them against env 0's.
        self.distinct_spaces = {first: spaces}
        for env_id, env in self.envs.items():
            if env_id != first and (own := env_spaces(env, reset=False)) is not None and own != spaces:
                self.distinct_spaces[env_id] = own
        plain = [env for env_id, env in self.envs.items() if env_id in self._steppers]
        self.int_actions = bool(plain) and all(takes_int_actions(env, spaces[1]) for env in plain)
        self._action_space = spaces[1]
        for env_id in self.envs:
            if env_id in self.setup.seeds:
                self.seed(env_id)
        return spaces

    def seed(self, env_id: int) -> None:
        """Seed one env now with its seed in the setup (it takes effect at the env's next reset).

        A batch env's sub-env is seeded by its batch env's next reset, which reads the setup.

        Raises:
            EnvError: Naming ``env_id``, when the env's ``seed`` raised.
        """
        if self.batch is not None and env_id in self.batch.batch_of:
            self.batch.batch_of[env_id].seeded = None  # seeded again, as a BaseEnv would be
            self.batch.forget_sampler(env_id)
            return
        seed, dynamic_seed = self.setup.seeds[env_id]
        try:
            seed_as_managers_do(self.envs[env_id], seed, dynamic_seed)
        except Exception as error:  # noqa: BLE001 - re-raised naming the env (a worker's launch named its first)
            raise EnvError.of(error, env_id, Op.SEED) from error

    def reset(self, env_id: int, within_step: bool = False) -> Any:
        """Reset one env with its reset params, retrying per ``max_retry`` / ``retry_type``.

        Args:
            env_id: The env.
            within_step: An auto-reset (or a reset after a renewal) within a step, limited as ``limit_auto_reset`` says.

        Raises:
            EnvError: With the last attempt's traceback when every attempt fails.
        """
        attempts = self.settings.max_retry
        for attempt in range(1, attempts + 1):
            try:
                with time_limit(self._auto_reset_timeout if within_step else self._reset_timeout, env_id, Op.RESET):
                    obs = self.envs[env_id].reset(**self.setup.reset_params.get(env_id, {}))
                self._check(obs, env_id, "reset obs")  # EnvDataError unless it matches the layout exactly
                return obs
            except EnvTimeoutError:
                self.renew(env_id)  # cut short, the env is in no known state
                raise
            except Exception as error:  # noqa: BLE001 - retried, then re-raised with the env's context
                if attempt == attempts:
                    raise EnvError.of(error, env_id, Op.RESET) from error
                time.sleep(self.settings.retry_waiting_time)
                if self.settings.retry_type == "renew":
                    self.renew(env_id)
        raise AssertionError("unreachable")

    def reset_into(
        self, env_ids: list[int], write: Callable[[Any, Any], None]
    ) -> tuple[list[int], DingEnvError | None]:
        """Reset ``env_ids`` in order, a batch env's ids with one call; ``write(rows, obs)`` each result.

        ``rows`` is an env id with one observation, or the ids of a batch env (an int64 array) with
        their stacked observations.

        Returns:
            The ids reset before the first failure, and that failure (None when every reset succeeded).
        """
        done: list[int] = []
        position = 0
        try:
            while position < len(env_ids):
                env_id = env_ids[position]
                batch = None if self.batch is None else self.batch.batch_of.get(env_id)
                if batch is None:
                    write(env_id, self.reset(env_id))
                    done.append(env_id)
                    position += 1
                    continue
                ids = [env_id]
                while position + len(ids) < len(env_ids) and batch.first <= env_ids[position + len(ids)] < batch.stop:
                    ids.append(env_ids[position + len(ids)])
                ids_array = np.array(ids, dtype=np.int64)
                write(ids_array, self.batch.reset(batch, ids_array))
                done += ids
                position += len(ids)
        except DingEnvError as error:  # an EnvError, or an EnvTimeoutError
            return done, error
        return done, None

    def action_rows(self, actions: Any, count: int) -> list[Any]:
        """One action per env of the ``count`` stacked ``actions``, each in the form its env's stepper takes.

        Python ints where every env takes them (``int_actions``), else the 0-d and n-d arrays of
        ``arrays.action_rows``.
        """
        if self.int_actions and type(actions) is np.ndarray and actions.ndim == 1 and actions.dtype.kind in "iu":
            return actions.tolist()
        return arrays.action_rows(actions, count)

    def step_stacked(
        self,
        env_ids: np.ndarray,
        actions: Any,
        resets: np.ndarray,
        rows: StepRows,
        put_info: Callable[[int, dict], bool] | None = None,
        put_rows: PutRows | None = None,
    ) -> tuple[dict[int, dict], dict[int, EnvError]]:
        """``step`` for a host with batch envs: ``env_ids`` increasing, ``actions`` stacked (row ``k`` for id ``k``).

        Every env gets actions of its own: ``actions`` may be views the caller writes again.

        Each batch env steps its ids with one call on its rows of ``actions``; the other envs step
        one after another through ``step``. Every env's info goes to ``put_info`` first, as in ``step``;
        a batch env's infos go to ``put_rows`` (``BatchHost.step``) before that, all its rows at once.
        """
        infos: dict[int, dict] = {}
        errors: dict[int, EnvError] = {}
        in_batch = None if self._only_batch else self._in_batch[env_ids]
        plain = _NO_POSITIONS if in_batch is None else np.flatnonzero(~in_batch)
        if len(plain):
            ids = env_ids[plain]
            infos, errors = self.step(
                ids.tolist(),
                self.action_rows(arrays.take(actions, plain), len(plain)),
                resets[plain].tolist(),
                rows,
                put_info,
            )
        if len(plain) < len(env_ids):
            # Every id a batch env's (the usual case): its positions are slices of the stacked actions.
            every = not len(plain)
            batched = slice(None) if every else np.flatnonzero(in_batch)
            ids = env_ids if every else env_ids[batched]
            batch_infos: dict[int, dict] = {}
            for batch, positions in self.batch.groups(ids):
                picked = positions if every else batched[positions]
                # The actions are the batch env's own, whatever the caller does with its array: a slice
                # takes views, which are copied; an index array takes copies already.
                taken = arrays.take(actions, picked)
                self.batch.step(
                    batch,
                    ids[positions],
                    arrays.copy_tree(taken) if every else taken,
                    resets[picked],
                    rows,
                    batch_infos,
                    errors,
                    put_rows,
                )
            # Done rows' infos (truncated, eval_episode_return) come nearly every step of a large batch env:
            # stored by put_info (the workers' info table), they need no message on the pipe.
            for env_id, info in batch_infos.items():
                if put_info is None or not put_info(env_id, info):
                    infos[env_id] = info
        return infos, errors

    def step(
        self,
        env_ids: list[int],
        actions: list[Any],
        resets: list[bool],
        rows: StepRows,
        put_info: Callable[[int, dict], bool] | None = None,
    ) -> tuple[dict[int, dict], dict[int, EnvError]]:
        """Step each of ``env_ids`` with its action, writing the results into ``rows``.

        An env whose episode ends is reset at once where its flag in ``resets`` is set; its next ready
        observation is then the reset one. Never raises for an env's sake: an exception in ``env.step``
        becomes an abnormal row (the last ready observation, reward 0, done) and an error (with
        ``step_error='abnormal'`` the env is renewed, and reset when due), and a failed auto-reset or
        renewal an error that leaves the env needing a reset, beside the step's own results.

        Args:
            env_ids: The envs to step.
            actions: One action per env.
            resets: Whether each env restarts at once if its episode ends.
            rows: Where the results go.
            put_info: Stores a non-empty info elsewhere (the workers' shared info table); False when it
                cannot, and the info is returned.

        Returns:
            ``({env_id: info}, {env_id: error})``: the non-empty infos not stored by ``put_info``, and
            the errors of envs whose step or auto-reset failed.
        """
        infos: dict[int, dict] = {}
        errors: dict[int, EnvError] = {}
        steppers, check, timeout = self._steppers, self._check, self._step_timeout
        write_step_obs, write_ready_obs, write_reward = rows.write_step_obs, rows.write_ready_obs, rows.write_reward
        done, truncated, first = rows.done, rows.truncated, rows.first
        going_on: list[int] = []  # the rows whose episode goes on: their step observation is also the ready one
        for env_id, action, reset in zip(env_ids, actions, resets, strict=True):
            row = env_id - first
            try:
                if timeout is None:
                    obs, reward, ended, truncated[row], info = steppers[env_id](action)
                else:
                    with time_limit(timeout, env_id, Op.STEP):
                        obs, reward, ended, truncated[row], info = steppers[env_id](action)
                check(obs, env_id, "step obs")  # not check_obs: one call less per step
                write_reward(row, reward)  # an integer reward space refuses a value it cannot hold
            except Exception as error:  # noqa: BLE001 - reported per env, after the other envs stepped
                self._fail_step(env_id, row, error, reset, rows, infos, errors)
                continue
            done[row] = ended
            write_step_obs(row, obs)
            if info and (put_info is None or not put_info(env_id, info)):
                infos[env_id] = info
            if not ended:
                going_on.append(row)
            elif reset:
                ready, reset_error = self._restart(env_id, reset=True, renew=False)
                if reset_error is None:
                    write_ready_obs(row, ready)
                else:  # the step's results stand; the env needs a reset
                    errors[env_id] = reset_error
        if going_on:
            rows.copy_step_to_ready(going_on)
        return infos, errors

    def _fail_step(
        self,
        env_id: int,
        row: int,
        error: Exception,
        reset: bool,
        rows: StepRows,
        infos: dict[int, dict],
        errors: dict[int, EnvError],
    ) -> None:
        """Write the abnormal row of a step that raised or timed out, and restart the env as ``step_error`` says."""
        abnormal = self.settings.step_error == "abnormal"
        if isinstance(error, EnvTimeoutError):
            # Cut short, the env is in no known state: renewed, as when a worker is replaced.
            step_error, renew, reset = error, True, abnormal and reset
        else:
            step_error = EnvError.of(error, env_id, Op.STEP)
            step_error.__cause__ = error
            renew = abnormal
        rows.write_step_obs(row, arrays.row(rows.ready_obs, row, copy=True))
        rows.rewards[row] = 0  # every value of the row, whatever the reward shape
        rows.done[row], rows.truncated[row] = True, False
        infos[env_id] = abnormal_info(step_error)
        errors[env_id] = step_error
        if renew:
            ready, reset_error = self._restart(env_id, reset, renew=True)
            if reset_error is not None:  # decides the env's status: it needs a reset
                errors[env_id] = reset_error
            elif ready is not None:
                rows.write_ready_obs(row, ready)

    def _restart(self, env_id: int, reset: bool, renew: bool) -> tuple[Any, DingEnvError | None]:
        """Renew (when ``renew``) and reset (when ``reset``) one env after its episode ended.

        Returns:
            ``(ready_obs, None)``, or ``(None, error)`` when the renewal or the reset failed.
        """
        try:
            if renew:
                self.renew(env_id)
            return (self.reset(env_id, within_step=True) if reset else None), None
        except (EnvError, EnvTimeoutError) as error:
            return None, error
        except Exception as error:  # noqa: BLE001 - an env_fn that fails to build the env again
            return None, EnvError.of(error, env_id, Op.RESET)

    def renew(self, env_id: int) -> None:
        """Replace one env with a fresh one from its constructor, keeping its seed."""
        old = self.envs[env_id]
        self.envs[env_id] = build_env(env_id, self.env_fn[env_id])
        self._steppers[env_id] = stepper_of(self.envs[env_id])
        self.int_actions = self.int_actions and takes_int_actions(self.envs[env_id], self._action_space)
        if env_id in self.setup.seeds:
            self.seed(env_id)
        close_throwaway(old, f"before its renewal as env {env_id}")  # a broken env may fail to close: a warning

    def close(self) -> list[EnvError]:
        """Close every env; return an ``EnvError`` for each failure (all envs are attempted)."""
        failures = [] if self.batch is None else self.batch.close()
        for env_id, env in self.envs.items():
            if env_id not in self.env_fn:  # a batch env's id: closed above
                continue
            try:
                env.close()
            except Exception as error:  # noqa: BLE001 - close them all, then report
                failures.append(EnvError(env_id, Op.CLOSE, f"{type(error).__name__}: {error}"))
        self.envs = {}
        return failures


def _no_check(obs: Any, env_id: int, field: str) -> None:
    """The observation check when no layout is set."""

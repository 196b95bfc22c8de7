"""``BatchHost``: the batch envs one process runs, each hosting consecutive env ids of its manager.

``EnvHost`` hands it the ids that are sub-envs of batch envs (``env_layout.BatchSlot``). Per batch
env and per call it makes one ``seed``, one ``reset`` and one ``step`` on stacked arrays, and writes
the results into the host's rows with one assignment per field: no loop over sub-envs in Python.
Rows get an info dict only when they have something to say: the batch env's info row when its
``BatchStep.info`` has keys, and on done rows ``truncated`` and ``eval_episode_return`` too.

A batch env whose step or reset raises (or passes its time limit, in a host that limits it) is one
failure of every id it stepped: each gets an abnormal row and an error naming all of them; with
``step_error='abnormal'`` the batch env is renewed (built again and re-seeded) and its ids due an
auto-reset are reset.
"""

from __future__ import annotations

import copy
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.env.batch_env import BaseBatchEnv
from ding_env.env.batch_step import info_row
from ding_env.env.timestep import final_info
from ding_env.env_manager import arrays
from ding_env.env_manager.backends.call_timeout import time_limit
from ding_env.env_manager.backends.hosted_env import close_throwaway
from ding_env.env_manager.backends.info_table import FINAL_SCHEMA, PutRows
from ding_env.env_manager.backends.settings import EnvSetup, HostSettings
from ding_env.env_manager.env_layout import BatchSlot, describe_batch
from ding_env.env_manager.status import abnormal_info
from ding_env.errors import EnvError, EnvTimeoutError
from ding_env.ops import Op
from ding_env.summary import describe_value

_FINAL_KEYS = frozenset(FINAL_SCHEMA.keys)


class HostedBatch:
    """One batch env of a host, hosting the env ids ``first .. first + num_envs - 1``."""

    def __init__(self, slot: BatchSlot) -> None:
        self.fn, self.first, self.num_envs, self.lockstep = slot.fn, slot.first, slot.num_envs, slot.lockstep
        self.stop = self.first + self.num_envs
        self.env: BaseBatchEnv | None = None
        self.seeded: tuple | None = None  # the seeds last given to env.seed; None: look at the setup again

    def describe(self) -> str:
        """Names the batch env and every env id it hosts."""
        return describe_batch(self.first, self.num_envs, self.env)

    def error(self, error: BaseException, env_id: int, op: Op) -> EnvError:
        """``error`` of this batch env as env ``env_id``'s ``EnvError``, naming every id the batch env hosts."""
        remote = "".join(traceback.format_exception(error))
        return EnvError(env_id, op, f"{self.describe()}: {type(error).__name__}: {error}", remote, op)

    def build(self) -> None:
        """Build the batch env from its constructor, checking its kind and size."""
        env = self.fn()
        if not isinstance(env, BaseBatchEnv) or env.num_envs != self.num_envs:
            what = f"{env.num_envs} sub-envs" if isinstance(env, BaseBatchEnv) else describe_value(env)
            raise TypeError(f"env_fn returned {what} this time, expected a BaseBatchEnv of {self.num_envs} sub-envs")
        self.env, self.seeded = env, None


class BatchHost:
    """The batch envs of a host, keyed by the env ids they host.

    Args:
        slots: ``{env_id: BatchSlot}`` of the hosted sub-env ids (whole batch envs only).
        settings: How the batch envs are retried and renewed.
        setup: The seeds of the sub-envs, read at every reset of their batch env.
    """

    def __init__(
        self,
        slots: Mapping[int, BatchSlot],
        settings: HostSettings,
        setup: EnvSetup,
        timeouts: tuple[float | None, float | None, float | None] = (None, None, None),
        on_renew: Callable[[int, int, BaseBatchEnv], None] | None = None,
    ) -> None:
        self.settings, self.setup = settings, setup
        self.on_renew = on_renew  # told (first id, stop id, new env) when a batch env is built anew
        # (step, reset, auto-reset within a step): what the host cuts itself (EnvHost's limit_time), else None.
        self.step_timeout, self.reset_timeout, self.auto_reset_timeout = timeouts
        self.set_obs_layout(None)
        self.batches: dict[int, HostedBatch] = {}
        for slot in slots.values():
            if slot.first not in self.batches:
                self.batches[slot.first] = HostedBatch(slot)
        for batch in self.batches.values():
            missing = [env_id for env_id in range(batch.first, batch.stop) if env_id not in slots]
            if missing:
                raise ValueError(f"{batch.describe()} was split: this host lacks env ids {missing}")
        self.batch_of = {env_id: self.batches[slot.first] for env_id, slot in slots.items()}
        self._samplers: dict[int, gym.spaces.Space] = {}  # each sub-env's random_action sampler

    def random_action(self, env_id: int) -> Any:
        """A random action of sub-env ``env_id``, drawn as ``BaseEnv.random_action`` draws one.

        Each sub-env samples from its own copy of the action space, seeded with the sub-env's seed
        (unseeded without one) at its first draw after it was seeded (``forget_sampler``), so the draws
        do not depend on the other sub-envs'.
        """
        sampler = self._samplers.get(env_id)
        if sampler is None:
            sampler = self._samplers[env_id] = copy.deepcopy(self.env_of(env_id).action_space)
            seed = self.setup.seeds.get(env_id, (None,))[0]
            sampler.seed(None if seed is None else int(seed))
        return sampler.sample()

    def forget_sampler(self, env_id: int) -> None:
        """Draw ``env_id``'s next random action from a sampler seeded anew (after ``seed()``, as a BaseEnv does)."""
        self._samplers.pop(env_id, None)

    def set_obs_layout(self, layout: Any) -> None:
        """Check the stacked observations of every reset and step against ``layout`` from now on (None: no check)."""
        self.check = _no_check if layout is None else arrays.compile_stacked_check(layout)

    def env_of(self, env_id: int) -> BaseBatchEnv:
        """The batch env hosting ``env_id``."""
        return self.batch_of[env_id].env

    def launch(self) -> None:
        """Build every batch env.

        Raises:
            EnvError: A constructor raised or returned something else than it did before.
        """
        for batch in self.batches.values():
            try:
                batch.build()
            except Exception as error:  # noqa: BLE001 - re-raised naming the batch env's ids
                raise batch.error(error, batch.first, Op.LAUNCH) from error

    # ---- reset ---------------------------------------------------------

    def groups(self, env_ids: np.ndarray) -> list[tuple[HostedBatch, slice]]:
        """``(batch env, positions of its ids)`` for each batch env hosting some of ``env_ids`` (increasing)."""
        position, count = 0, len(env_ids)
        batch = self.batch_of[int(env_ids[0])]
        # Increasing and distinct ids from its first to its last, as many as it hosts: all of one batch env.
        if count == batch.num_envs and env_ids[0] == batch.first and env_ids[-1] == batch.stop - 1:
            return [(batch, slice(0, count))]
        groups = []
        while position < count:
            batch = self.batch_of[int(env_ids[position])]
            end = int(np.searchsorted(env_ids, batch.stop))
            groups.append((batch, slice(position, end)))
            position = end
        return groups

    def reset(self, batch: HostedBatch, env_ids: np.ndarray, within_step: bool = False) -> Any:
        """Reset ``env_ids`` (increasing, ``batch``'s) with one call, retrying per ``max_retry`` / ``retry_type``.

        Args:
            batch: The batch env.
            env_ids: Its ids to reset.
            within_step: An auto-reset (or a reset after a renewal) within a step, cut at ``auto_reset_timeout``.

        Returns:
            Their stacked first observations.

        Raises:
            EnvError: Naming every id of the batch env, when every attempt failed.
            EnvTimeoutError: Naming ``env_ids``, when the reset passed its time limit (the batch env is renewed).
        """
        attempts = self.settings.max_retry
        timeout = self.auto_reset_timeout if within_step else self.reset_timeout
        for attempt in range(1, attempts + 1):
            try:
                self._apply_seeds(batch)
                if timeout is None:  # no context manager to enter and leave on every auto-reset
                    obs = batch.env.reset(self._sub_ids(batch, env_ids))
                else:
                    with time_limit(timeout, int(env_ids[0]), Op.RESET):
                        obs = batch.env.reset(self._sub_ids(batch, env_ids))
                self.check(obs, len(env_ids), "reset obs")
                return obs
            except EnvTimeoutError as error:
                # Only these ids are in no known state: the batch env is kept (renewing it would end its other
                # sub-envs' episodes under their caller), and they need a reset, as their error says.
                raise EnvTimeoutError(env_ids.tolist(), Op.RESET, error.timeout, grouped=True) from error
            except Exception as error:  # noqa: BLE001 - retried, then re-raised naming the batch env's ids
                if attempt == attempts:
                    raise batch.error(error, int(env_ids[0]), Op.RESET) from error
                time.sleep(self.settings.retry_waiting_time)
                if self.settings.retry_type == "renew":
                    self._renew_or_fail(batch, int(env_ids[0]))
        raise AssertionError("unreachable")

    def _apply_seeds(self, batch: HostedBatch) -> None:
        """Give ``batch`` its ids' seeds when they changed since it last got them."""
        if batch.seeded is not None:  # nothing seeded since: EnvHost.seed clears it when one of its ids is
            return
        seeds = tuple(map(self.setup.seeds.get, range(batch.first, batch.stop)))
        if seeds.count(None) == batch.num_envs:
            batch.seeded = seeds  # unseeded: fresh entropy, as a BaseEnv
            return
        unseeded = [batch.first + sub_id for sub_id, seed in enumerate(seeds) if seed is None]
        modes = {seed[1] for seed in seeds if seed is not None}
        if unseeded or len(modes) > 1:
            raise ValueError(
                f"{batch.describe()} takes the seeds of all its sub-envs at once, with one dynamic_seed: "
                f"seed every id {batch.first}..{batch.stop - 1} together "
                f"(unseeded: {unseeded}, dynamic_seed values: {sorted(modes, key=str)})"
            )
        dynamic = modes.pop()
        batch.env.seed([seed[0] for seed in seeds], dynamic_seed=True if dynamic is None else dynamic)
        batch.seeded = seeds

    @staticmethod
    def _sub_ids(batch: HostedBatch, env_ids: np.ndarray) -> np.ndarray | None:
        """The sub-env ids of ``env_ids`` (None: every sub-env, in order)."""
        return None if len(env_ids) == batch.num_envs else env_ids - batch.first

    def _renew_or_fail(self, batch: HostedBatch, env_id: int) -> None:
        """``renew``, a constructor that fails then being the ``EnvError`` of ``env_id``'s reset."""
        try:
            self.renew(batch)
        except Exception as error:  # noqa: BLE001 - re-raised naming the batch env's ids
            raise batch.error(error, env_id, Op.RESET) from error

    def renew(self, batch: HostedBatch) -> None:
        """Replace a batch env with a fresh one from its constructor (seeded again at its next reset)."""
        old = batch.env
        batch.build()
        if self.on_renew is not None:
            self.on_renew(batch.first, batch.stop, batch.env)
        for env_id in range(batch.first, batch.stop):
            self.forget_sampler(env_id)
        close_throwaway(old, f"before its renewal as {batch.describe()}")  # a broken env may fail to close

    # ---- step ----------------------------------------------------------

    def step(
        self,
        batch: HostedBatch,
        env_ids: np.ndarray,
        actions: Any,
        resets: np.ndarray,
        rows: Any,
        infos: dict[int, dict],
        errors: dict[int, EnvError],
        put_rows: PutRows | None = None,
    ) -> None:
        """Step ``env_ids`` (increasing, all of ``batch``'s) with stacked ``actions``; write their rows of ``rows``.

        Done ids whose flag in ``resets`` is set are reset with one call; their ready rows get the
        reset observations, the step rows keep the final ones. Never raises: failures go to ``errors``.
        ``put_rows`` (the workers' ``InfoWriter.put_rows``) stores infos without a dict per row; the
        rows it leaves, and every row without it, get their info in ``infos``.
        """
        if len(env_ids) == batch.num_envs:  # the batch env's every id (the usual step): its rows, with no lookup
            index: slice | np.ndarray = slice(batch.first - rows.first, batch.stop - rows.first)
        else:  # env_ids increase: they are consecutive exactly when they span their count
            start = int(env_ids[0]) - rows.first
            consecutive = int(env_ids[-1]) - rows.first - start == len(env_ids) - 1
            index = slice(start, start + len(env_ids)) if consecutive else env_ids - rows.first
        try:
            if self.step_timeout is None:  # no context manager to enter and leave on every step
                record = batch.env.step(actions, self._sub_ids(batch, env_ids))
            else:
                with time_limit(self.step_timeout, int(env_ids[0]), Op.STEP):
                    record = batch.env.step(actions, self._sub_ids(batch, env_ids))
            self.check(record.obs, len(env_ids), "step obs")
            arrays.write(rows.step_obs, index, record.obs)
            rows.rewards[index] = record.reward
            rows.done_flags[index] = done = record.terminated | record.truncated
            rows.truncated_flags[index] = record.truncated
            ended = self._read_infos(record, env_ids, done, infos, put_rows)
        except Exception as error:  # noqa: BLE001 - every stepped id gets an abnormal row and the error
            self._fail_step(batch, env_ids, index, resets, error, rows, infos, errors)
            return
        # Every row shows its step's observation next; a row whose episode ended gets its reset one below,
        # and one that is not reset needs a reset before its row is read again.
        arrays.write(rows.ready_obs, index, record.obs)
        if ended is None:
            return
        due = ended[resets[ended]]
        if len(due):
            due_ids = env_ids[due]
            try:  # an id's row is its offset from the rows' first id, whatever index is
                ready_rows = due_ids - rows.first if rows.first else due_ids
                arrays.write(rows.ready_obs, ready_rows, self.reset(batch, due_ids, within_step=True))
            except (EnvError, EnvTimeoutError) as error:  # the step's results stand; these ids need a reset
                errors.update(dict.fromkeys(due_ids.tolist(), error))

    @staticmethod
    def _read_infos(
        record: Any, env_ids: np.ndarray, done: np.ndarray, infos: dict[int, dict], put_rows: PutRows | None
    ) -> np.ndarray | None:
        """Put each stepped id's info into ``infos``; the positions of the rows whose episode ended (None: none).

        A running sub-env's info reaches the caller on every step, as a ``BaseEnv``'s does; a done row's
        carries ``truncated`` and ``eval_episode_return`` too. The rows ``put_rows`` stores skip ``infos``.
        """
        info = record.info
        if info:
            going = (~done).nonzero()[0]
            if put_rows is not None and len(going):
                if len(going) == len(done):  # no episode ended: the info's own columns, with no copy
                    stored = put_rows(env_ids, info)
                else:
                    stored = put_rows(env_ids[going], {key: value[going] for key, value in info.items()})
                going = going[:0] if stored is None else going[~stored]
            for position in going.tolist():
                infos[int(env_ids[position])] = info_row(info, position)
        ended = done.nonzero()[0]  # done is flat: the method, without flatnonzero's Python layers
        if not len(ended):
            return None
        left, returns = ended, record.episode_return[ended]
        # The columns final_info would give each done row, in its key order: the info's keys, then its own
        # (unless the info has a key of final_info's, which it overwrites in place, or the returns are not floats).
        if put_rows is not None and returns.dtype.kind == "f" and not (info and not _FINAL_KEYS.isdisjoint(info)):
            columns = {key: value[ended] for key, value in info.items()} if info else {}
            columns["truncated"] = record.truncated[ended]
            columns["eval_episode_return"] = returns
            stored = put_rows(env_ids[ended], columns, None if info else FINAL_SCHEMA)
            if stored is None:  # every done row's info is in the table
                return ended
            left = ended[~stored]
        for position, env_id, episode_return, truncated in zip(
            left.tolist(),
            env_ids[left].tolist(),
            record.episode_return[left].tolist(),
            record.truncated[left].tolist(),
            strict=True,
        ):
            infos[env_id] = final_info(info_row(info, position) if info else None, episode_return, truncated)
        return ended

    def _fail_step(self, batch, env_ids, index, resets, error, rows, infos, errors) -> None:
        """Write the abnormal rows of a batch env's failed step; renew it and reset the due ids with 'abnormal'.

        A step cut at ``step_timeout`` is an ``EnvTimeoutError`` naming every id stepped. Without 'abnormal' the
        batch env is kept: the ids stepped need a reset, and its other sub-envs go on (renewing it would end their
        episodes under their caller). With 'abnormal' it is renewed only when every sub-env was stepped; a step
        of some of them keeps it and resets the ids due on it, so the others go on there too.
        """
        if isinstance(error, EnvTimeoutError):
            failure = EnvTimeoutError(env_ids.tolist(), Op.STEP, error.timeout, grouped=True)
        else:
            failure = batch.error(error, int(env_ids[0]), Op.STEP)
        failure.__cause__ = error
        arrays.write(rows.step_obs, index, arrays.take(rows.ready_obs, index))
        rows.rewards[index] = 0
        rows.done_flags[index], rows.truncated_flags[index] = True, False
        for env_id in env_ids.tolist():
            infos[env_id] = abnormal_info(failure)
            errors[env_id] = failure
        if self.settings.step_error != "abnormal":  # the stepped ids need a reset; the others go on
            return
        due = np.flatnonzero(resets)
        try:
            if len(env_ids) == batch.num_envs:  # no sub-env left out of the step has an episode to lose
                self.renew(batch)
            if len(due):
                arrays.write(rows.ready_obs, _at(index, due), self.reset(batch, env_ids[due], within_step=True))
        except (EnvError, EnvTimeoutError) as reset_error:
            errors.update(dict.fromkeys(env_ids.tolist(), reset_error))
        except Exception as build_error:  # noqa: BLE001 - a constructor that fails to build the env again
            errors.update(dict.fromkeys(env_ids.tolist(), batch.error(build_error, int(env_ids[0]), Op.RESET)))

    # ---- attributes and close -------------------------------------------

    def close(self) -> list[EnvError]:
        """Close every batch env; an ``EnvError`` (naming its ids) for each that failed."""
        failures = []
        for batch in self.batches.values():
            if batch.env is None:
                continue
            try:
                batch.env.close()
            except Exception as error:  # noqa: BLE001 - close them all, then report
                failures.append(batch.error(error, batch.first, Op.CLOSE))
            batch.env = None
        return failures


def _no_check(obs: Any, rows: int, field: str) -> None:
    """The check of stacked observations when no layout is set."""


def _at(index: slice | np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The rows at ``positions`` of the rows ``index`` (a slice or an index array)."""
    if isinstance(index, slice):
        return positions + index.start
    return index[positions]


def batch_hosted(entries: Mapping[int, Callable[[], Any] | BatchSlot]) -> dict[int, BatchSlot]:
    """The entries of ``entries`` that are sub-envs of batch envs."""
    return {env_id: entry for env_id, entry in entries.items() if isinstance(entry, BatchSlot)}

"""``Shares``: the backends of one manager, each hosting a consecutive share of the env ids.

Routes every request by env id: a step is sent to every backend involved before any result is
collected (workers and the calling process step at once), and results come back merged, row
``k`` for the ``k``-th env asked for.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ding_env.env_manager import arrays
from ding_env.env_manager.backends.base import Backend, Spaces
from ding_env.env_manager.backends.hosted_env import check_same_spaces
from ding_env.env_manager.failures import raise_close_failures
from ding_env.env_manager.outcome import TimestepBatch, empty_batch, in_id_order, in_order, joined, reordered
from ding_env.errors import DingEnvError, EnvError

# How long an early-returning manager sleeps at most between looks at its backends (seconds).
WAIT_SLICE_SECONDS = 0.05


class Shares:
    """Routes requests for env ids to the backends hosting them."""

    def __init__(self, backends: list[Backend]) -> None:
        self.backends = backends
        self.single = backends[0] if len(backends) == 1 else None
        # A synchronous step sent in increasing id order: its ids, reset flags and each backend's ids.
        self.sent_in_order: tuple[np.ndarray, np.ndarray, list[np.ndarray]] | None = None
        self.collect_order = sorted(backends, key=lambda backend: not backend.steps_when_collected)
        # The index of the backend hosting each env id.
        self.owner = np.concatenate([np.full(len(b.env_ids), i) for i, b in enumerate(backends)])
        # The first env id of every backend but the first: where increasing env ids pass to the next backend.
        self.bounds = np.array([backend.env_ids[0] for backend in backends[1:]], dtype=np.int64)
        # Every env id, increasing (most steps): each backend's whole run, its ids read-only as they are shared.
        self.whole_runs = []
        for backend in backends:
            ids = np.array(backend.env_ids, dtype=np.int64)
            ids.flags.writeable = False
            self.whole_runs.append((backend, ids, slice(backend.env_ids[0], backend.env_ids[-1] + 1)))

    def poll(self) -> int:
        """Let every backend take in the results that arrived; how many envs have results to hand over."""
        if self.single is not None:
            return self.single.poll()
        return sum(backend.poll() for backend in self.backends)

    @classmethod
    def launch(cls, backends: list[Backend]) -> tuple[Shares, Spaces]:
        """Launch every backend; the shares and the envs' spaces (as the first backend reports them).

        When one fails, or an env's spaces are not the first env's, those launched are closed and the error is raised.
        """
        launched: list[Backend] = []
        launched_spaces: list[Spaces] = []
        try:
            for backend in backends:
                launched_spaces.append(backend.launch())
                launched.append(backend)
            check_spaces_alike(launched, launched_spaces)
        except BaseException as error:
            try:
                raise_close_failures(cls(launched).close() if launched else [])
            except DingEnvError as close_error:
                error.add_note(f"closing the envs launched before also failed: {close_error}")
            raise
        return cls(launched), launched_spaces[0]

    def close(self) -> list[EnvError]:
        """Close every backend, whatever another reports or raises; the failures of all.

        Raises:
            The first backend's exception, once every backend was closed.
        """
        failures: list[EnvError] = []
        raised: list[BaseException] = []
        # Servers close at once rather than one after another: one stuck in a step makes its close wait.
        for backend in self.backends:
            try:
                backend.request_close()
            except Exception as error:  # noqa: BLE001 - raised once every backend was closed
                raised.append(error)
        for backend in self.backends:
            try:
                failures += backend.close()
            except BaseException as error:  # noqa: BLE001 - the other backends close first, then it is raised
                raised.append(error)
        if raised:
            raise raised[0]
        return failures

    def ready_obs(self, env_ids: np.ndarray, copy: bool) -> Any:
        """The stacked ready observations of ``env_ids`` (increasing, as ``ledger.ready_ids`` gives them).

        Copies unless ``copy`` is False.
        """
        if not len(env_ids):
            return None
        if self.single is not None:
            obs = self.single.ready_obs(env_ids)
            return arrays.copy_tree(obs) if self.single.views and copy else obs
        return arrays.concatenate([backend.ready_obs(ids) for backend, ids, _ in self.split_increasing(env_ids)])

    def ready_obs_rows(self, env_ids: np.ndarray, copy: bool) -> list[Any]:
        """The ready observation of each of ``env_ids`` (increasing), one tree per env.

        Copies unless ``copy`` is False.
        """
        if not len(env_ids):
            return []
        # Observations from several backends are joined into new arrays: their rows need no copy.
        views = self.single is not None and self.single.views
        return arrays.split_rows(self.ready_obs(env_ids, copy=False), len(env_ids), copy and views)

    def backend_of(self, env_id: int) -> Backend:
        """The backend hosting ``env_id``."""
        return self.backends[int(self.owner[env_id])]

    def split(self, env_ids: np.ndarray) -> list[tuple[Backend, np.ndarray]]:
        """``(backend, rows of env_ids it hosts)`` for each backend hosting some of ``env_ids``."""
        owners = self.owner[env_ids]
        return [(b, rows) for i, b in enumerate(self.backends) if len(rows := np.flatnonzero(owners == i))]

    def split_increasing(self, env_ids: np.ndarray) -> list[tuple[Backend, np.ndarray, slice]]:
        """``(backend, its ids, their rows)`` for each backend hosting some of the increasing ``env_ids``.

        Each backend's ids are a run of ``env_ids``, so one search finds every run, and the rows are
        slices (views, where ``split`` builds index arrays).
        """
        if len(env_ids) == len(self.owner):  # distinct ids, as many as there are envs: all of them
            return self.whole_runs
        cuts = [0, *np.searchsorted(env_ids, self.bounds).tolist(), len(env_ids)]
        return [
            (backend, env_ids[start:stop], slice(start, stop))
            for backend, start, stop in zip(self.backends, cuts[:-1], cuts[1:], strict=True)
            if stop > start
        ]

    def each(self, env_ids: list[int], ask: Callable[[Backend, list[int]], list | None]) -> list:
        """``ask(backend, its ids)`` for each backend hosting some of ``env_ids``; the answers in ``env_ids`` order."""
        if self.single is not None:
            return ask(self.single, env_ids) or [None] * len(env_ids)
        answer_of: dict[int, Any] = {}
        for backend, rows in self.split(np.asarray(env_ids, dtype=np.int64)):
            ids = [env_ids[row] for row in rows.tolist()]
            answer_of.update(zip(ids, ask(backend, ids) or [None] * len(ids), strict=True))
        return [answer_of[env_id] for env_id in env_ids]

    def send(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray) -> None:
        """Start stepping ``env_ids`` in every backend hosting some of them."""
        if self.single is not None:
            self.single.send(env_ids, actions, reset_on_done)
            return
        self.sent_in_order = None
        if not in_order(env_ids.tolist()):  # the order of a dict of actions
            for backend, rows in self.split(env_ids):
                backend.send(env_ids[rows], arrays.take(actions, rows), reset_on_done[rows])
            return
        parts = self.split_increasing(env_ids)
        for backend, share_ids, rows in parts:
            backend.send(share_ids, arrays.take(actions, rows), reset_on_done[rows])
        self.sent_in_order = (env_ids, reset_on_done, [share_ids for _, share_ids, _ in parts])

    def collect(self, order: np.ndarray) -> tuple[TimestepBatch | None, bool]:
        """The results of every env sent, rows in the order of the env ids ``order`` (the synchronous step).

        Envs a backend adds (the idle envs of a lost worker) come after the ones asked for.

        Returns:
            The batch (None when no env was sent), and whether its arrays may be views of a backend's
            buffers (results joined from several backends are new arrays, the caller's already).
        """
        if self.single is not None:
            batch = self.single.collect(True)
            # Rows to put in order: a sorting backend's, sent out of order, and any with envs added.
            if batch is not None and (
                len(batch.env_id) != len(order) or (self.single.returns_sorted and not in_order(order.tolist()))
            ):
                return in_caller_order(batch, order), False
            return batch, self.single.views
        outcomes = self.collect_outcomes(True)
        sent, self.sent_in_order = self.sent_in_order, None
        if (
            sent is not None
            and len(outcomes) == len(sent[2]) > 1
            and all(outcome.env_id is ids for (_, outcome), ids in zip(outcomes, sent[2], strict=True))
        ):
            # Each backend returned the envs it was sent, which were in the caller's order: no ids to join or check.
            return joined([outcome for _, outcome in outcomes], env_id=sent[0], reset_on_done=sent[1]), False
        merged, views = self.joined_outcomes(outcomes)
        if merged is not None and not np.array_equal(order, merged.env_id):
            merged, views = in_caller_order(merged, order), False
        return merged, views

    def collect_each(self, wait: bool) -> tuple[TimestepBatch | None, bool]:
        """Every backend's ``collect(wait)``, joined in backend order (None when none had results).

        Returns:
            The batch, and whether its arrays may be views of a backend's buffers.
        """
        if self.single is not None:
            return self.single.collect(wait), self.single.views
        return self.joined_outcomes(self.collect_outcomes(wait))

    def collect_outcomes(self, wait: bool) -> list[tuple[Backend, TimestepBatch]]:
        """``(backend, its collect(wait))`` for each backend that had results, in backend order."""
        # Backends that step in this process run first, while the others step in theirs; the others
        # are collected even if one raises, so none is left with a step in flight (but a Ctrl-C is not kept waiting).
        collected: dict[int, TimestepBatch | None] = {}
        try:
            for backend in self.collect_order:
                collected[id(backend)] = backend.collect(wait)
        except KeyboardInterrupt:
            raise  # at once: each backend settles its step in flight before its next request (reset, call, close)
        except BaseException:
            for backend in self.collect_order:
                if id(backend) not in collected:
                    collected[id(backend)] = backend.collect(wait)
            raise
        return [(backend, outcome) for backend in self.backends if (outcome := collected[id(backend)]) is not None]

    @staticmethod
    def joined_outcomes(outcomes: list[tuple[Backend, TimestepBatch]]) -> tuple[TimestepBatch | None, bool]:
        """The outcomes joined in their order (None for none), and whether the result may be a backend's views."""
        if len(outcomes) == 1:  # a step only one backend took part in: its outcome as it is
            return outcomes[0][1], outcomes[0][0].views
        return (joined([outcome for _, outcome in outcomes]) if outcomes else None), False

    def collect_early(self, wait_num: int, timeout: float | None, spaces: tuple) -> tuple[TimestepBatch, bool]:
        """The managers' one wait loop: results once ``wait_num`` envs have them, or some after ``timeout`` seconds.

        Every manager that returns early (the async ones) waits here; backends only take in what
        arrived (``poll``) and sleep until more may have (``wait``).

        Args:
            wait_num: Envs whose results to wait for.
            timeout: Seconds after which any results are enough (None: wait for ``wait_num``).
            spaces: The envs' spaces, to shape a step that returns no env.

        Returns:
            The results in increasing env id order, and whether their arrays may be views of a backend's
            buffers.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            count = self.poll()
            if count >= wait_num or (count and deadline is not None and time.monotonic() >= deadline):
                break
            left = WAIT_SLICE_SECONDS if deadline is None else max(0.0, deadline - time.monotonic())
            share = (min(WAIT_SLICE_SECONDS, left) or WAIT_SLICE_SECONDS) / len(self.backends)
            for backend in self.backends:
                backend.wait(share)
        batch, views = self.collect_each(False)
        if batch is None:
            return empty_batch(spaces), False
        ordered = in_id_order(batch)
        return ordered, views and ordered is batch


def in_caller_order(batch: TimestepBatch, order: np.ndarray) -> TimestepBatch:
    """``batch`` with the envs ``order`` first, in that order; envs a backend added after them."""
    extra = np.setdiff1d(batch.env_id, order, assume_unique=True)
    return reordered(batch, np.concatenate([order, extra]) if len(extra) else order)


def check_spaces_alike(backends: list[Backend], spaces: list[Spaces]) -> None:
    """Refuse the env of lowest id whose spaces are not the first env's (``EnvError`` naming it).

    Args:
        backends: The launched backends, in env id order.
        spaces: The spaces each returned at launch.
    """
    distinct: dict[int, Spaces] = {}
    for backend, backend_spaces in zip(backends, spaces, strict=True):
        distinct.update(backend.distinct_spaces or {backend.env_ids[0]: backend_spaces})
    first = backends[0].env_ids[0]
    for env_id in sorted(distinct):
        check_same_spaces(env_id, distinct[env_id], first, spaces[0])

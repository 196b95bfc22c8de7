"""The interface between an env manager and the backends that host its envs.

A backend hosts a share of a manager's envs, the consecutive global env ids ``env_ids``, and
does what the manager asks of them, the operations of ``ding_env.ops.Op``: launch, seed, reset,
step, call, get/set attributes, close. It never writes the manager's state (statuses, episode
counts, auto-reset decisions, seeds): everything it needs comes in the arguments of its methods,
its typed settings (``settings.py``) and the envs' ``EnvSetup`` (seeds and reset kwargs, which the
manager owns and the backend only reads), and the two things only a backend can notice and only
the manager can settle (a worker lost with the envs it hosted) go back through the small
:class:`Ledger` the manager gives it.

A step is ``send``, then ``collect``; a manager that returns early (async) waits in between in
``Shares.collect_early``, asking each backend to ``poll`` (take in what arrived) and ``wait``.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol

import gymnasium as gym
import numpy as np

from ding_env.env_manager.backends.settings import EnvSetup
from ding_env.env_manager.outcome import TimestepBatch
from ding_env.errors import DingEnvError, EnvError

Spaces = tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space]


def consecutive_shares(env_ids: list[int], count: int) -> list[list[int]]:
    """``env_ids`` cut into ``count`` consecutive runs whose sizes differ by at most one (for backends or workers)."""
    bounds = np.linspace(0, len(env_ids), count + 1).round().astype(int)
    return [env_ids[bounds[share] : bounds[share + 1]] for share in range(count)]


class WorkerView(NamedTuple):
    """One worker process of a manager, as the ``workers`` diagnostic shows it.

    Attributes:
        pid: The worker's process id (a replaced worker has a new one).
        env_ids: The env ids it hosts.
    """

    pid: int
    env_ids: list[int]


class Ledger(Protocol):
    """What a backend may tell its manager about envs it lost (the manager implements it)."""

    def claim_idle(self, env_ids: list[int]) -> dict[int, bool]:
        """Of ``env_ids`` (envs whose worker was lost in a step), those in an episode and not stepping.

        The manager marks them stepping and returns their auto-reset flags; the backend returns an
        abnormal result for each in its step outcome.
        """

    def lose(self, env_ids: list[int]) -> None:
        """``env_ids`` lost their episodes outside a step (their worker was replaced): they need a reset."""


class Backend(abc.ABC):
    """Hosts the envs ``env_ids`` of a manager.

    Args:
        env_fns: ``{env_id: constructor}`` of the hosted envs.
        name: Names the manager in errors.
        ledger: Where lost envs are reported.
        setup: The envs' seeds and reset kwargs (the manager's; read, never written).
    """

    # Whether the batches this backend returns are views of buffers its next call reuses.
    views = False
    # Whether its steps run in the calling process when collected (other backends step meanwhile).
    steps_when_collected = False
    # Whether a step's results come back in increasing env id order, whatever order they were sent in.
    returns_sorted = False
    # Set by launch where the backend reads each env's spaces: those of the first env of each process and of
    # every env whose spaces differ from it (empty: every env has the spaces ``launch`` returned).
    distinct_spaces: Mapping[int, Spaces] = MappingProxyType({})

    def __init__(self, env_fns: Mapping[int, Callable[[], Any]], name: str, ledger: Ledger, setup: EnvSetup) -> None:
        self.env_fns = dict(env_fns)
        self.env_ids = list(self.env_fns)
        self.name = name
        self.ledger = ledger
        self.setup = setup

    @abc.abstractmethod
    def launch(self) -> Spaces:
        """Build the envs (and workers), seeded as the setup says; return the observation, action and reward spaces."""

    @abc.abstractmethod
    def seed(self, env_id: int) -> None:
        """Seed one env with its seed in the setup; it takes effect at its next reset."""

    def check_seed(self, env_id: int, seed: int) -> None:  # noqa: B027 - optional: every int seed by default
        """Raise ``ConfigError`` when env ``env_id`` cannot take ``seed`` (a valid int) here."""

    @abc.abstractmethod
    def reset(self, env_ids: list[int]) -> tuple[list[int], list[DingEnvError]]:
        """Reset ``env_ids`` with their reset kwargs in the setup; the ids now ready and the errors of the others."""

    def cancel(self, env_ids: list[int]) -> None:  # noqa: B027 - optional: a no-op for most backends
        """Drop the steps of ``env_ids`` still in flight, before they are reset (none by default)."""

    @abc.abstractmethod
    def send(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray) -> None:
        """Start stepping ``env_ids``.

        Args:
            env_ids: Distinct int64 env ids, in the caller's order (increasing in most steps; a dict of
                actions gives its own order).
            actions: Stacked actions (row ``k`` for ``env_ids[k]``) or a list of per-env actions.
            reset_on_done: Whether each env restarts at once if its episode ends.
        """

    @abc.abstractmethod
    def poll(self) -> int:
        """Take in the results that arrived; how many envs ``collect(wait=False)`` would hand over now."""

    def wait(self, timeout: float) -> None:  # noqa: B027 - optional: backends whose results are ready at once
        """Sleep until some result may have arrived, at most ``timeout`` seconds."""

    @abc.abstractmethod
    def collect(self, wait: bool) -> TimestepBatch | None:
        """Hand over results: with ``wait``, of every env sent so far; else of those finished (or None)."""

    @abc.abstractmethod
    def ready_obs(self, env_ids: np.ndarray) -> Any:
        """The ready observations of ``env_ids`` (increasing), stacked."""

    @abc.abstractmethod
    def call(self, env_ids: list[int], name: str, args: tuple, kwargs: dict) -> list:
        """Call method ``name`` of each env; one result per env (an env's exception raises ``EnvError``)."""

    @abc.abstractmethod
    def get_attr(self, env_ids: list[int], name: str) -> list:
        """Attribute ``name`` of each env, as ``status.read_attribute`` gives it."""

    @abc.abstractmethod
    def set_attr(self, env_ids: list[int], name: str, values: list) -> None:
        """Set attribute ``name`` of each env to its value."""

    def worker_views(self) -> list[WorkerView]:
        """The worker processes of this backend (none for envs in the calling process)."""
        return []

    def request_close(self) -> None:  # noqa: B027 - optional: most backends close their envs in ``close``
        """Ask the envs to close without waiting; ``close`` then waits (servers on other machines close at once)."""

    @abc.abstractmethod
    def close(self) -> list[EnvError]:
        """Close every env (and worker); an ``EnvError`` (command ``close``) for each env that failed to close."""

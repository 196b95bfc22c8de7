"""``EnvLayout``: which env ids each ``env_fn`` gives a manager, when some build batch envs.

An ``env_fn`` may return a ``BaseEnv`` (one env id) or a ``BaseBatchEnv`` of ``num_envs`` sub-envs
(that many consecutive env ids, sub-env ``k`` being id ``first + k``). The manager builds each
``env_fn`` once when it is made (envs are lazy: cheap, nothing is reset) to read its kind and size,
then hands its backends one entry per env id: the ``env_fn`` itself for a ``BaseEnv``, a
:class:`BatchSlot` for a sub-env. A batch env is never split between backends or workers: shares
are cut only where a batch env ends (:meth:`EnvLayout.shares`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ding_env.env.batch_env import BaseBatchEnv
from ding_env.env.ding_env_wrapper import DingEnvWrapper
from ding_env.env_manager.backends.hosted_env import close_throwaway
from ding_env.errors import ConfigError
from ding_env.summary import describe_value


class BatchSlot(NamedTuple):
    """What a backend builds the env id ``first + sub_id`` from: sub-env ``sub_id`` of ``fn()``'s batch env.

    Attributes:
        fn: The ``env_fn`` returning the batch env.
        first: The env id of its sub-env 0.
        sub_id: This id's sub-env.
        num_envs: Its number of sub-envs.
        lockstep: Whether it steps all its sub-envs together (``BaseBatchEnv.lockstep``).
    """

    fn: Callable[[], BaseBatchEnv]
    first: int
    sub_id: int
    num_envs: int
    lockstep: bool


def describe_batch(first: int, num_envs: int, env: Any = None) -> str:
    """Names a batch env by the env ids it hosts, for error messages."""
    name = "" if env is None else f" {env!r}"
    return f"batch env{name} hosting env ids {first}..{first + num_envs - 1} (sub-envs 0..{num_envs - 1})"


class EnvLayout:
    """The env ids of a manager's ``env_fn`` list.

    Args:
        env_fns: The manager's constructors, checked callable.

    Attributes:
        entries: One entry per env id: an ``env_fn`` (a ``BaseEnv``) or a ``BatchSlot``.
        batches: ``(first, num_envs, lockstep)`` of every batch env, in id order.
    """

    def __init__(self, env_fns: Sequence[Callable[[], Any]]) -> None:
        self.entries: list[Callable[[], Any] | BatchSlot] = []
        self.batches: list[tuple[int, int, bool]] = []
        probed: dict[int, tuple[int | None, bool]] = {}  # ``[fn] * n`` is probed once
        for fn in env_fns:
            size, lockstep = probed[id(fn)] = probed[id(fn)] if id(fn) in probed else _batch_size(fn)
            if size is None:
                self.entries.append(fn)
                continue
            first = len(self.entries)
            self.batches.append((first, size, lockstep))
            self.entries += [BatchSlot(fn, first, sub_id, size, lockstep) for sub_id in range(size)]
        self.has_batches = bool(self.batches)
        self.lockstep = [(first, size) for first, size, lockstep in self.batches if lockstep]
        self.env_num = len(self.entries)

    def batch_of(self, env_id: int) -> BatchSlot | None:
        """The slot of ``env_id`` when a batch env hosts it, else None."""
        entry = self.entries[env_id]
        return entry if isinstance(entry, BatchSlot) else None

    def check_seeded(self, owner: str, env_ids: Iterable[int]) -> None:
        """Refuse seeds for some sub-envs of a batch env: it takes all at once, and would restart every stream.

        Raises:
            ValueError: Naming the batch env and the ids left out.
        """
        self._refuse_partly_named(
            owner, env_ids, "seed()", "which takes the seeds of all its sub-envs at once", "seed {} with them"
        )

    def check_attribute(self, owner: str, name: str, value_of: dict[int, Any]) -> None:
        """Refuse an attribute value for some sub-envs of a batch env, or different values: it has one attribute.

        Raises:
            ValueError: Naming the batch env and the ids left out, or the values given.
        """
        self._refuse_partly_named(
            owner,
            value_of,
            f"set_env_attr({name!r})",
            "whose sub-envs share its one attribute",
            "set {} too, to the same value",
        )
        for first, size, _ in self.batches:
            values = [value_of[env_id] for env_id in range(first, first + size) if env_id in value_of]
            if not all(_same(value, values[0]) for value in values[1:]):
                raise ValueError(
                    f"{owner}: set_env_attr({name!r}) gives the sub-envs of the {describe_batch(first, size)} "
                    f"different values, {describe_value(values)}; they share its one attribute: give them one value"
                )

    def check_reset_params(self, owner: str, params: dict[int, dict]) -> None:
        """Refuse reset kwargs for a batch env's sub-env: a batch env takes none.

        Raises:
            ValueError: Naming the env id and the batch env hosting it.
        """
        for env_id, param in params.items():
            slot = self.batch_of(env_id) if param else None
            if slot is not None:
                raise ValueError(
                    f"{owner}: reset_param for env {env_id}: it is sub-env {slot.sub_id} of a "
                    f"{describe_batch(slot.first, slot.num_envs)}, which takes no reset kwargs; got {param!r}"
                )

    def check_lockstep_config(self, owner: str, returns_early: bool, cfg: Any) -> None:
        """Refuse the manager settings a lockstep batch env cannot keep: it steps every sub-env at every step.

        Args:
            owner: The manager, for the message.
            returns_early: Whether the manager returns once some of the envs it steps have results (async).
            cfg: The manager config.

        Raises:
            ConfigError: For the async managers, a finite ``episode_num`` or ``auto_reset=False``.
        """
        first, size = self.lockstep[0]
        where = f"{owner}: env ids {first}..{first + size - 1} are a lockstep batch env (all its sub-envs step"
        if returns_early:
            raise ConfigError(f"{where} together), which needs a manager that returns every env it steps, not this one")
        if cfg.episode_num != float("inf") or not cfg.auto_reset:
            raise ConfigError(
                f"{where} together, each always running): it needs episode_num=inf and auto_reset=True, got "
                f"episode_num={cfg.episode_num}, auto_reset={cfg.auto_reset}"
            )

    def check_lockstep_step(self, owner: str, env_ids: np.ndarray) -> None:
        """Refuse a step naming some but not all ids of a lockstep batch env.

        Raises:
            ValueError: Naming the batch env's ids and how many of them ``env_ids`` holds.
        """
        for first, size in self.lockstep:
            count = np.count_nonzero((env_ids >= first) & (env_ids < first + size))
            if count not in (0, size):
                raise ValueError(
                    f"{owner}: env ids {first}..{first + size - 1} are a lockstep batch env: step all of them "
                    f"together or none, got {count} of them in env ids {describe_value(env_ids)}"
                )

    def _refuse_partly_named(self, owner: str, env_ids: Iterable[int], call: str, why: str, fix: str) -> None:
        """Raise ``ValueError`` for the first batch env some of whose sub-envs ``env_ids`` name, but not all.

        ``fix`` is formatted with the ids left out.
        """
        if not self.has_batches:
            return
        named = set(env_ids)
        for first, size, _ in self.batches:
            left_out = [env_id for env_id in range(first, first + size) if env_id not in named]
            if left_out and len(left_out) < size:
                raise ValueError(
                    f"{owner}: {call} names some env ids of the {describe_batch(first, size)}, {why}: "
                    f"{fix.format(left_out)}"
                )


def _same(value: Any, other: Any) -> bool:
    """Whether two attribute values are the same: nested dicts, lists and tuples item by item, arrays by element."""
    if value is other:
        return True
    if isinstance(value, dict) and isinstance(other, dict):
        return value.keys() == other.keys() and all(_same(value[key], other[key]) for key in value)
    if isinstance(value, (list, tuple)) and type(value) is type(other):
        return len(value) == len(other) and all(_same(a, b) for a, b in zip(value, other, strict=True))
    try:
        equal = value == other
        if isinstance(equal, (bool, np.bool_)):
            return bool(equal) or (_is_nan(value) and _is_nan(other))
        return bool(np.array_equal(value, other, equal_nan=True))
    except (TypeError, ValueError, RuntimeError):  # values that cannot be compared count as different
        return False


def _is_nan(value: Any) -> bool:
    return isinstance(value, (float, np.floating)) and bool(np.isnan(value))


def is_cut_point(entries: Sequence[Any], env_id: int) -> bool:
    """Whether a share may start at ``env_id`` (not inside a batch env; ``len(entries)`` ends every share)."""
    entry = entries[env_id] if env_id < len(entries) else None
    return not isinstance(entry, BatchSlot) or entry.sub_id == 0


def layout_shares(entries: Sequence[Any], env_ids: list[int], count: int) -> list[list[int]]:
    """The consecutive ``env_ids`` cut into at most ``count`` runs of near-equal size, never inside a batch env.

    Args:
        entries: Every env id's entry (``EnvLayout.entries``, or a backend's entries by id).
        env_ids: Consecutive ids, whole batch envs.
        count: The most runs wanted.
    """
    if not env_ids:
        return []
    start, stop = env_ids[0], env_ids[-1] + 1
    points = np.array([env_id for env_id in range(start, stop + 1) if is_cut_point(entries, env_id)])
    # Each evenly spaced bound (as consecutive_shares rounds it) moves to the nearest cut point; empty runs are dropped.
    bounds = sorted(
        {int(points[np.abs(points - bound).argmin()]) for bound in np.linspace(start, stop, count + 1).round()}
    )
    return [list(range(low, high)) for low, high in zip(bounds, bounds[1:], strict=False)]


def _batch_size(fn: Callable[[], Any]) -> tuple[int | None, bool]:
    """``(num_envs, lockstep)`` when ``fn()`` is a batch env, else ``(None, False)``.

    ``fn`` is called once: envs are lazy, so this is cheap. A batch env is closed again, and so is a
    ``DingEnvWrapper`` (a factory may make its Gymnasium env at once, whose resources the wrapper's
    ``close`` releases, safely before any reset); another env is left as built, never reset: its
    ``close`` is its author's code, which might hang or fail on an env never reset, here in the caller's
    process before any launch.
    One that raises counts as one env (its error is the launch's to report, with its env id).
    """
    try:
        env = fn()
    except Exception:  # noqa: BLE001 - raised again, named with its env id, when launch builds the env
        return None, False
    try:
        if isinstance(env, BaseBatchEnv):
            return env.num_envs, bool(env.lockstep)
        return None, False
    finally:
        if isinstance(env, (BaseBatchEnv, DingEnvWrapper)):
            close_throwaway(env, "before any reset (a manager builds each env_fn's env once to tell batch envs apart)")


def describe_entry(entry: Any) -> str:
    """The repr of the env ``entry`` (a constructor or a ``BatchSlot``) builds, or '' when building it fails.

    Envs are lazy (``BaseEnv``'s contract): building one to name it starts no simulator. A client compares
    the name with its own constructor's (``backends.remote.RemoteBackend.connect``).
    """
    fn = getattr(entry, "fn", entry)  # a BatchSlot names its batch env's constructor
    try:
        return repr(fn())
    except Exception:  # noqa: BLE001 - a name is a courtesy: an env that cannot be built here is not named
        return ""

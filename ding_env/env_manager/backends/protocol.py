"""What a worker backend and its worker processes say to each other: typed records on a pipe, words in shared memory.

Requests travel on a worker's pipe, one record each, named by an ``Op`` (``ding_env.ops``, the
vocabulary the env server's messages use too); the worker handles them in one table
(``worker.HANDLERS``) and answers each with a :class:`Reply` or a :class:`Failure`. Errors
cross by their fields (env id, op, message, the env's traceback), so neither side parses error
text. Records are pickled: the pipe joins two processes of one machine, never two machines.

A step is commanded through shared memory instead: the backend writes the actions, the step
mask and auto-reset flags, sets the worker's command word to ``CMD_STEP`` (``CMD_PIPE``: a
request waits on the pipe) and posts its command semaphore. The worker steps, writes the
results, sets its status word (``REPORT_ON_PIPE``: a :class:`StepReport` with infos or errors
follows on the pipe; ``INFOS_IN_TABLE``: infos of a known form wait in the shared info table,
``info_table.py``) and posts its done semaphore.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ding_env.env_manager import arrays
from ding_env.env_manager.backends.info_table import INFO_SLOTS
from ding_env.env_manager.shared_memory import scalar_flags
from ding_env.errors import EnvError, EnvTimeoutError
from ding_env.ops import Op

# A worker's command word.
CMD_STEP = 1
CMD_PIPE = 2
# Bits of a worker's status word after a step.
REPORT_ON_PIPE = 1
INFOS_IN_TABLE = 2


@dataclass(frozen=True)
class SharedBuffers:
    """The arrays of a worker backend's shared segment, by name (the one place their names are spelled).

    The same record holds their layouts (what the parent allocates and a worker maps, see
    :func:`segment_entries`) and then the arrays themselves, in the parent and in every worker.
    Rows are env ids, except for the per-worker words ``command`` and ``status``.

    Attributes:
        ready_obs: The observation each env shows next.
        step_obs: The observation each env's last step produced (the true final one where done).
        reward: Each env's last reward.
        done: Whether each env's last step ended its episode.
        truncated: Whether it ended at a time limit.
        info_values: The shared info table (``info_table.py``): each env's info values.
        info_schema: The number of the schema each env's info has in the table (0: none).
        action: Each env's action for its next step.
        step_mask: Whether each env takes part in the next step of its worker.
        reset_on_done: Whether each env restarts at once if its next step ends its episode.
        command: Each worker's command word (``CMD_STEP`` or ``CMD_PIPE``).
        status: Each worker's status word after a step (``REPORT_ON_PIPE``, ``INFOS_IN_TABLE``).
        ended: How many steps each worker has ended, written after its done post: a wait for a step that a
            KeyboardInterrupt cut may have taken the post, and this count says the step ended all the same.
    """

    ready_obs: Any
    step_obs: Any
    reward: Any
    done: Any
    truncated: Any
    info_values: Any
    info_schema: Any
    action: Any
    step_mask: Any
    reset_on_done: Any
    command: Any
    status: Any
    ended: Any


# The arrays with one row per worker rather than per env.
PER_WORKER = ("command", "status", "ended")


def segment_entries(layouts: SharedBuffers, env_num: int, num_workers: int) -> list[tuple[str, Any, int]]:
    """``(name, layout, rows)`` of every shared array, in order, as ``SharedArrays`` carves them."""
    return [
        (item.name, getattr(layouts, item.name), num_workers if item.name in PER_WORKER else env_num)
        for item in fields(SharedBuffers)
    ]


def buffer_layouts(spaces: tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space], name: str) -> SharedBuffers:
    """The layouts of a shared segment's arrays for envs of these ``(observation, action, reward)`` spaces.

    Raises:
        TypeError: The action space has no array form (``name`` names the manager).
    """
    observation_space, action_space, reward_space = spaces
    obs_layout = arrays.layout_of(observation_space)
    try:
        action_layout = arrays.layout_of(action_space)
    except TypeError as error:
        raise TypeError(
            f"{name}: the action space {action_space!r} has no array form; use BaseEnvManager for this env"
        ) from error
    return SharedBuffers(
        ready_obs=obs_layout,
        step_obs=obs_layout,
        reward=arrays.reward_layout(reward_space),
        done=scalar_flags(bool),
        truncated=scalar_flags(bool),
        info_values=arrays.ArraySpec((INFO_SLOTS,), np.dtype(np.float64)),
        info_schema=scalar_flags(np.int8),
        action=action_layout,
        step_mask=scalar_flags(bool),
        reset_on_done=scalar_flags(bool),
        command=scalar_flags(np.int64),
        status=scalar_flags(np.int64),
        ended=scalar_flags(np.int64),
    )


@dataclass(frozen=True)
class Attach:
    """Map the shared segment ``segment``, whose arrays have ``layouts`` (``env_num`` rows; ``num_workers`` words)."""

    segment: str
    layouts: SharedBuffers
    env_num: int
    num_workers: int
    op: ClassVar[Op] = Op.LAUNCH


@dataclass(frozen=True)
class Seed:
    """Seed one env now; it takes effect at the env's next reset."""

    env_id: int
    seed: int
    dynamic_seed: bool | None
    op: ClassVar[Op] = Op.SEED


@dataclass(frozen=True)
class Reset:
    """Reset ``env_ids`` with their ``env.reset`` kwargs ``params`` (kept for auto-resets); obs go to the ready rows."""

    env_ids: list[int]
    params: dict[int, dict]
    op: ClassVar[Op] = Op.RESET


@dataclass(frozen=True)
class Call:
    """Call method ``name`` of each of ``env_ids`` with ``args`` and ``kwargs``."""

    env_ids: list[int]
    name: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    op: ClassVar[Op] = Op.CALL


@dataclass(frozen=True)
class GetAttr:
    """Read attribute ``name`` of each of ``env_ids`` (as ``status.read_attribute`` gives it)."""

    env_ids: list[int]
    name: str
    op: ClassVar[Op] = Op.GET_ATTR


@dataclass(frozen=True)
class SetAttr:
    """Set attribute ``name`` of each of ``env_ids`` to its value in ``values``."""

    env_ids: list[int]
    name: str
    values: list
    op: ClassVar[Op] = Op.SET_ATTR


@dataclass(frozen=True)
class Close:
    """Close every env of the worker and stop; the reply lists a :class:`Failure` per env that failed to close."""

    op: ClassVar[Op] = Op.CLOSE


Request = Attach | Seed | Reset | Call | GetAttr | SetAttr | Close


@dataclass(frozen=True)
class Reply:
    """A request's result."""

    value: Any = None


@dataclass(frozen=True)
class Failure:
    """An env's error, by its fields: rebuilt in the manager as the ``EnvError`` or ``EnvTimeoutError`` it was.

    A worker cuts an auto-reset at its time limit itself (the parent cuts only the whole step): that
    ``EnvTimeoutError`` crosses as one too, with its ids and limit, so the caller catching it gets it.
    """

    env_id: int
    command: str
    op: Op
    message: str
    remote_traceback: str
    timeout: float | None = None  # an EnvTimeoutError's limit (then env_ids and grouped are its too)
    env_ids: tuple[int, ...] = ()
    grouped: bool = False

    @classmethod
    def of(cls, error: BaseException, env_id: int, command: Op, name: str = "") -> Failure:
        """``error`` raised while the worker ran ``command`` (on attribute ``name``) for ``env_id``.

        An ``EnvError`` or an ``EnvTimeoutError`` keeps its own fields.
        """
        if isinstance(error, EnvTimeoutError):
            ids = tuple(error.env_ids)
            return cls(ids[0], str(error.command), error.command, str(error), "", error.timeout, ids, error.grouped)
        if not isinstance(error, EnvError):
            error = EnvError.of(error, env_id, command, name)
        remote = error.remote_traceback or "".join(traceback.format_exception(error))
        return cls(error.env_id, error.command, error.op, error.message, remote)

    def error(self) -> EnvError | EnvTimeoutError:
        """The error this failure describes."""
        if self.timeout is not None:
            return EnvTimeoutError(list(self.env_ids), self.op, self.timeout, self.grouped)
        return EnvError(self.env_id, self.command, self.message, self.remote_traceback, self.op)


@dataclass(frozen=True)
class StepReport:
    """What a step left besides the shared buffers.

    Infos and failures by env id, and info schemas seen for the first time.
    """

    infos: dict
    failures: dict[int, Failure]
    schemas: dict


def first_env(request: Request, worker_envs: list[int]) -> int:
    """The env a request's failure is attributed to when the error names none."""
    env_id = getattr(request, "env_id", None)
    if env_id is not None:
        return env_id
    env_ids = getattr(request, "env_ids", None)
    return env_ids[0] if env_ids else worker_envs[0]

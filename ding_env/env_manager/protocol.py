"""Every message between a worker backend and its workers, as typed records and shared words.

Requests travel on a worker's pipe, one record each; the worker handles them in one table
(``backends.worker.HANDLERS``) and answers each with a :class:`Reply` or a :class:`Failure`.
Errors carry their fields (env id, command, message, the env's traceback), so neither side
parses error text.

A step is commanded through shared memory instead: the backend writes the actions, the step
mask and auto-reset flags, sets the worker's command word to ``CMD_STEP`` (``CMD_PIPE``: a
request waits on the pipe) and posts its command semaphore. The worker steps, writes the
results, sets its status word (``REPORT_ON_PIPE``: a :class:`StepReport` with infos or errors
follows on the pipe; ``INFOS_IN_TABLE``: infos of a known form wait in the shared info table)
and posts its done semaphore.

Besides the env calls' own arguments and results (:class:`CallEnvs`, :class:`Reply`) and the
spaces a worker reports at launch, the records hold numbers, strings, lists, dicts, dtypes and
arrays: fields a transport between machines can encode without pickle.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Any

from ding_env.errors import EnvError

# A worker's command word.
CMD_STEP = 1
CMD_PIPE = 2
# Bits of a worker's status word after a step.
REPORT_ON_PIPE = 1
INFOS_IN_TABLE = 2


@dataclass(frozen=True)
class Attach:
    """Map the shared segment ``segment``, whose arrays ``entries`` lists as ``(key, layout, rows)``."""

    segment: str
    entries: list
    command = "attach"


@dataclass(frozen=True)
class Seed:
    """Seed one env now; it takes effect at the env's next reset."""

    env_id: int
    seed: int
    dynamic_seed: bool | None
    command = "seed"


@dataclass(frozen=True)
class SetResetParam:
    """Keep ``param`` as the ``env.reset`` kwargs of one env, for every later reset."""

    env_id: int
    param: dict
    command = "reset"


@dataclass(frozen=True)
class Reset:
    """Reset ``env_ids``; their observations land in the ready rows."""

    env_ids: list[int]
    command = "reset"


@dataclass(frozen=True)
class CallEnvs:
    """Read attribute ``name`` of each of ``env_ids`` (``call=False``) or call it with ``args``/``kwargs``."""

    env_ids: list[int]
    name: str
    call: bool
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)

    @property
    def command(self) -> str:
        """The attribute's name: what an error names as the command."""
        return self.name


@dataclass(frozen=True)
class SetEnvAttr:
    """Set attribute ``name`` of each of ``env_ids`` to its value in ``values``."""

    env_ids: list[int]
    name: str
    values: list

    @property
    def command(self) -> str:
        """The attribute's name: what an error names as the command."""
        return self.name


@dataclass(frozen=True)
class Close:
    """Close every env of the worker and stop; the reply lists ``(env_id, error text)`` of failed closes."""

    command = "close"


Request = Attach | Seed | SetResetParam | Reset | CallEnvs | SetEnvAttr | Close


@dataclass(frozen=True)
class Reply:
    """A request's result."""

    value: Any = None


@dataclass(frozen=True)
class Failure:
    """An env's error, by its fields: rebuilt in the manager as the ``EnvError`` it was."""

    env_id: int
    command: str
    message: str
    remote_traceback: str

    @classmethod
    def of(cls, error: BaseException, env_id: int, command: str) -> Failure:
        """``error`` raised while the worker ran ``command`` for ``env_id`` (an ``EnvError`` keeps its own fields)."""
        if isinstance(error, EnvError):
            remote = error.remote_traceback or "".join(traceback.format_exception(error))
            return cls(error.env_id, error.command, error.message, remote)
        error = EnvError.of(error, env_id, command)
        return cls(error.env_id, error.command, error.message, error.remote_traceback)

    def error(self) -> EnvError:
        """The ``EnvError`` this failure describes."""
        return EnvError(self.env_id, self.command, self.message, self.remote_traceback)


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

"""What goes wrong between a client and an env server, and the errors that cross the wire by their fields."""

from __future__ import annotations

import traceback
from typing import Any

from ding_env.errors import DingEnvError, EnvCrashedError, EnvError, EnvTimeoutError
from ding_env.ops import Op


class WireError(DingEnvError, ValueError):
    """A value that has no wire encoding, or bytes that are not a well-formed message.

    Attributes:
        problem: What is wrong.
        where: The key path of the value, e.g. ``"step reply info[3]['visited']"`` ("" if none).
    """

    def __init__(self, problem: str, verb: str = "malformed") -> None:
        self.problem, self.verb, self.where = problem, verb, ""
        super().__init__(problem)

    def at(self, key: str) -> WireError:
        """This error, one level further out: ``key`` is prepended to its path."""
        self.where = key + self.where
        return self

    def __str__(self) -> str:
        return f"{self.verb} {self.where.strip()}: {self.problem}" if self.where else self.problem


class ProtocolMismatchError(WireError):
    """The other side speaks another protocol version (or no ding-env protocol at all)."""


class ServerError(DingEnvError):
    """A server refused a request or failed outside any env (the server keeps serving).

    Attributes:
        request: The request's kind.
        error_type: The name of the exception's type on the server.
        message: What went wrong.
        remote_traceback: The server's traceback text, if any.
    """

    def __init__(self, request: str, error_type: str, message: str, remote_traceback: str = "") -> None:
        self.request, self.error_type, self.message = request, error_type, message
        self.remote_traceback = remote_traceback
        super().__init__(f"server refused {request}: {error_type}: {message}")

    @classmethod
    def of(cls, error: BaseException, request: str) -> ServerError:
        """``error``, raised while the server handled ``request`` (a malformed message needs no traceback)."""
        text = "" if isinstance(error, WireError) else "".join(traceback.format_exception(error))
        return cls(request, type(error).__name__, str(error), text)


class ServerLostError(DingEnvError):
    """A server did not answer a request in time (it died, hangs, or the network dropped).

    Attributes:
        address: The server's endpoint.
        request: The request that got no answer.
        timeout: The request's time limit in seconds.
        why: What was noticed: no reply within the time limit, or a dropped connection.
        dropped: Whether the connection dropped (the server died or froze), rather than the time ran out.
    """

    def __init__(self, address: str, request: str, timeout: float, why: str = "", dropped: bool = False) -> None:
        self.address, self.request, self.timeout, self.dropped = address, request, timeout, dropped
        self.why = why or f"no reply within {timeout} s"
        super().__init__(f"server {address} did not answer {request}: {self.why}")


# The errors that cross the wire, each by the fields its constructor takes.
ERROR_FIELDS: dict[type[DingEnvError], tuple[str, ...]] = {
    EnvError: ("env_id", "command", "message", "remote_traceback", "op"),
    EnvCrashedError: ("env_ids", "exitcode", "command"),
    EnvTimeoutError: ("env_ids", "command", "timeout", "grouped"),
    ServerError: ("request", "error_type", "message", "remote_traceback"),
}
ERROR_TYPES = {cls.__name__: cls for cls in ERROR_FIELDS}
# The types each field may arrive as (a bool is not an int here); env_ids is a list of ints.
FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "env_id": (int,),
    "env_ids": (list,),
    "command": (str,),
    "op": (str,),
    "message": (str,),
    "remote_traceback": (str,),
    "exitcode": (int, type(None)),
    "timeout": (int, float, type(None)),
    "grouped": (bool,),
    "request": (str,),
    "error_type": (str,),
}


def error_fields(error: DingEnvError) -> dict[str, Any] | None:
    """``error``'s type name and constructor fields, or None for a type that does not cross the wire."""
    fields = ERROR_FIELDS.get(type(error))
    if fields is None:
        return None
    return {"type": type(error).__name__, **{name: getattr(error, name) for name in fields}}


def error_from(fields: dict[str, Any]) -> DingEnvError:
    """The error ``fields`` (from :func:`error_fields`) describe.

    Raises:
        WireError: For an unknown type, or fields its constructor does not take or refuses.
    """
    cls = ERROR_TYPES.get(fields.get("type"))
    values = {name: value for name, value in fields.items() if name != "type"}
    if cls is None or set(values) != set(ERROR_FIELDS[cls]):
        raise WireError(f"an error of type {str(fields.get('type'))[:40]} with fields {sorted(map(str, values))[:8]}")
    for name, value in values.items():
        kinds = FIELD_TYPES[name]
        wrong = (type(value) is bool and bool not in kinds) or not isinstance(value, kinds)
        if wrong or (name == "env_ids" and not all(type(env_id) is int for env_id in value)):
            expected = "a list of ints" if name == "env_ids" else " or ".join(kind.__name__ for kind in kinds)
            raise WireError(f"an error of type {cls.__name__} whose {name} is {str(value)[:40]!r}, not {expected}")
    try:
        return cls(**values)
    except (TypeError, ValueError) as error:  # a field its constructor refuses (an unknown op, say)
        raise WireError(f"an error of type {cls.__name__}: {error}"[:300]) from None


class ServerLostCrash(EnvCrashedError):
    """An env server stopped answering: its envs are lost, as a dead worker's are.

    Attributes:
        address: The server's endpoint.
        why: What was noticed (no reply in time, a dropped connection).
        failed_reset: Whether the error stands for the envs' auto-resets too (lost with the server during a
            step): the manager then counts it as a failed reset (``failures.is_reset_error``).
    """

    def __init__(self, address: str, env_ids: list[int], command: Op, why: str, failed_reset: bool = False) -> None:
        super().__init__(env_ids, None, command)
        self.address, self.why, self.failed_reset = address, why, failed_reset
        self.args = (f"server {address} hosting envs {self.env_ids} was lost during {command}: {why}",)

    def __str__(self) -> str:
        return self.args[0]

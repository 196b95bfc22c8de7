"""What a worker does when a reply cannot be pickled: the env it came from gets the error, the worker lives on.

A worker pickles each message whole before writing any of it to its pipe (``send_pickled``), so a value
that cannot be pickled (a lock, an open file, a simulator's ctypes handle) leaves the pipe as it was:
the worker sends a ``Failure`` naming the env and the value instead, and keeps serving its envs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Any

from ding_env.env_manager.backends.protocol import Failure
from ding_env.errors import EnvDataError
from ding_env.ops import Op

WHY = (
    "the subprocess managers pickle what reaches the caller's process: return a picklable value (numbers, "
    "arrays, plain containers), or run the envs in a base manager"
)


def send_pickled(conn: Connection, message: Any, instead: Callable[[Exception], Any]) -> None:
    """Send ``message`` as ``Connection.send`` does, or ``instead(error)`` when pickling it raises ``error``."""
    try:
        payload = ForkingPickler.dumps(message)
    except Exception as error:  # noqa: BLE001 - whatever pickling raises (TypeError, ValueError, ...): sent instead
        payload = ForkingPickler.dumps(instead(error))
    conn.send_bytes(payload)


def pickling_error(value: Any) -> Exception | None:
    """The error pickling ``value`` raises, or None when it pickles."""
    try:
        ForkingPickler.dumps(value)
    except Exception as error:  # noqa: BLE001 - returned: the caller names the value
        return error
    return None


def unsendable_result(env_ids: Sequence[int], values: Sequence[Any], op: Op, name: str, error: Exception) -> Failure:
    """The failure for a reply of ``values`` (one per env of ``env_ids``) that ``error`` kept from being pickled."""
    for env_id, value in zip(env_ids, values, strict=False):
        value_error = pickling_error(value)
        if value_error is not None:
            what = f"env {env_id}'s {name!r}" if op is Op.GET_ATTR else f"{name}() of env {env_id}"
            message = f"{what} is a {type(value).__name__} that cannot be pickled ({value_error}): {WHY}"
            return Failure.of(EnvDataError(message), env_id, op, name)
    first = env_ids[0] if env_ids else 0
    return Failure.of(EnvDataError(f"the reply to {name or op} cannot be pickled ({error}): {WHY}"), first, op, name)


def sendable_infos(infos: dict[int, dict], failures: dict[int, Failure]) -> dict[int, dict]:
    """``infos`` without those that cannot be pickled; each of those envs gets a step failure naming the key."""
    sendable = {}
    for env_id, info in infos.items():
        if pickling_error(info) is None:
            sendable[env_id] = info
            continue
        for key, value in info.items():
            value_error = pickling_error(value)
            if value_error is not None:
                message = (
                    f"info[{key!r}] of the step is a {type(value).__name__} that cannot be pickled ({value_error}): "
                    f"{WHY}"
                )
                break
        else:
            message = f"the step's info cannot be pickled: {WHY}"
        failures[env_id] = Failure.of(EnvDataError(message), env_id, Op.STEP)
    return sendable

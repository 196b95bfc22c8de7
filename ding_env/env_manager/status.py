"""Env statuses in a manager, and the small values managers and workers exchange about envs."""

from __future__ import annotations

import enum
from typing import Any

from ding_env.errors import DingEnvError


class EnvStatus(enum.IntEnum):
    """Where one env stands."""

    NEEDS_RESET = 0  # not reset yet, or its episode ended without auto-reset
    READY = 1  # has an observation and takes an action
    STEPPING = 2  # an action is in flight (async manager)
    FINISHED = 3  # ran episode_num episodes


# Plain ints for the hot path (enum attribute lookups are slow).
NEEDS_RESET, READY, STEPPING, FINISHED = (int(status) for status in EnvStatus)


class _Marker:
    """Stands for an env attribute in a broadcast reply; pickles by name, so it stays itself across processes."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __reduce__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return self.name


CALLABLE = _Marker("CALLABLE")  # a callable env attribute
MISSING = _Marker("MISSING")  # an attribute the env does not have


def read_attribute(env: object, name: str) -> Any:
    """``env.name`` as an attribute broadcast sees it: ``MISSING`` if absent, ``CALLABLE`` if callable."""
    try:
        value = getattr(env, name)
    except AttributeError:
        return MISSING
    return CALLABLE if callable(value) else value


def abnormal_info(error: DingEnvError) -> dict:
    """The info of the done timestep that replaces a failed step (``step_error='abnormal'``)."""
    return {"abnormal": True, "error": str(error), "truncated": False}

"""MuJoCo's C-level warnings as Python warnings, instead of lines on stderr and a ``MUJOCO_LOG.TXT`` file.

MuJoCo's default warning handler prints to stderr and appends to ``MUJOCO_LOG.TXT`` in the
current directory. Gymnasium's own model files trigger some (``settotalmass`` is deprecated in
MuJoCo 3.x), which the user cannot act on; as :class:`MujocoWarning` they follow Python's
warning filters (shown once per process by default; ``-W ignore::...MujocoWarning`` silences them).
"""

from __future__ import annotations

import warnings


class MujocoWarning(UserWarning):
    """A warning MuJoCo's C library raised while loading or stepping a model."""


def _warn(message: str) -> None:
    warnings.warn(f"MuJoCo: {message.strip()}", MujocoWarning, stacklevel=2)


def route_mujoco_warnings() -> None:
    """Send MuJoCo's warnings of this process to :func:`warnings.warn` (idempotent; imports mujoco)."""
    import mujoco

    if mujoco.get_mju_user_warning() is not _warn:
        mujoco.set_mju_user_warning(_warn)

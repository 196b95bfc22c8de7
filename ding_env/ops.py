"""``Op``: the operations a manager asks of its envs, one vocabulary for every layer that carries them.

The managers' backends, the worker protocol (``env_manager/backends/protocol.py``), the env
server's messages (``remote/headers.py``) and the errors that report a failure
(``ding_env.errors``) all name an operation by one of these members, never by free text.
"""

from __future__ import annotations

import enum


class Op(enum.StrEnum):
    """What a manager asks of its envs (a ``str``: ``Op.RESET == "reset"``, as messages and error texts spell it)."""

    LAUNCH = "launch"  # build the envs (and workers), report their spaces
    SEED = "seed"  # seed one env; takes effect at its next reset
    RESET = "reset"  # reset envs (an auto-reset after a done step, too)
    STEP = "step"  # step envs with actions
    CALL = "call"  # call an env method
    GET_ATTR = "get_attr"  # read an env attribute
    SET_ATTR = "set_attr"  # set an env attribute
    CLOSE = "close"  # close every env (and worker)

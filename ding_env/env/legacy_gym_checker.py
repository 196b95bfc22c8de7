"""Legacy gym's passive env checker on numpy 2, for envs that call ``gym.make`` themselves.

gym 0.26's checker reads ``np.bool8``, which numpy 2 removed, so the first step of any env made
by legacy ``gym.make`` raises ``AttributeError``. ``DingEnvWrapper`` takes the checker out of the
envs it makes (``env_wrappers.legacy_gym.without_passive_checker``); an env that makes its own
(DI-engine's envs do, in ``__init__`` or ``reset``) keeps it. ``BaseEnv`` calls
:func:`harmless_passive_checker` whenever an env is built, in the caller and in worker processes.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np

PASSIVE_CHECKER_MODULE = "gym.utils.passive_env_checker"


class _NumpyForGymChecker(types.ModuleType):
    """numpy as gym's passive env checker reads it: numpy itself, plus the ``bool8`` numpy 2 removed."""

    bool8 = np.bool_

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)


def harmless_passive_checker() -> None:
    """Give gym's passive env checker module alone a numpy that still has ``bool8``.

    Its checks and warnings then run as on numpy 1, and numpy stays as it is for everyone else (an
    env's own ``np.bool8`` still fails, as it should on numpy 2). Does nothing unless legacy gym is
    imported, and nothing on numpy 1; calling it again changes nothing.
    """
    checker = sys.modules.get(PASSIVE_CHECKER_MODULE)
    if checker is None or hasattr(np, "bool8") or isinstance(getattr(checker, "np", None), _NumpyForGymChecker):
        return
    checker.np = _NumpyForGymChecker("numpy")

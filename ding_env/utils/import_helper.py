"""DI-engine's ``ding.utils.import_module``: import modules named in a config so their envs register."""

from __future__ import annotations

import importlib
from collections.abc import Iterable


def import_module(modules: Iterable[str]) -> None:
    """Import every module named in ``modules``, in order (an env module registers its types on import)."""
    for name in modules:
        importlib.import_module(name)

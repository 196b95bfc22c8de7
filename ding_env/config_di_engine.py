"""What to do about a config file that fails to load on an import of DI-engine's.

A DI-engine config that imports ``ding.envs`` or ``ding.utils`` needs the port's rename; one that
imports DI-engine beyond its env layer at its top (``from ding.entry import serial_pipeline``,
``from ding.model.common import FCEncoder``) needs no rename, as there is none: ``ding-env run`` loads
the file and reads only its config, so that import belongs under ``if __name__ == "__main__":``,
where DI-engine's own configs keep their pipeline call, or DI-engine stays installed.
"""

from __future__ import annotations

import ast
import traceback
from pathlib import Path

# DI-engine's env layer: what `ding-env port` renames (ding_env.porting.IMPORT_RENAMES, kept in step by a test).
ENV_LAYER = ("ding.envs", "ding.utils", "ding.torch_utils")


def failed_import(error: BaseException, path: Path) -> tuple[str | None, int | None]:
    """The module named by the import statement of the config file ``path`` that ``error`` was raised in, and its line.

    ``(None, line)`` when the config's line is not an import of DI-engine's (it imports a module that does),
    ``(None, None)`` when no frame of ``error`` is in the file.
    """
    try:
        target = path.resolve()
        lines = [
            frame.lineno
            for frame in traceback.extract_tb(error.__traceback__)
            if Path(frame.filename).resolve() == target
        ]
    except OSError:
        return None, None
    if not lines or lines[-1] is None:
        return None, None
    line = lines[-1]
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None, line
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node.lineno <= line <= (node.end_lineno or node.lineno):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [alias.name for alias in node.names]
            ding = [name for name in names if name == "ding" or name.startswith("ding.")]
            return (ding[0] if ding else None), line
    return None, line


def di_engine_import_fix(error: BaseException, path: Path) -> str | None:
    """The fix for a config file ``path`` that failed to load with ``error``, when DI-engine's import is the cause.

    None when ``error`` is not the import of a missing DI-engine module.
    """
    if not isinstance(error, ImportError) or (error.name or "").split(".")[0] != "ding":
        return None
    module, line = failed_import(error, path)
    where = f"{path.name}:{line}" if line is not None else path.name
    if module is not None and module.startswith(ENV_LAYER):
        # The env layer: ding-env has it under ding_env, and the port renames the import.
        return (
            f"ding-env replaces DI-engine's env layer ({module}, imported at {where}): `ding-env port FOLDER` "
            "renames ding.envs and ding.utils imports to ding_env (and reports what it cannot), or import from "
            "ding_env yourself"
        )
    imported = f"{module} (imported at {where})" if module else f"a DI-engine module (imported at {where})"
    return (
        f"{imported} is DI-engine beyond its env layer, which ding-env has no rename for: move that import, and the "
        'code that uses it (the pipeline call, a model), under `if __name__ == "__main__":`, as `ding-env run` '
        "loads the file and reads only its config; or keep DI-engine installed"
    )

"""Errors of ported code as ``--try`` reports them: where in the port they arose, and the fix when the cause is known.

The known causes are the env's code against today's numpy, gym, Gymnasium or PettingZoo, a missing
package, a config key the env reads and its config does not set, and DI-engine's package names that
ding-env's own ``dizoo`` has too.
"""

from __future__ import annotations

import re
import sys
import traceback
from pathlib import Path

import numpy as np

from ding_env.porting.packages import inside, installed_outside, own_dizoo_names

KNOWN_ERRORS = (
    (
        r"only 0-dimensional arrays can be converted to Python scalars|only length-1 arrays",
        "numpy 2: float()/int() of an array with ndim > 0 is an error; take its element (x.item() or x[0])",
    ),
    (
        r"module 'numpy' has no attribute '(\w+)'|`np\.(\w+)` was removed in the NumPy 2\.0 release",
        "numpy 2 removed np.\\1\\2: `ding-env port --fix` replaces it in the port's code; where a library calls it "
        "(legacy gym's envs do), make the env from Gymnasium instead",
    ),
    (
        r"has no attribute 'reward_range'",
        "Gymnasium 1.x envs and wrappers have no reward_range: use the reward space's bounds, or (-inf, inf)",
    ),
    (
        r"object has no attribute 'seed'",
        "gym >= 0.26 and Gymnasium envs have no seed(): pass the seed to reset(seed=...)",
    ),
    (
        r"'tuple' object has no attribute|tuple indices must be integers or slices, not str",
        "gym >= 0.26 and Gymnasium reset() returns (obs, info): unpack it (obs, info = env.reset()); the report's "
        "warnings name the lines",
    ),
    (
        r"too many values to unpack \(expected 4\)",
        "gym >= 0.26 and Gymnasium step() returns 5 values: obs, reward, terminated, truncated, info",
    ),
    (
        r"No module named '(pettingzoo\.mpe[\w.]*)'",
        "PettingZoo 1.25 moved MPE to the mpe2 package: `ding-env port --fix` renames the import",
    ),
    (r"No module named '(ditk)\b", "ditk is DI-engine's toolkit (DI-toolkit on PyPI): pip install DI-toolkit"),
    (r"No module named '([\w.]+)'", "\\1 is not installed: install the package that provides it"),
    (
        r"'EasyDict' object has no attribute '(\w+)'|KeyError: '(\w+)'",
        "the env reads the config key '\\1\\2', which its env section does not set: set it in the config's env "
        "section (or give it a default in the class config)",
    ),
    (
        r"Render mode is None, which is incompatible with RecordVideo",
        "the env wraps RecordVideo around an env made without a render mode: make it with render_mode='rgb_array' "
        "(the scan's warning names the line); Gymnasium's RecordVideo also needs moviepy",
    ),
    (r"Environment \w+ doesn't exist|not found in (gym|the registry)", "the id is not registered in this gym"),
)
NUMPY_DIR = Path(np.__file__).parent
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def traced(error: BaseException, folder: Path) -> dict:
    """``error`` as the report shows it: one line, where in the ported code it arose, and the fix if known."""
    text = "".join(traceback.format_exception_only(type(error), error)).strip()
    frames = []
    chain: BaseException | None = error
    while chain is not None:  # the wrapper's frames first, the cause's (deeper) after them
        frames = [(frame.filename, frame.lineno) for frame in traceback.extract_tb(chain.__traceback__)] + frames
        chain = chain.__cause__ or chain.__context__
    frames += [(file, int(line)) for file, line in _FRAME.findall(text)]  # a worker's traceback, innermost
    base = folder if folder.is_dir() else folder.parent
    ours = [(file, line) for file, line in frames if inside(file, base)]
    summary = text.split("\n--- traceback")[0].splitlines()[-1] if text else type(error).__name__
    result = {"error": summary[:600]}
    if ours:
        result["where"] = f"{Path(ours[-1][0]).resolve().relative_to(base.resolve())}:{ours[-1][1]}"
        # Raised in a library the port called (not in ding_env's checks): where, so a search of the port is not all.
        # numpy's own frame is where a removed name raises: the line that asked for it is the one to show.
        outside = [frame for frame in frames[frames.index(ours[-1]) + 1 :] if not inside(frame[0], NUMPY_DIR)]
        if outside and not inside(outside[-1][0], Path(__file__).resolve().parents[1]):
            result["raised_in"] = _library_place(*outside[-1])
    for pattern, fix in KNOWN_ERRORS:
        match = re.search(pattern, text)
        if match:
            result["fix"] = match.expand(fix)
            break
    missing = re.search(r"No module named '([\w.]+)'", text)
    if missing:
        own = _port_module_file(missing[1], base)
        if own is not None:
            result["fix"] = (
                f"{missing[1]} is the port's own {own}, hidden by a package of the same name that comes first on "
                "sys.path (ding-env's own dizoo has DI-engine's package names): port the whole dizoo/ tree, or "
                "port under another package name"
            )
        elif (
            "." in missing[1]
            and (top := missing[1].split(".")[0])
            and (hider := _port_module_file(top, base))
            and installed_outside(top, base)
        ):
            result["fix"] = (
                f"{missing[1]} belongs to the installed package {top}, which the port's own package {top} ({hider}) "
                "hides (it comes first on sys.path): port the package under another name, or inside its dizoo/ "
                f"tree (dizoo/{top})"
            )
        elif listed := re.search(r"cannot import '([\w.]+)' listed in env.import_names", text):
            result["fix"] = (
                f"the config's env.import_names expect the module at {listed[1].replace('.', '/')}, not where the "
                "port is: port the package at that path (inside a dizoo/ tree for dizoo.*), or set import_names "
                "to the port's modules"
            )
    hidden = re.search(r"cannot import name '(\w+)' from '([\w.]+)' \((.+?)\)", text)
    if hidden and hidden[2] in own_dizoo_names()[1] and not inside(hidden[3], base):
        result["fix"] = (
            f"{hidden[2]} is ding-env's own module of that name, not the port's (ding-env's dizoo has DI-engine's "
            f"package names), and it has no {hidden[1]}: port the whole dizoo/ tree, so the port's module comes "
            "first, or import the port's module relatively"
        )
    return result


def _library_place(file: str, line: int) -> str:
    """``file:line`` of a library's frame, from its package on (``gym/envs/classic_control/acrobot.py:448``)."""
    parts = Path(file).parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return f"{'/'.join(parts[parts.index(marker) + 1 :])}:{line}"
    return f"{file}:{line}"


def _port_module_file(module: str, base: Path) -> str | None:
    """The port's file (relative to ``base``) that module ``module`` names on some ``sys.path`` entry, if any."""
    for entry in sys.path:
        if not entry or not Path(entry).is_dir():
            continue
        path = Path(entry).joinpath(*module.split("."))
        for candidate in (path.with_suffix(".py"), path / "__init__.py"):
            if candidate.is_file() and inside(str(candidate), base):
                return str(candidate.resolve().relative_to(base.resolve()))
    return None

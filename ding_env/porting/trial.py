"""``ding-env port --try``: import the ported modules, run each env they register, check it.

Runs in a process of its own (``python -m ding_env.porting.trial ROOT FOLDER STEPS``) with ROOT on
``sys.path``, so the port's imports, registrations and crashes stay out of the porting tool. For
every env type the port registers it loads the port's DI-engine config of that type (a
``main_config``/``create_config`` module), asks whether ``ding-env run`` accepts it, steps the env
with random actions in the base and the subprocess manager and runs ``ding-env check --di-engine``.
Each failure is traced to the innermost line of the ported code it passed through, with a fix
where the error is a known one. Prints one JSON document.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import sys
import traceback
import warnings
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ding_env.porting.packages import hidden_installed_packages, inside, installed_outside, own_dizoo_names
from ding_env.porting.registrations import registered_by_port, unregistered_env_classes

# The fix for errors whose cause is known: the env's code against today's numpy, gym, Gymnasium or PettingZoo.
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
    (r"Environment \w+ doesn't exist|not found in (gym|the registry)", "the id is not registered in this gym"),
)
NUMPY_DIR = Path(np.__file__).parent
SKIPPED = re.compile(r"^(test_.*|.*_test|conftest|setup|.*_main)$")  # *_main: DI-engine's training scripts
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def module_names(root: Path, folder: Path) -> tuple[list[str], list[Path]]:
    """The env modules under ``folder`` as importable from ``root``, and the config files.

    Tests, ``setup.py`` and DI-engine's training scripts (``entry/``, ``*_main.py``) are left out; config
    modules (``config/`` or ``*_config.py``) are loaded as configs, not imported.
    """
    modules, configs = [], []
    files = [folder] if folder.is_file() else sorted(folder.rglob("*.py"))
    for path in files:
        parts = path.relative_to(root).with_suffix("").parts
        if "__pycache__" in parts or SKIPPED.match(parts[-1]) or "entry" in parts:
            continue
        if "config" in parts[:-1] or parts[-1].endswith("_config"):
            configs.append(path)
            continue
        modules.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return modules, configs


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


def declared_space(env_cls: type, field: str, folder: Path) -> str | None:
    """``file:line`` where ``env_cls`` (or the first base class of the port that does) declares ``field``'s space.

    ``field`` is 'obs' or 'reward'. A space constructor assigned (or returned by the property) wins over
    another assignment, such as a copy of a simulator's space.
    """
    names = ("observation_space", "obs_space") if field == "obs" else ("reward_space", "rew_space")
    for klass in env_cls.__mro__:
        try:
            file = Path(inspect.getsourcefile(klass))
            tree = ast.parse(file.read_bytes())  # bytes: its coding declaration is honoured
        except (TypeError, OSError, SyntaxError, ValueError):
            continue
        if not inside(str(file), folder if folder.is_dir() else folder.parent):
            continue
        node = next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == klass.__name__), None)
        found = sorted(_space_declarations(node, names)) if node is not None else []
        if found:
            return _relative(file, folder, found[0][1])
    return None


def _space_declarations(klass: ast.ClassDef, names: tuple[str, ...]) -> list[tuple[bool, int]]:
    """``(not a space constructor, line)`` of each assignment to (or property returning) one of ``names``."""
    found = []
    for node in ast.walk(klass):
        value = None
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(ast.unparse(target).removeprefix("self.").lstrip("_") in names for target in targets):
                value = node.value
        elif isinstance(node, ast.FunctionDef) and node.name in names:
            returned = [sub for sub in ast.walk(node) if isinstance(sub, ast.Return) and sub.value is not None]
            value = returned[0].value if returned and isinstance(returned[0].value, ast.Call) else None
        if value is not None and not (isinstance(value, ast.Constant) and value.value is None):
            found.append((not isinstance(value, ast.Call), value.lineno))
    return found


def _relative(file: Path, folder: Path, line: int) -> str:
    base = folder if folder.is_dir() else folder.parent
    try:
        return f"{file.resolve().relative_to(base.resolve())}:{line}"
    except ValueError:
        return f"{file}:{line}"


def run_in_manager(manager_cls: type, env_fns: list, steps: int, env_cls: type, folder: Path) -> dict:
    """``steps`` env steps with seeded random actions in a manager of ``manager_cls``: counts, or the traced error."""
    from ding_env.errors import EnvDataError

    try:
        with manager_cls(env_fns, {}) as manager:
            manager.seed(0)
            manager.launch()
            space = manager.action_space
            space.seed(0)
            done_steps = episodes = 0
            while done_steps < steps:
                timesteps = manager.step({env_id: space.sample() for env_id in manager.ready_obs_id})
                done_steps += len(timesteps)
                episodes += sum(bool(timestep.done) for timestep in timesteps.values())
            return {"steps": done_steps, "episodes": episodes}
    except Exception as error:  # noqa: BLE001 - the env's failure is the result, reported to the porter
        result = traced(error, folder)
        # The managers refuse what the env returns outside its declared space: the declaration is the line to change.
        field = re.search(r"\b(obs|reward)\b(\[[^\]]*\])* must ", result["error"])
        if isinstance(error, EnvDataError) or ("EnvDataError" in result["error"] and field):
            declared = declared_space(env_cls, field.group(1) if field else "obs", folder)
            if declared is not None:
                result["where"] = declared
                result["fix"] = (
                    f"the env returns what its declared space at {declared} does not hold: declare the space as "
                    "the env returns it (shape, dtype), or return what the space declares"
                )
        return result


def try_env(env_type: str, config: Path | None, steps: int, folder: Path) -> dict:
    """Everything ``--try`` does with one env type; see the module docstring."""
    from easydict import EasyDict

    from ding_env.checker import check_env
    from ding_env.config import load_config_file
    from ding_env.env_manager import BaseEnvManager, SyncSubprocessEnvManager
    from ding_env.errors import ConfigError, RegistryError
    from ding_env.registry import get_vec_env_setting
    from ding_env.run_config import validate_run_config

    base = folder if folder.is_dir() else folder.parent
    result: dict[str, Any] = {"type": env_type, "config": str(config.relative_to(base)) if config else None}
    cfg = load_config_file(config) if config else EasyDict(env={"type": env_type})
    try:
        env_section = validate_run_config(cfg, str(config or env_type)).env
        result["run_accepts_config"] = True
    except (ConfigError, RegistryError) as error:
        result["run_accepts_config"] = False
        fix = traced(error, folder).get("fix")
        result["config_error"] = str(error)[:600] + (f". Fix: {fix}" if fix else "")
        env_section = None
    try:
        if env_section is None:  # the envs are still tried, built from the section as ding-env run builds it
            env_section = _merged_env_section(cfg.env)
        env_section = EasyDict({key: value for key, value in env_section.items() if key != "replay_path"})
        env_section.collector_env_num = 2
        env_cls, env_cfgs, _ = get_vec_env_setting(env_section, eval_=False)
    except Exception as error:  # noqa: BLE001 - reported to the porter
        result["build"] = traced(error, folder)
        return result
    env_fns = [partial(env_cls, env_cfg) for env_cfg in env_cfgs]
    result["base"] = run_in_manager(BaseEnvManager, env_fns, steps, env_cls, folder)
    result["subprocess"] = run_in_manager(SyncSubprocessEnvManager, env_fns, steps, env_cls, folder)
    report = check_env(env_cls, env_cfgs[0], episodes=1, max_steps=min(steps, 200), di_engine=True)
    prefix = f"{base.resolve()}/"
    result["check"] = {
        "errors": [f"{finding.check}: {finding.message}".replace(prefix, "") for finding in report.errors],
        "warnings": len(report.warnings),
    }
    return result


def _merged_env_section(env: dict) -> dict:
    """``env`` over its class's ``default_config()``, as ``ding-env run`` merges a section it accepts.

    For a config that ``ding-env run`` refuses, so that the envs fail (or run) for their own reasons, not
    for a default of the class that the section does not repeat.
    """
    from ding_env.config import deep_merge_dicts, default_cfg
    from ding_env.registry import get_env_cls
    from ding_env.run_config import ENV_DEFAULTS

    env = {**ENV_DEFAULTS, **env}
    env_cls = get_env_cls(env)
    default = default_cfg(env_cls)
    return deep_merge_dicts(default, env)


def run_trial(root: Path, folder: Path, steps: int) -> dict:
    """Import the modules under ``folder``, then try every env type they register."""
    from ding_env.config import load_config_file
    from ding_env.errors import ConfigError
    from ding_env.registry import ENV_REGISTRY

    modules, config_files = module_names(root, folder)
    base = folder if folder.is_dir() else folder.parent
    before = {name: (ENV_REGISTRY.source(name), ENV_REGISTRY.place(name)) for name in ENV_REGISTRY.names()}
    own_modules = own_dizoo_names()[1]
    imports = {}
    for module in modules:
        try:
            file = getattr(importlib.import_module(module), "__file__", None)
            imports[module] = {"ok": True}
            if module in own_modules:
                imports[module]["replaces"] = (
                    "ding-env's own dizoo has a module of this name: wherever the port comes first on sys.path "
                    "(as in its root folder), it is the port's, and so are the built-in env types it registers"
                )
            if file is not None and not inside(file, base):
                imports[module] = {
                    "error": f"{module} is imported from {file}, not from the port",
                    "fix": "another package of that name comes first on sys.path (ding-env's own dizoo has some of "
                    "DI-engine's): use that one, or port under another package name",
                }
        except Exception as error:  # noqa: BLE001 - a module that does not import is reported, not fatal
            imports[module] = traced(error, folder)
            missing = getattr(error, "name", None) or ""
            if isinstance(error, ModuleNotFoundError) and (missing == "ding" or missing.startswith("ding.")):
                imports[module]["outside"] = True  # DI-engine code beyond the env layer (policies, pipelines)
    registered = [name for name in ENV_REGISTRY.names() if registered_by_port(name, before.get(name), base)]
    imported = [module for module, result in imports.items() if result.get("ok")]
    configs: dict[str, Path] = {}
    for path in config_files:
        try:
            env_type = load_config_file(path).get("env", {}).get("type")
        except ConfigError:
            continue
        if env_type is not None:
            configs.setdefault(env_type, path)
    envs = []
    for name in registered:
        try:
            envs.append(try_env(name, configs.get(name), steps, folder))
        except Exception as error:  # noqa: BLE001 - one env type's failure does not stop the others
            envs.append({"type": name, "config": None, "build": traced(error, folder)})
    unregistered = unregistered_env_classes(imported, registered)
    return {
        "imports": imports,
        "envs": envs,
        "unregistered": unregistered,
        "hides": hidden_installed_packages(modules, root),
    }


def main(argv: list[str]) -> None:
    """``python -m ding_env.porting.trial ROOT FOLDER STEPS``: print the trial as JSON."""
    root, folder, steps = Path(argv[0]).resolve(), Path(argv[1]).resolve(), int(argv[2])
    sys.path.insert(0, str(root))
    warnings.simplefilter("ignore")  # gym and the ported envs warn about themselves; the report says what matters
    print(json.dumps(run_trial(root, folder, steps)))


if __name__ == "__main__":
    main(sys.argv[1:])

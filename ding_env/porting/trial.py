"""``ding-env port --try``: import the ported modules, run each env they register, check it.

Runs in a process of its own (``python -m ding_env.porting.trial ROOT FOLDER STEPS``) with ROOT on
``sys.path``, so the port's imports, registrations and crashes stay out of the porting tool. For
every env type the port registers it loads each of the port's DI-engine configs of that type (a
``main_config``/``create_config`` module; :mod:`ding_env.porting.discovery`), asks whether ``ding-env
run`` accepts it, steps the env with random actions in the base and the subprocess manager, records
an evaluator episode where the config asks ``ding-env run`` for replays (``env.replay_path``), and
runs ``ding-env check --di-engine`` with it.
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
import tempfile
import warnings
from functools import partial
from pathlib import Path
from typing import Any

from ding_env.porting.discovery import find_configs, module_names
from ding_env.porting.known_errors import traced
from ding_env.porting.packages import hidden_installed_packages, inside, own_dizoo_names
from ding_env.porting.registrations import registered_by_port, unregistered_env_classes


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


def run_in_manager(
    manager_cls: type, env_fns: list, steps: int, env_cls: type, folder: Path, replay_dir: str | None = None
) -> dict:
    """``steps`` env steps with seeded random actions in a manager of ``manager_cls``: counts, or the traced error.

    With ``replay_dir`` the manager is an evaluator as ``ding-env run`` makes it: its envs record replays
    there (``enable_save_replay`` before launch), with static seeds, and it stops after its first episode.
    """
    try:
        with manager_cls(env_fns, {}) as manager:
            if replay_dir is not None:
                manager.enable_save_replay(replay_dir)
            manager.seed(0, dynamic_seed=replay_dir is None)
            manager.launch()
            space = manager.action_space
            space.seed(0)
            done_steps = episodes = 0
            while done_steps < steps and not (replay_dir is not None and episodes):
                timesteps = manager.step({env_id: space.sample() for env_id in manager.ready_obs_id})
                done_steps += len(timesteps)
                episodes += sum(bool(timestep.done) for timestep in timesteps.values())
            return {"steps": done_steps, "episodes": episodes}
    except Exception as error:  # noqa: BLE001 - the env's failure is the result, reported to the porter
        return _refused_space(error, env_cls, folder) or traced(error, folder)


# What the managers say when they refuse an env's data or its declared space, and the space (field) concerned.
_REFUSED_FIELD = re.compile(r"\b(?P<field>obs|reward)\b(\[[^\]]*\])* must |\b(?P<space>observation|reward)_space is ")


def _refused_space(error: BaseException, env_cls: type, folder: Path) -> dict | None:
    """The traced ``error`` pointing at the declaration of the space it refuses, or None if it refuses none.

    The managers refuse what the env returns outside its declared space, and a reward space they cannot
    hold (a ``Dict``): the line to change is where the env declares that space, the one the error names.
    """
    from ding_env.errors import EnvDataError

    result = traced(error, folder)
    match = _REFUSED_FIELD.search(result["error"])
    if match is None or not (isinstance(error, EnvDataError) or "EnvDataError" in result["error"]):
        return None
    field = "obs" if (match["field"] or match["space"]) in ("obs", "observation") else "reward"
    declared = declared_space(env_cls, field, folder)
    if declared is None:
        return None
    result["where"] = declared
    if match["space"]:
        result["fix"] = (
            f"the managers cannot hold the {match['space']} space the env declares at {declared}: declare "
            "a Box ((1,), or (n_agents,)), Discrete, MultiDiscrete or MultiBinary, and put a structured reward's "
            "parts in info"
        )
    else:
        result["fix"] = (
            f"the env returns what its declared space at {declared} does not hold: declare the space as "
            "the env returns it (shape, dtype), or return what the space declares"
        )
    return result


def try_env(env_type: str, config: Path | None, steps: int, folder: Path) -> dict:
    """Everything ``--try`` does with one env type and one of its configs; see the module docstring.

    Args:
        env_type: The registered env type.
        config: One of the port's config files of that type (None: a section naming only the type).
        steps: Random steps per manager.
        folder: The port.
    """
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
        replay_path = env_section.get("replay_path")
        # The collector's envs record nothing here; the replays ding-env run records are tried below, elsewhere.
        env_section = EasyDict({key: value for key, value in env_section.items() if key != "replay_path"})
        env_section.collector_env_num = 2
        env_cls, env_cfgs, _ = get_vec_env_setting(env_section, eval_=False)
    except Exception as error:  # noqa: BLE001 - reported to the porter
        result["build"] = traced(error, folder)
        return result
    env_fns = [partial(env_cls, env_cfg) for env_cfg in env_cfgs]
    result["base"] = run_in_manager(BaseEnvManager, env_fns, steps, env_cls, folder)
    result["subprocess"] = run_in_manager(SyncSubprocessEnvManager, env_fns, steps, env_cls, folder)
    if replay_path is not None:
        result["replay"] = {"replay_path": str(replay_path), **_try_replay(env_section, steps, env_cls, folder)}
    report = check_env(env_cls, env_cfgs[0], episodes=1, max_steps=min(steps, 200), di_engine=True)
    prefix = f"{base.resolve()}/"
    result["check"] = {
        "errors": [f"{finding.check}: {finding.message}".replace(prefix, "") for finding in report.errors],
        "warnings": len(report.warnings),
    }
    return result


def _try_replay(env_section: dict, steps: int, env_cls: type, folder: Path) -> dict:
    """One evaluator env recording its first episode, as ``ding-env run`` records a config's ``env.replay_path``.

    The replays go to a temporary folder, not the config's: the trial writes nothing into the user's folders.
    """
    from easydict import EasyDict

    from ding_env.env_manager import BaseEnvManager
    from ding_env.registry import get_vec_env_setting

    with tempfile.TemporaryDirectory(prefix="ding_env_port_replay_") as replay_dir:
        try:
            section = EasyDict({**env_section, "replay_path": replay_dir, "evaluator_env_num": 1})
            _, _, env_cfgs = get_vec_env_setting(section, collect=False)
        except Exception as error:  # noqa: BLE001 - reported to the porter
            return traced(error, folder)
        env_fns = [partial(env_cls, env_cfg) for env_cfg in env_cfgs]
        result = run_in_manager(BaseEnvManager, env_fns, steps, env_cls, folder, replay_dir)
    if "error" in result:
        # Whatever the cause, ding-env run meets it too, and can be told to record nothing.
        fix = result.get("fix", "fix the env's recording")
        result["fix"] = (
            f"{fix}. ding-env run records evaluator replays because the config sets env.replay_path (DI-engine's "
            "serial_pipeline ignores it): fix this, or run with --set env.replay_path=none"
        )
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
                if registers_envs(modules[module]):  # the env layer itself: nothing of it runs
                    imports[module]["fix"] = (
                        "this module registers env types, so it must import without DI-engine: drop or move the "
                        "names of DI-engine's beyond its env layer that it imports (listed above with their lines)"
                    )
                else:
                    imports[module]["outside"] = True  # DI-engine code beyond the env layer (policies, pipelines)
    registered = [name for name in ENV_REGISTRY.names() if registered_by_port(name, before.get(name), base)]
    imported = [module for module, result in imports.items() if result.get("ok")]
    configs = find_configs(config_files, folder)
    envs = []
    for name in registered:
        # Every config of the type, each checked too: one that fails must not hide the others that run (DI-engine's
        # petting_zoo has 13, one of them continuous), and the checker adds well under a second per config.
        for config in configs.by_type.get(name) or [None]:
            try:
                envs.append(try_env(name, config, steps, folder))
            except Exception as error:  # noqa: BLE001 - one config's failure does not stop the others
                relative = str(config.relative_to(base)) if config else None
                envs.append({"type": name, "config": relative, "build": traced(error, folder)})
    unregistered = unregistered_env_classes(imported, registered)
    return {
        "imports": imports,
        "envs": envs,
        "unloaded_configs": configs.unloaded,
        "unregistered": unregistered,
        "hides": hidden_installed_packages(list(modules), root),
    }


def registers_envs(file: Path) -> bool:
    """Whether the module ``file`` registers env types with DI-engine's (or ding-env's) ``ENV_REGISTRY``."""
    try:
        return "ENV_REGISTRY" in file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def main(argv: list[str]) -> None:
    """``python -m ding_env.porting.trial ROOT FOLDER STEPS``: print the trial as JSON."""
    root, folder, steps = Path(argv[0]).resolve(), Path(argv[1]).resolve(), int(argv[2])
    sys.path.insert(0, str(root))
    warnings.simplefilter("ignore")  # gym and the ported envs warn about themselves; the report says what matters
    print(json.dumps(run_trial(root, folder, steps)))


if __name__ == "__main__":
    main(sys.argv[1:])

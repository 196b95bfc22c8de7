"""The port report: printed by ``ding-env port`` and written as ``PORTING.md`` beside the port (Markdown)."""

from __future__ import annotations

import dataclasses

from ding_env.porting.destination import REPORT_TITLE, written_files, written_line
from ding_env.porting.findings import ERROR, HAZARDS, NAMES, NOTE, WARNING, Item
from ding_env.porting.tool import PortResult
from ding_env.summary import counted
from ding_env.version import __version__


def format_report(result: PortResult) -> str:
    """The whole report as Markdown."""
    lines = [
        REPORT_TITLE,
        "",
        # Absolute paths: a later port into DST reads SRC here (porting.destination) to tell its own earlier port.
        f"`{result.src.resolve()}` -> `{result.dst.resolve()}` (ding-env port, ding-env {__version__})",
        "",
        *_summary(result),
        "",
        *(f"Note: {notice}." for notice in result.notices),
        *([""] if result.notices else []),
        *_items("DI-engine names the rename does not bring", [i for i in result.items if i.kind == NAMES]),
        *_items("Hazards found by the static scan", [i for i in result.items if i.kind == HAZARDS]),
        *_changes("Fixes applied (--fix)", result.fixed),
        *_joined(result.joined),
        *_trial(result.trial),
        *_changes("Lines renamed (imports, and strings naming a module)", result.renamed),
    ]
    written = written_line(written_files(result.dst, result.files))
    return "\n".join(lines).rstrip() + f"\n\n{written}\n"


def report_dict(result: PortResult) -> dict:
    """The report as plain data (``ding-env port --json``): every finding with ``where``, and the failures."""
    return {
        "src": str(result.src),
        "dst": str(result.dst),
        "files": result.files,
        "renamed": _change_dicts(result.renamed),
        "fixed": _change_dicts(result.fixed),
        "joined": result.joined,
        "notices": result.notices,
        "items": [{**dataclasses.asdict(item), "where": item.where} for item in result.items],
        "trial": result.trial,
        "failures": result.failures,
    }


def _change_dicts(changes: list) -> list[dict]:
    return [{"where": f"{path}:{change.line}", "old": change.old, "new": change.new} for path, change in changes]


def _summary(result: PortResult) -> list[str]:
    python = sum(name.endswith(".py") for name in result.files)
    failures = result.failures
    rows = [
        ("files", f"{len(result.files)} ({python} Python)"),
        ("lines renamed", str(len(result.renamed))),
        ("names the rename does not bring", _count([i for i in result.items if i.kind == NAMES])),
        ("hazards", _count([i for i in result.items if i.kind == HAZARDS])),
        ("lines fixed (--fix)", str(len(result.fixed))),
    ]
    if result.trial is not None:
        envs = result.trial.get("envs", [])
        types = len({env["type"] for env in envs})
        ran = sum(_ran(env) for env in envs)
        unloaded = len(result.trial.get("unloaded_configs", []))
        unregistered = len(result.trial.get("unregistered", []))
        defaults = sum(env["config"] is None for env in envs)  # a type with no config: tried with its default
        tried = f"{counted(types, 'env type')} registered; {counted(len(envs) - defaults, 'config')} tried"
        tried += f" and {counted(defaults, 'type')} without one (its default config)" if defaults else ""
        tried += f"; {ran} of them ran in both managers"
        tried += f"; {counted(unloaded, 'config file')} did not load" if unloaded else ""
        tried += f"; {unregistered} env classes registered under no type, not tried" if unregistered else ""
        rows.append(("tried (--try)", tried))
    rows.append(("result", _result(failures, result.trial)))
    return ["| | |", "|---|---|", *(f"| {name} | {value} |" for name, value in rows)]


def _result(failures: list[str], trial: dict | None) -> str:
    """The summary's last row: the failures, and the checker's errors, which do not fail the port (the envs run)."""
    checked = [env for env in (trial or {}).get("envs", []) if "check" in env]
    check_errors = sum(len(env["check"]["errors"]) for env in checked)
    flagged = sum(bool(env["check"]["errors"]) for env in checked)
    result = f"FAILED: {counted(len(failures), 'failure')}" if failures else "nothing failed"
    if check_errors:
        result += (
            f"; `ding-env check --di-engine` found {counted(check_errors, 'error')} in "
            f"{counted(flagged, 'env')} (listed under each env: it runs, but breaks the env contract there)"
        )
    return result


def _count(items: list[Item]) -> str:
    counts = [(sum(item.severity == severity for item in items), severity) for severity in (ERROR, WARNING, NOTE)]
    parts = [f"{count} {severity}{'s' if count > 1 else ''}" for count, severity in counts if count]
    return f"{len(items)}" + (f" ({', '.join(parts)})" if parts else "")


def _items(title: str, items: list[Item]) -> list[str]:
    if not items:
        return []
    lines = [f"## {title}", ""]
    for item in sorted(items, key=lambda item: (item.path, item.line)):
        lines.append(f"- `{item.where}` **{item.severity}** {item.what}. Fix: {item.fix}")
    return [*lines, ""]


def _changes(title: str, changes: list) -> list[str]:
    if not changes:
        return []
    lines = [f"## {title}", ""]
    lines += [f"- `{path}:{change.line}`: `{change.old.strip()}` -> `{change.new.strip()}`" for path, change in changes]
    return [*lines, ""]


def _joined(files: list[str]) -> list[str]:
    if not files:
        return []
    return [
        "## Packages joined with ding-env's dizoo",
        "",
        "Packages ding-env's own `dizoo` has too: each extends its package path (two lines appended), so "
        "ding-env's built-in envs stay importable beside the port whichever comes first on `sys.path`.",
        "",
        *(f"- `{file}`" for file in files),
        "",
    ]


def _trial(trial: dict | None) -> list[str]:
    if trial is None:
        return []
    lines = ["## What happened when it ran (--try)", ""]
    if trial.get("note"):
        lines += [f"Note: {trial['note']}.", ""]
    if "error" in trial:
        return [*lines, f"The trial stopped: {trial['error']}", ""]
    failed = {module: result for module, result in trial["imports"].items() if not result.get("ok")}
    lines.append(f"Imported {len(trial['imports']) - len(failed)} of {len(trial['imports'])} modules.")
    for module, result in failed.items():
        kind = "imports DI-engine beyond the env layer (not a failure)" if result.get("outside") else "FAILED"
        lines.append(f"- `{module}` {kind}: {_traced(result)}")
    for module, result in trial["imports"].items():
        if result.get("replaces"):
            lines.append(f"- `{module}` replaces a built-in module: {result['replaces']}")
    if not trial["envs"]:
        lines.append("No env type was registered.")
    for package in trial.get("hides", []):
        lines.append(
            f"- The port's package `{package}` has the name of an installed package, which it hides wherever the "
            f"port comes first on `sys.path` (a library importing `{package}` gets the port): port it under "
            "another name, or inside its `dizoo/` tree"
        )
    if trial.get("unregistered"):
        classes = ", ".join(f"`{name}`" for name in trial["unregistered"])
        lines.append(
            f"- Env classes registered under no env type, so not tried: {classes}. Register each "
            "(`@ENV_REGISTRY.register('name')`) to run it from a config, or check one with "
            "`ding-env check MODULE:CLASS`"
        )
    for config in trial.get("unloaded_configs", []):
        lines.append(f"- config `{config['config']}` FAILED to load, so `ding-env run` refuses it: {_traced(config)}")
    by_type: dict[str, list[dict]] = {}
    for env in trial["envs"]:
        by_type.setdefault(env["type"], []).append(env)
    for env_type, configs in by_type.items():
        lines += ["", f"### env type `{env_type}`", ""]
        if len(configs) > 1:
            ran = sum(_ran(env) for env in configs)
            lines.append(f"{len(configs)} DI-engine configs, each tried; {ran} ran in both managers.")
            lines.append("")
        for env in configs:
            lines += _config_outcome(env)
    return [*lines, ""]


def _ran(env: dict) -> bool:
    """Whether the envs of one config ran in both managers."""
    return all("error" not in env.get(key, {"error": 1}) for key in ("base", "subprocess"))


def _config_outcome(env: dict) -> list[str]:
    """What ``--try`` did with one config of an env type."""
    config = f"`{env['config']}`" if env["config"] else "none found (tried with its default config)"
    lines = [f"- DI-engine config: {config}"]
    which = "the config" if env["config"] else "an env section naming only the type (its default config)"
    if env.get("run_accepts_config"):
        lines.append(f"  - `ding-env run` accepts {which}")
    else:
        lines.append(f"  - `ding-env run` refuses {which}: {env.get('config_error')}")
    if "build" in env:
        return [*lines, f"  - building the envs FAILED: {_traced(env['build'])}"]
    for key, name in (("base", "base manager"), ("subprocess", "subprocess manager")):
        outcome = env[key]
        if "error" in outcome:
            lines.append(f"  - {name}: FAILED: {_traced(outcome)}")
        else:
            steps, episodes = counted(outcome["steps"], "random step"), counted(outcome["episodes"], "episode")
            lines.append(f"  - {name}: {steps}, {episodes} ended")
    if "replay" in env:
        replay = env["replay"]
        asked = f"`ding-env run` records evaluator replays to `{replay['replay_path']}` (the config's env.replay_path)"
        if "error" in replay:
            lines.append(f"  - {asked}: recording FAILED: {_traced(replay)}")
        else:
            lines.append(
                f"  - {asked}: an evaluator env recorded {counted(replay['steps'], 'step')} (to a temporary folder)"
            )
    check = env["check"]
    errors, warnings = len(check["errors"]), check["warnings"]
    lines.append(f"  - `ding-env check --di-engine`: {counted(errors, 'error')}, {counted(warnings, 'warning')}")
    return lines + [f"    - {error}" for error in check["errors"]]


def _traced(result: dict) -> str:
    text = f"{result['error']}"
    if result.get("where"):
        raised_in = f", raised in `{result['raised_in']}`" if result.get("raised_in") else ""
        text += f" (at `{result['where']}`{raised_in})"
    if result.get("fix"):
        text += f". Fix: {result['fix']}"
    return text

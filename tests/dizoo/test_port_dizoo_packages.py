"""DI-engine 0.5.3 dizoo env packages ported by `ding-env port` alone, run here (numpy 2, Gymnasium 1.x, gym 0.26).

For each package: `ding-env port --try` and `ding-env port --fix --try` on a copy of DI-engine's package
(with its DI-engine config, or, where the wheel ships none, the env settings its own DI-engine test uses).
Each port's configured env either runs 200 random steps in the base and the subprocess manager, or the
report names what stops it: a line of the package's own code, with a fix, and a cause that is the env's
code against today's numpy, gym or Gymnasium. `ding-env run` accepts every package's config, and the
package's own DI-engine test file runs on the port (after --fix): it passes, or fails on the same cause.
docs/porting-tool.md gives the resulting table.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import REPO, di_engine_dizoo

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Stop:
    """The ported env does not run: the report names ``where`` (in the package) and an error matching ``cause``."""

    where: str
    cause: str


RUNS = None  # the ported env runs 200 random steps in both managers

# package -> (env type, env settings when the wheel has no config (those of its DI-engine test), after `port`,
# after `port --fix`, what its own DI-engine test file does on the --fix port: passes (None) or fails on `cause`)
PACKAGES = {
    "bitflip": ("bitflip", None, Stop("envs/bitflip_env.py:63", "only 0-dimensional arrays"), RUNS, None),
    "frozen_lake": (
        "frozen_lake",
        None,
        Stop("envs/frozen_lake_env.py:37", "has no attribute 'reward_range'"),
        # The declared space is FrozenLake's Discrete(16); the env returns one-hot float32 vectors.
        Stop("envs/frozen_lake_env.py:34", r"obs must have shape \(\) and dtype int64, got shape \(16,\)"),
        None,
    ),
    "gym_anytrading": (
        "stocks-v0",
        None,
        Stop("envs/trading_env.py:141", r"obs must have shape \(20, 3\) and dtype float64, got shape \(62,\)"),
        Stop("envs/trading_env.py:141", r"obs must have shape \(20, 3\) and dtype float64, got shape \(62,\)"),
        None,
    ),
    "maze": (
        "maze",
        {"size": 16},
        Stop("envs/maze_env.py:86", "obs must have dtype float32, got int64"),
        Stop("envs/maze_env.py:86", "obs must have dtype float32, got int64"),
        None,
    ),
    "ising_env": (
        "ising_model",
        {"num_agents": 100, "dim_spin": 2, "agent_view_sight": 1},
        Stop("envs/ising_model/Ising.py:32", "only 0-dimensional arrays"),
        Stop("envs/ising_model/Ising.py:32", "only 0-dimensional arrays"),
        "only 0-dimensional arrays",
    ),
    "cliffwalking": (
        "cliffwalking",
        {},
        Stop("envs/cliffwalking_env.py:42", "object has no attribute 'seed'"),
        Stop("envs/cliffwalking_env.py:42", "object has no attribute 'seed'"),
        "object has no attribute 'seed'",
    ),
}
# What the report's fix says for each cause: today's numpy, Gymnasium or gym, or the env's declared space.
KNOWN_CAUSES = {
    "only 0-dimensional arrays": "numpy 2",
    "reward_range": "Gymnasium 1.x",
    "no attribute 'seed'": "gym >= 0.26",
    "must have": "declare the space as the env returns it",
}


def _environ(*paths: Path) -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, paths), str(REPO)])}


def _copy_of_di_engines(package: str, root: Path) -> Path:
    """DI-engine's package under ``root/dizoo`` as its users have it: its config, and the data its env reads."""
    env_type, settings, *_ = PACKAGES[package]
    source = root / "dizoo" / package
    shutil.copytree(di_engine_dizoo() / package, source, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(di_engine_dizoo() / "__init__.py", root / "dizoo" / "__init__.py")
    if settings is not None:  # the wheel ships no config: the settings of the package's DI-engine test
        module = next(path for path in (source / "envs").glob("*.py") if f"register('{env_type}')" in path.read_text())
        (source / "config").mkdir(exist_ok=True)
        (source / "config" / f"{package}_config.py").write_text(
            f"main_config = dict(exp_name={package!r}, env=dict(collector_env_num=2, evaluator_env_num=1, "
            f"n_evaluator_episode=1, **{settings!r}), policy=dict(cuda=False))\n"
            f"create_config = dict(env=dict(type={env_type!r}, import_names=['dizoo.{package}.envs.{module.stem}']),"
            " env_manager=dict(type='base'), policy=dict(type='dqn'))\n"
        )
    if package == "gym_anytrading":  # DI-engine asks for gym-anytrading's stock data in envs/data
        import gym_anytrading

        (source / "envs" / "data").mkdir()
        data = Path(gym_anytrading.__file__).parent / "datasets" / "data" / "STOCKS_GOOGL.csv"
        shutil.copy(data, source / "envs" / "data")
    return source


@pytest.fixture(scope="module", params=sorted(PACKAGES))
def ported(request, tmp_path_factory) -> dict:
    """``{'package', 'port', 'fix'}``: each the port's folder, exit status and JSON report."""
    package = request.param
    root = tmp_path_factory.mktemp(package)
    source = _copy_of_di_engines(package, root / "src")
    result = {"package": package}
    for mode, flags in (("port", []), ("fix", ["--fix"])):
        folder = root / mode / "dizoo" / package
        command = [sys.executable, "-m", "ding_env", "port", str(source), "--out", str(folder), "--try", "--json"]
        done = subprocess.run(command + flags, capture_output=True, text=True, env=_environ(), timeout=600)
        assert done.returncode in (0, 1), done.stderr[-3000:]
        result[mode] = {"folder": folder, "status": done.returncode, "report": json.loads(done.stdout)}
    return result


def _env_of(report: dict, env_type: str) -> dict:
    return next(env for env in report["trial"]["envs"] if env["type"] == env_type)


@pytest.mark.parametrize("mode", ["port", "fix"])
def test_the_port_runs_or_the_report_names_the_envs_own_line_and_fix(ported, mode):
    env_type, _, after_port, after_fix, _ = PACKAGES[ported["package"]]
    expected = after_port if mode == "port" else after_fix
    report = ported[mode]["report"]
    assert not [item for item in report["items"] if item["what"].endswith(": missing")]  # the rename brings it all
    env = _env_of(report, env_type)
    assert env["run_accepts_config"], env.get("config_error")
    for manager in ("base", "subprocess"):
        outcome = env[manager]
        if expected is RUNS:
            assert outcome.get("steps", 0) >= 200, outcome
            continue
        assert re.search(expected.cause, outcome["error"]), outcome
        assert outcome["where"] == expected.where, outcome  # a line of the package's own code
        assert (ported[mode]["folder"] / expected.where.split(":")[0]).is_file()
        cause = next(known for pattern, known in KNOWN_CAUSES.items() if re.search(pattern, outcome["error"]))
        assert cause in outcome["fix"], outcome
    types = {env["type"] for env in report["trial"]["envs"]}  # an entry per config of a type (bitflip has two)
    assert (ported[mode]["status"] == 0) == (expected is RUNS and len(types) == 1)


def test_fix_changes_only_what_it_lists(ported):
    fixed = {change["where"].split(":")[0] for change in ported["fix"]["report"]["fixed"]}
    for name in ported["port"]["report"]["files"]:
        before = (ported["port"]["folder"] / name).read_bytes()
        after = (ported["fix"]["folder"] / name).read_bytes()
        assert (before != after) == (name in fixed), name


def test_ding_env_run_runs_the_di_engine_config_of_a_port_that_runs(ported):
    env_type, _, _, after_fix, _ = PACKAGES[ported["package"]]
    if after_fix is not RUNS:
        return  # ding-env run accepts its config (asserted above); its env stops where the report says
    folder = ported["fix"]["folder"]
    config = folder / _env_of(ported["fix"]["report"], env_type)["config"]
    command = [sys.executable, "-m", "ding_env", "run", str(config), "--steps", "200", "--eval-episodes", "1"]
    done = subprocess.run(command, capture_output=True, text=True, env=_environ(folder.parents[1]), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "not used here: policy" in done.stderr


def test_the_packages_own_di_engine_test_runs_on_the_port(ported, tmp_path):
    *_, test_fails_on = PACKAGES[ported["package"]]
    folder = ported["fix"]["folder"]
    (tmp_path / "video").mkdir()  # where DI-engine's tests save replays (./video)
    tests = sorted(str(path) for path in folder.rglob("test_*.py"))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib"]
    command += ["-o", "consider_namespace_packages=true", "-W", "ignore", "--rootdir", str(tmp_path), *tests]
    done = subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, env=_environ(folder.parents[1]), timeout=600
    )
    if test_fails_on is None:
        assert done.returncode == 0, done.stdout[-3000:]
    else:
        assert done.returncode == 1 and test_fails_on in done.stdout, done.stdout[-3000:]

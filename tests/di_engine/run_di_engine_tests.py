"""Run DI-engine 0.5.3's own env-layer tests against ding_env (or against DI-engine itself).

Run it with the Python of ``.venv-di-engine`` (DI-engine, legacy gym, pytest), from the repository root
with ``PYTHONPATH=$PWD`` so ding_env is this checkout's::

    PYTHONPATH=$PWD .venv-di-engine/bin/python tests/di_engine/run_di_engine_tests.py --report out.json
    PYTHONPATH=$PWD .venv-di-engine/bin/python tests/di_engine/run_di_engine_tests.py --target ding

The test folders of ``ding.envs`` (``env/tests``, ``env_manager/tests``, ``common/tests``; the 0.5.3 wheel
and sdist ship the first two) are copied out of the installed package, every ``ding.envs`` in them
becomes ``ding_env`` and nothing else changes. The copies are laid out as ``ding_env/env/tests``, ... in a
temporary folder that joins the packages ``ding_env.env`` and ``ding_env.env_manager``, so their relative
imports (``from ..base_env_manager import ...``) and gym entry points reach ding_env. With ``--target ding``
the installed tests run on DI-engine, unchanged. The report maps every collected test, named by its path
under ``ding/envs``, to 'passed', 'failed' or 'skipped'.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import tempfile
from pathlib import Path

import pytest

TEST_FOLDERS = ("env/tests", "env_manager/tests", "common/tests")
HERE = Path(__file__).resolve().parent
EXCLUDED = HERE / "excluded.toml"
PASSING_ON_DI_ENGINE = HERE / "passing_on_di_engine.txt"
FAILING_ON_DI_ENGINE = HERE / "failing_on_di_engine.txt"
# DI-engine's markers, declared so that pytest does not warn about them
PYTEST_INI = """[pytest]
timeout = 120
markers =
    unittest
    envtest
    tmp
    benchmark
    platformtest
    envpooltest
"""


def installed_envs_folder() -> Path:
    """The ``ding/envs`` folder of the installed DI-engine, found without importing it."""
    spec = importlib.util.find_spec("ding")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("DI-engine is not installed in this Python: run this script with .venv-di-engine/bin/python")
    return Path(next(iter(spec.submodule_search_locations))) / "envs"


def rename_imports(source: str) -> str:
    """``ding.envs`` becomes ``ding_env``, in imports and in the module paths of gym entry points alike."""
    return re.sub(r"\bding\.envs\b", "ding_env", source)


def copy_renamed(envs_folder: Path, destination: Path) -> list[Path]:
    """Copy the test folders present in ``envs_folder`` under ``destination/ding_env``, renamed; return them."""
    copied = []
    for folder in TEST_FOLDERS:
        source = envs_folder / folder
        if not source.is_dir():
            continue
        target = destination / "ding_env" / folder
        target.mkdir(parents=True)
        for path in sorted(source.glob("*.py")):
            (target / path.name).write_text(rename_imports(path.read_text()))
        # pytest names the test modules ding_env.<package>.tests.<module> from these markers; they are
        # never executed, as the real ding_env packages are imported first (see join_ding_env)
        for package in (destination / "ding_env", target.parent):
            (package / "__init__.py").touch()
        copied.append(target)
    return copied


def join_ding_env(destination: Path) -> None:
    """Make the copied ``ding_env/<package>/tests`` folders subpackages of the real ding_env packages."""
    import ding_env

    for package_folder in sorted((destination / "ding_env").iterdir()):
        if package_folder.is_dir():
            package = importlib.import_module(f"ding_env.{package_folder.name}")
            package.__path__.append(str(package_folder))
    print(f"ding_env from {Path(ding_env.__file__).parent}", flush=True)


class OutcomeRecorder:
    """A pytest plugin that records each test's outcome under its path relative to ``ding/envs``."""

    def __init__(self) -> None:
        self.outcomes: dict[str, str] = {}

    @staticmethod
    def _name(nodeid: str) -> str:
        return nodeid.removeprefix("ding_env/")

    def pytest_collection_modifyitems(self, items):
        for item in items:
            self.outcomes[self._name(item.nodeid)] = "not run"

    def pytest_collectreport(self, report):
        if report.failed:  # a module that cannot be imported: its tests count as one failure
            self.outcomes[self._name(report.nodeid)] = "not collected"

    def pytest_runtest_logreport(self, report):
        name = self._name(report.nodeid)
        if self.outcomes.get(name) == "failed":
            return  # a failed setup or call stays failed whatever its teardown does
        if report.failed:
            self.outcomes[name] = "failed"
        elif report.skipped:
            self.outcomes[name] = "skipped"
        elif report.when == "call":
            self.outcomes[name] = "passed"


def run(target: str, selected: list[str] | None, pytest_args: list[str]) -> dict[str, str]:
    """Run the tests (all, or the ``selected`` names) on ``target`` and return their outcomes."""
    envs_folder = installed_envs_folder()
    with tempfile.TemporaryDirectory(prefix="di-engine-env-tests-") as tmp:
        root = Path(tmp)
        (root / "pytest.ini").write_text(PYTEST_INI)
        if target == "ding_env":
            folders = copy_renamed(envs_folder, root)
            join_ding_env(root)
            rootdir = root  # test ids ding_env/<folder>/...
            base = root / "ding_env"
        else:
            folders = [envs_folder / folder for folder in TEST_FOLDERS if (envs_folder / folder).is_dir()]
            rootdir = base = envs_folder  # test ids <folder>/...
        paths = [str(base / name) for name in selected] if selected else [str(folder) for folder in folders]
        recorder = OutcomeRecorder()
        args = ["-q", "-p", "no:cacheprovider", "--rootdir", str(rootdir), "-c", str(root / "pytest.ini")]
        args += ["--import-mode=append", "--continue-on-collection-errors", "-rfE", *pytest_args, *paths]
        pytest.main(args, plugins=[recorder])
        return recorder.outcomes


def listed_tests(path: Path) -> list[str]:
    """The test names of a list file (one a line, ``#`` comments)."""
    lines = (line.strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def required_tests() -> list[str]:
    """The tests that pass on DI-engine and are not excluded, and those listed as failing only there.

    Each must pass on ding_env.
    """
    import tomllib

    excluded = {name for group in tomllib.loads(EXCLUDED.read_text()).values() for name in group}
    passing = [name for name in listed_tests(PASSING_ON_DI_ENGINE) if name not in excluded]
    return passing + listed_tests(FAILING_ON_DI_ENGINE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=("ding_env", "ding"), default="ding_env")
    parser.add_argument("--required", action="store_true", help="only the tests every ding_env must pass")
    parser.add_argument("--report", type=Path, help="write {test: outcome} as JSON here")
    parser.add_argument("tests", nargs="*", help="test names relative to ding/envs (default: all)")
    args, pytest_args = parser.parse_known_args()
    selected = args.tests or (required_tests() if args.required else None)
    outcomes = run(args.target, selected, pytest_args)
    counts = {outcome: sum(1 for value in outcomes.values() if value == outcome) for outcome in set(outcomes.values())}
    print(f"{args.target}: {len(outcomes)} collected, {counts}")
    if args.report:
        args.report.write_text(json.dumps(outcomes, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()

"""DI-engine 0.5.3's own env-layer tests, with ``ding.envs`` renamed to ``ding_env``, pass on ding_env.

``tests/di_engine/run_di_engine_tests.py`` copies them out of DI-engine in ``.venv-di-engine`` and runs
them there against this checkout; every test that passes on DI-engine itself
(``tests/di_engine/passing_on_di_engine.txt``) must pass, except those ``tests/di_engine/excluded.toml``
names with a reason of one of its two kinds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parent.parent
SUITE = REPO / "tests" / "di_engine"
DI_ENGINE_PYTHON = REPO / ".venv-di-engine" / "bin" / "python"
REASON_KINDS = {"private_attribute", "fixed_in_ding_env"}

sys.path.insert(0, str(SUITE))
import run_di_engine_tests as runner  # noqa: E402 - the runner is a script beside its lists

sys.path.remove(str(SUITE))


def passing_on_di_engine() -> list[str]:
    lines = (line.strip() for line in runner.PASSING_ON_DI_ENGINE.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def test_exclusions_are_few_and_each_has_a_reason_of_an_allowed_kind():
    excluded = tomllib.loads(runner.EXCLUDED.read_text())
    assert set(excluded) <= REASON_KINDS
    passing = set(passing_on_di_engine())
    for kind, tests in excluded.items():
        for name, reason in tests.items():
            assert name in passing, f"{name} is excluded but does not pass on DI-engine: drop it"
            assert reason.strip(), f"{name} has no reason"
            if kind == "private_attribute":
                assert "_" in reason and ("reads" in reason or "sets" in reason)
            else:
                assert "out-of-space actions reaching the env" in reason  # a behaviour the docs list
    assert "bad actions (wrong shape or dtype, outside the space, NaN)" in (REPO / "docs" / "managers.md").read_text()
    required = runner.required_tests()
    assert len(required) == len(passing) - sum(len(tests) for tests in excluded.values())


def test_only_ding_envs_is_renamed():
    source = (
        "from ding.envs.env import DingEnvWrapper\nfrom ding.torch_utils import to_ndarray\n"
        'entry_point="ding.envs.env.tests.test_ding_env_wrapper:FakeEnvForTest"\nfrom ..base_env_manager import X\n'
    )
    assert runner.rename_imports(source) == (
        "from ding_env.env import DingEnvWrapper\nfrom ding.torch_utils import to_ndarray\n"
        'entry_point="ding_env.env.tests.test_ding_env_wrapper:FakeEnvForTest"\nfrom ..base_env_manager import X\n'
    )


def test_di_engine_env_tests_that_pass_on_di_engine_pass_on_ding_env(tmp_path):
    assert DI_ENGINE_PYTHON.exists(), "the DI-engine venv is missing: `make test` builds .venv-di-engine"
    report = tmp_path / "report.json"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run(
        [str(DI_ENGINE_PYTHON), str(SUITE / "run_di_engine_tests.py"), "--required", "--report", str(report)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=env,
    )
    assert report.exists(), result.stdout[-3000:] + result.stderr[-3000:]
    outcomes = json.loads(report.read_text())
    required = runner.required_tests()
    assert sorted(outcomes) == sorted(required), result.stdout[-2000:]
    failed = {name: outcome for name, outcome in outcomes.items() if outcome != "passed"}
    assert not failed, f"{failed}\n{result.stdout[-6000:]}"

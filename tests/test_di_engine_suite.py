"""DI-engine 0.5.3's own env-layer tests, with ``ding.envs`` renamed to ``ding_env``, pass on ding_env.

``tests/di_engine/run_di_engine_tests.py`` copies them out of DI-engine in ``.venv-di-engine`` and runs
them there against this checkout; every test that passes on DI-engine itself
(``tests/di_engine/passing_on_di_engine.txt``) must pass, except those ``tests/di_engine/excluded.toml``
names with a reason of one of its two kinds.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from tests.support import DI_ENGINE_VENV

REPO = Path(__file__).resolve().parent.parent
SUITE = REPO / "tests" / "di_engine"
DI_ENGINE_PYTHON = DI_ENGINE_VENV / "bin" / "python"
RUN_TIMEOUT = 300  # seconds for the whole DI-engine run (each of its tests has its own 120)
REASON_KINDS = {"private_attribute", "fixed_in_ding_env"}

sys.path.insert(0, str(SUITE))
import run_di_engine_tests as runner  # noqa: E402 - the runner is a script beside its lists

sys.path.remove(str(SUITE))


def passing_on_di_engine() -> list[str]:
    return runner.listed_tests(runner.PASSING_ON_DI_ENGINE)


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
    failing_on_di_engine = runner.listed_tests(runner.FAILING_ON_DI_ENGINE)
    assert not passing & set(failing_on_di_engine)
    excluded_count = sum(len(tests) for tests in excluded.values())
    assert len(required) == len(passing) - excluded_count + len(failing_on_di_engine)


def test_only_ding_envs_is_renamed():
    source = (
        "from ding.envs.env import DingEnvWrapper\nfrom ding.torch_utils import to_ndarray\n"
        'entry_point="ding.envs.env.tests.test_ding_env_wrapper:FakeEnvForTest"\nfrom ..base_env_manager import X\n'
    )
    assert runner.rename_imports(source) == (
        "from ding_env.env import DingEnvWrapper\nfrom ding.torch_utils import to_ndarray\n"
        'entry_point="ding_env.env.tests.test_ding_env_wrapper:FakeEnvForTest"\nfrom ..base_env_manager import X\n'
    )


# DI-engine's supervisor tests wait out their own reset timeouts, longer in all than the suite's default bound
# on a busy machine; the run's own bound comes first, so a stuck run fails with the runner's output.
@pytest.mark.timeout(RUN_TIMEOUT + 60)
def test_di_engine_env_tests_that_pass_on_di_engine_pass_on_ding_env(tmp_path):
    assert DI_ENGINE_PYTHON.exists(), "the DI-engine venv is missing: `make test` builds .venv-di-engine"
    report = tmp_path / "report.json"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    # Its own session, so that a run cut short (past its bound, or by Ctrl-C) ends with every process it started.
    run = subprocess.Popen(
        [str(DI_ENGINE_PYTHON), str(SUITE / "run_di_engine_tests.py"), "--required", "--report", str(report)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
        env=env,
        start_new_session=True,
    )
    try:
        output, _ = run.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        output = end_session(run)
        pytest.fail(f"DI-engine's env tests ran past {RUN_TIMEOUT} s; their output ends:\n{output[-4000:]}")
    finally:
        if run.poll() is None:
            end_session(run)
    assert report.exists(), output[-6000:]
    outcomes = json.loads(report.read_text())
    required = runner.required_tests()
    assert sorted(outcomes) == sorted(required), output[-2000:]
    failed = {name: outcome for name, outcome in outcomes.items() if outcome != "passed"}
    assert not failed, f"{failed}\n{output[-6000:]}"


def end_session(run: subprocess.Popen) -> str:
    """End ``run`` and every process of its session; its output."""
    # SIGTERM first: multiprocessing's resource tracker ignores it and unlinks what the others leave.
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):  # the session ended by itself meanwhile
            os.killpg(run.pid, sig)
        try:
            return run.communicate(timeout=30)[0]
        except subprocess.TimeoutExpired:
            continue
    return "(the run's output stayed open after SIGKILL)"

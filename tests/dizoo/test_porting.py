"""DI-engine 0.5.3's own dizoo env modules, ported by docs/porting.md's import renames (in .venv-di-engine).

What this measures per family (di_engine_port.py prints it): the ported modules keep no DI-engine
import and register into ding_env's registry; cartpole, pendulum, lunarlander and mujoco then run the
same in the serial and the subprocess manager; and ``ding-env check --di-engine`` reports each family's
real gaps once each, with DI-engine's tolerated forms as warnings.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DI_ENGINE_PYTHON = REPO / ".venv-di-engine" / "bin" / "python"
FAMILIES = ["cartpole", "pendulum", "lunarlander", "minigrid", "atari", "mujoco"]
# The families whose ported env runs in the managers of that venv. Not minigrid: DI-engine's env reads
# reward_range, which Gymnasium 1.x wrappers no longer have; not atari: legacy gym has no ALE ids with ale-py 0.12.
RUNNING = ["cartpole", "pendulum", "lunarlander", "mujoco"]
TOLERATED = ("not a Gymnasium space", "must have shape (), got (1,)", "spaces are None before the first reset")


@pytest.fixture(scope="module")
def ported(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("ported")
    script = REPO / "tests" / "dizoo" / "di_engine_port.py"
    result = subprocess.run(
        [str(DI_ENGINE_PYTHON), str(script), str(root), *FAMILIES],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("family", FAMILIES)
def test_renaming_imports_ports_the_module_into_ding_env(ported, family):
    assert ported[family]["di_engine_imports_left"] == []
    assert ported[family]["registered"]  # into ding_env's ENV_REGISTRY
    assert ported["ding_imported"] is False  # nothing of DI-engine was imported on the way


@pytest.mark.parametrize("family", RUNNING)
def test_ported_envs_run_the_same_in_the_serial_and_subprocess_managers(ported, family):
    base, subprocess_run = ported[family]["base"], ported[family]["subprocess"]
    assert "error" not in base and "error" not in subprocess_run, base.get("error") or subprocess_run.get("error")
    assert base == subprocess_run


@pytest.mark.parametrize("family", RUNNING)
def test_check_in_di_engine_mode_finds_only_the_global_rng_use_of_running_ports(ported, family):
    check = ported[family]["check"]
    # DI-engine's envs draw dynamic seeds from np.random: a real finding, the only error.
    assert [error.split(":")[0] for error in check["error"]] == ["check_global_rng"]
    assert any("not a Gymnasium space" in warning for warning in check["warning"])


@pytest.mark.parametrize("family", FAMILIES)
def test_check_in_di_engine_mode_reports_each_cause_once(ported, family):
    check = ported[family]["check"]
    assert check["exit_code"] in (0, 1), check.get("stderr")
    assert not [error for error in check["error"] if any(form in error for form in TOLERATED)]
    causes = [error.split(" raised ", 1)[1] for error in check["error"] if " raised " in error]
    assert len(causes) == len(set(causes))  # a later check failing the same way is not reported again

"""The benchmark runs end to end on a tiny step count (no speed assertion: speed is measured, not asserted)."""

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support import child_pids, leaked_segments, shm_segments


# Starts some forty executors, each with its own processes: a minute on a loaded two-core machine.
@pytest.mark.timeout(300)
def test_benchmark_quick_run(tmp_path):
    result = subprocess.run(
        [sys.executable, "benchmarks/bench_env_manager.py", "--quick", "--only", "cartpole", "--out", tmp_path],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "results.json").read_text())
    rates = data["workloads"]["CartPole-v1 x8"]
    skipped = [line.strip() for line in result.stdout.splitlines() if "skipped" in line]
    for name in (
        "single-process loop",
        "bound: independent processes, no executor",
        "gymnasium AsyncVectorEnv",
        "ding_env subprocess (batched)",
        "ding_env subprocess (batched, seed per episode)",
        "ding_env subprocess (batched, cpu_affinity)",
        # DI-engine runs in its own venv, which `make test` builds (.venv-di-engine).
        "DI-engine SyncSubprocessEnvManager (dict)",
        "DI-engine AsyncSubprocessEnvManager (dict)",
        # PufferLib is installed by `make test` with --no-deps (requirements-no-deps.txt).
        "PufferLib Serial",
        "PufferLib Multiprocessing (1 worker)",
    ):
        assert name in rates, f"{name} did not run: {skipped}"
        assert rates[name] > 0
    assert data["machine"]["cores"] >= 1
    assert "x single" in result.stdout and "x bound" in result.stdout
    # "cartpole" also selects the row of SB3's PPO collecting CartPole (make test installs SB3).
    sb3_rates = data["sb3_ppo_collection"]["rates"]
    for name in ("ding_env.sb3 over subprocess (batched)", "SB3 SubprocVecEnv", "SB3 DummyVecEnv"):
        assert sb3_rates[name] > 0
    assert "x Subproc" in result.stdout


def test_bound_reports_a_failing_process_by_its_envs(monkeypatch):
    monkeypatch.syspath_prepend(str(Path("benchmarks").resolve()))  # the spawned processes import from there too
    from independent import bench_independent_processes
    from workloads import Workload

    broken = Workload("no such env x2", "NoSuchEnv-v0", 2)
    actions = np.zeros((4, 2), dtype=np.int64)
    with pytest.raises(RuntimeError, match=r"envs \[0\] of no such env x2 failed: .*NoSuchEnv"):
        bench_independent_processes(broken, actions, 0.0, 5)
    assert multiprocessing.active_children() == []


def test_in_situ_costs_quick_run():
    result = subprocess.run(
        [sys.executable, "benchmarks/in_situ_costs.py", "batch", "--batches", "30", "--warmup", "10"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("batch: ") and lines[0].endswith(" us per batch (parent's wall time)")
    pieces = {tuple(line.split()[:2]) for line in lines[1:]}
    assert ("parent", "WorkerSet.read_report") in pieces
    assert {("worker0", "BatchHost.step"), ("worker1", "BaseBatchEnv.step"), ("worker1", "_Worker.step")} <= pieces


def test_batch_timeline_quick_run():
    result = subprocess.run(
        [sys.executable, "benchmarks/batch_timeline.py", "--only", "zero", "--batches", "50", "--warmup", "10"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    header, _, row = result.stdout.strip().splitlines()
    assert "parent before dispatch" in header and row.startswith("| zero-cost x8 |")
    cells = [cell.strip() for cell in row.strip("|").split("|")][1:]
    times = [float(cell.removesuffix(" us")) for cell in cells]
    assert len(times) == 7 and times[0] > 0 and times[1] > 0 and times[4] > 0


@pytest.mark.parametrize("target", ["gym:CartPole-v1", "gym:Pendulum-v1"])  # Discrete and Box actions
def test_remote_timeline_quick_run(target):
    result = subprocess.run(
        [
            sys.executable,
            "benchmarks/remote_timeline.py",
            "--target",
            target,
            "--envs",
            "2",
            "--batches",
            "50",
            "--seconds",
            "0.2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = [line.strip().rsplit(None, 2) for line in result.stdout.splitlines()[1:]]
    micros = {name: float(value) for name, value, unit in lines if unit == "us"}
    assert len(micros) == 10 and "server steps its envs" in micros, result.stdout
    # A phase between two processes' clocks can come out negative on a loaded machine: the server marks a reply
    # sent only once its send returns, and the client may have decoded the reply before the server runs again.
    across = ("request sent -> server starts reading it", "reply sent -> client has it decoded")
    assert all(value > 0 for name, value in micros.items() if name not in across), result.stdout


@pytest.mark.parametrize(
    "args", [("--target", "gym:CartPole-v1", "--done"), ("--target", "gym:Pendulum-v1", "--envs", "2")]
)
def test_remote_wire_quick_run(args):
    result = subprocess.run(
        [sys.executable, "benchmarks/remote_wire.py", *args, "--calls", "20", "--repeats", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    micros = [float(line.rsplit(None, 1)[1]) for line in result.stdout.splitlines()[1:]]
    assert len(micros) == 5 and all(value > 0 for value in micros), result.stdout


def test_remote_timeline_refuses_no_batches():
    result = subprocess.run(
        [sys.executable, "benchmarks/remote_timeline.py", "--batches", "0"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and "argument --batches: must be >= 1, got 0" in result.stderr


HANGING_ENV = """
import sys
import time

import gymnasium as gym
import numpy as np


class HangingEnv(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)
    steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        HangingEnv.steps += 1
        if HangingEnv.steps == 30:
            print("hanging in step 30", file=sys.stderr, flush=True)
            time.sleep(3600)
        return np.zeros(2, np.float32), 0.0, False, False, {}


gym.register("Hanging-v0", entry_point=HangingEnv)
config = dict(env=dict(env_id="Hanging-v0"))
"""


def test_remote_timeline_stops_a_server_that_hangs_in_a_step(tmp_path):
    target = tmp_path / "hanging_env.py"
    target.write_text(HANGING_ENV)
    before = shm_segments()
    result = subprocess.run(
        [
            *(sys.executable, "benchmarks/remote_timeline.py", "--target", str(target)),
            *("--envs", "1", "--batches", "50", "--timeout", "3"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert (
        "RuntimeError: the reply to batch 30 of 250 (200 of them warm-up) did not arrive within 3 s: "
        "the server was stopped\nthe end of the server's stderr:\n    hanging in step 30" in result.stderr
    )
    # The server was stopped and reaped before the benchmark exited: none of its processes is left.
    running = [pid for pid in filter(str.isdigit, os.listdir("/proc")) if str(target) in _cmdline(pid)]
    assert running == []
    assert leaked_segments(before) == set()


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:  # ended meanwhile
        return ""


def test_a_server_that_never_gets_ready_fails_the_benchmark_at_its_deadline_and_is_stopped(monkeypatch):
    monkeypatch.syspath_prepend(str(Path("benchmarks").resolve()))
    import remote

    before = child_pids()
    never_ready = (sys.executable, "-c", "import time; print('starting', flush=True); time.sleep(60)")
    with pytest.raises(RuntimeError, match=r"was not ready within 0\.5 s; its last lines: starting"):
        remote.serve("gym:CartPole-v1", 1, (), launcher=never_ready, start_timeout=0.5)
    assert child_pids() == before  # stopped and reaped: no zombie


def test_per_env_budget_quick_run():
    result = subprocess.run(
        [
            sys.executable,
            "benchmarks/per_env_budget.py",
            "--seconds",
            "0",
            "--rounds",
            "1",
            "--only",
            "zero",
            "--profile",
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr
    rows = {
        cells[0]: cells[1:]
        for line in result.stdout.splitlines()
        if line.startswith("| ") and not line.startswith("| stage")
        for cells in [[cell.strip() for cell in line.strip("|").split("|")]]
    }
    for stage in ("1 raw Gymnasium loop", "2 DingEnvWrapper.step loop", "3 base batched, views (copy_on_get=False)"):
        assert float(rows[stage][0]) > 0
    assert (
        rows["4b subprocess batched, 2 workers, views (copy_on_get=False)"][1] == "3"
    )  # its increment is over stage 3
    assert "base batched, views (copy_on_get=False) / SyncVectorEnv =" in result.stdout
    assert "Outside the waits for workers" in result.stdout


REPO = Path(__file__).resolve().parents[1]
RESULTS_MD = REPO / "benchmarks" / "RESULTS.md"


def _section(text: str, name: str) -> str:
    start, end = f"<!-- --8<-- [start:{name}] -->\n", f"<!-- --8<-- [end:{name}] -->"
    return text[text.index(start) + len(start) : text.index(end)]


def test_results_md_opens_with_the_standing_rendered_from_the_recorded_run(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    from standing import STANDING_JSON, load, tables

    text = RESULTS_MD.read_text()
    assert STANDING_JSON.parent == REPO / "benchmarks" / "results" and STANDING_JSON.is_file()
    assert _section(text, "standing") == tables(load())
    assert text.index("## Current standing") < text.index("## Other measurements") < text.index("## History")


def test_every_recorded_run_is_in_the_results_folder():
    recorded = sorted(path.name for path in (REPO / "benchmarks" / "results").glob("*.json"))
    assert recorded and not list((REPO / "benchmarks").glob("*.json"))
    for name in recorded:
        assert json.loads((REPO / "benchmarks" / "results" / name).read_text())["machine"]["cores"] >= 1


def test_chart_draws_the_standing_from_the_recorded_run(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    from standing import STANDING_JSON

    png = tmp_path / "chart.png"
    result = subprocess.run(
        [sys.executable, "benchmarks/chart.py", str(STANDING_JSON), str(png)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert png.read_bytes().startswith(b"\x89PNG")
    assert (REPO / "docs" / "assets" / "benchmarks.png").read_bytes().startswith(b"\x89PNG")  # the committed chart

"""The benchmark runs end to end on a tiny step count (no speed assertion: speed is measured, not asserted)."""

import json
import subprocess
import sys


def test_benchmark_quick_run(tmp_path):
    result = subprocess.run(
        [sys.executable, "benchmarks/bench_env_manager.py", "--quick", "--only", "zero,cartpole", "--out", tmp_path],
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
        "gymnasium AsyncVectorEnv",
        "ding_env subprocess (batched)",
        "ding_env subprocess (batched, seed per episode)",
        # DI-engine runs in its own venv, which `make test` builds (.venv-di-engine).
        "DI-engine SyncSubprocessEnvManager (dict)",
        "DI-engine AsyncSubprocessEnvManager (dict)",
    ):
        assert name in rates, f"{name} did not run: {skipped}"
        assert rates[name] > 0
    assert data["machine"]["cores"] >= 1
    assert "x single" in result.stdout

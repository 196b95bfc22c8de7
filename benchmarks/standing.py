"""The current standing against the peers: the opening tables of RESULTS.md, rendered from one recorded run.

``STANDING_JSON`` names the run; RESULTS.md's standing section is this script's output for it (a test
checks they agree), and ``chart.py`` draws the committed chart from the same file. After a new full run,
move its results.json into ``benchmarks/results/``, point ``STANDING_JSON`` at it and re-render both.

Usage::

    python benchmarks/standing.py [RESULTS_JSON]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from independent import BOUND

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
STANDING_JSON = RESULTS_DIR / "results-2026-11-24-run31.json"

SINGLE = "single-process loop"
# ding-env's default way to step envs in worker processes: the ratio to each peer is taken against it.
REFERENCE = "ding_env subprocess (batched)"
PEERS = (
    "gymnasium SyncVectorEnv",
    "gymnasium AsyncVectorEnv",
    "SB3 SubprocVecEnv",
    "EnvPool",
    "PufferLib Serial",
    "PufferLib Multiprocessing (1 worker)",
    "DI-engine SyncSubprocessEnvManager (dict)",
    "DI-engine AsyncSubprocessEnvManager (dict)",
)
OURS = (
    "ding_env base (batched)",
    "ding_env subprocess (dict)",
    REFERENCE,
    "ding_env async_subprocess (batched)",
    "ding_env subprocess (batched, cpu_affinity)",
    # A new seed every episode, as collectors do: what seeding costs each env family (docs/env-families.md).
    "ding_env subprocess (batched, seed per episode)",
    # Views of the shared rows, as PufferLib's executors hand back: the layout to set beside them.
    "ding_env subprocess (batched, cpu_affinity, copy_on_get=False)",
)
STANDING_ROWS = (SINGLE, BOUND, *PEERS, *OURS)
# DI-engine's managers have only the dict API: each is also set against ours through that API.
DICT_PAIRS = (
    ("ding_env subprocess (dict)", "DI-engine SyncSubprocessEnvManager (dict)"),
    ("ding_env async_subprocess (dict)", "DI-engine AsyncSubprocessEnvManager (dict)"),
)


def load(path: Path = STANDING_JSON) -> dict:
    """A results.json of ``bench_env_manager.py``."""
    return json.loads(Path(path).read_text())


def standing_rates(rates: dict[str, float]) -> dict[str, float]:
    """The standing's rows of one workload, in table order (rows the run skipped are left out)."""
    return {name: rates[name] for name in STANDING_ROWS if name in rates}


def tables(results: dict, path: Path = STANDING_JSON) -> str:
    """The standing as Markdown: the run and machine, then one table per workload."""
    machine = results["machine"]
    rounds = [len(rounds_of) for workload in results.get("rounds", {}).values() for rounds_of in workload.values()]
    how = f"the median of {statistics.median(rounds):.0f} interleaved rounds per executor" if rounds else "one pass"
    lines = [
        f"Recorded run: `{path.relative_to(BENCH_DIR.parent).as_posix()}`, {how}.",
        f"Machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}, {machine['platform']}.",
        "",
    ]
    for label, rates in results["workloads"].items():
        single, bound, reference = rates[SINGLE], rates.get(BOUND), rates.get(REFERENCE)
        lines += [
            f"### {label}",
            "",
            "| executor | steps/s | x single loop | x bound | ding_env subprocess (batched) / it |",
            "|---|---:|---:|---:|---:|",
        ]
        for name, rate in standing_rates(rates).items():
            of_bound = f"{rate / bound:.2f}" if bound else "-"
            against = f"{reference / rate:.2f}" if reference and name in PEERS else "-"
            lines.append(f"| {name} | {rate:,.0f} | {rate / single:.2f} | {of_bound} | {against} |")
        pairs = [(ours, peer) for ours, peer in DICT_PAIRS if ours in rates and peer in rates]
        if pairs:
            ratios = "; ".join(f"{ours} / {peer}: {rates[ours] / rates[peer]:.2f}" for ours, peer in pairs)
            lines += ["", f"Dict API on both sides: {ratios}."]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    json_path = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else STANDING_JSON
    print(tables(load(json_path), json_path), end="")

"""Render a results.json of bench_env_manager.py as a run's full Markdown tables (benchmarks/history/runs.md).

Usage::

    python benchmarks/results_table.py benchmarks/out/results.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from independent import BOUND
from timing import round_spread


def tables(results: dict) -> str:
    """One Markdown table per workload, with ratios to the single loop and to AsyncVectorEnv.

    For runs with a bound row (see independent.py), a column gives each rate relative to it. For
    runs with interleaved rounds, a last column gives the slowest and fastest round relative to
    the median.
    """
    lines = []
    for label, rates in results["workloads"].items():
        single, vector = rates["single-process loop"], rates["gymnasium AsyncVectorEnv"]
        env_num = int(label.rsplit("x", 1)[-1])
        rounds_of = results.get("rounds", {}).get(label)  # runs with interleaved rounds: median counts
        bound = rates.get(BOUND)
        header = "| executor | steps/s | x single | x AsyncVectorEnv |" + (" x bound |" if bound else "")
        header += " us per batch step |" + (" rounds / median |" if rounds_of else "")
        lines += [f"### {label}", "", header, "|---|" + "---:|" * (header.count("|") - 2)]
        for name, rate in rates.items():
            per_batch = env_num / rate * 1e6
            row = f"| {name} | {rate:,.0f} | {rate / single:.2f} | {rate / vector:.2f} |"
            if bound:
                row += f" {rate / bound:.2f} |"
            row += f" {per_batch:.1f} |"
            if rounds_of:
                row += f" {round_spread(rounds_of[name], rate)} |"
            lines.append(row)
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(tables(json.loads(Path(sys.argv[1]).read_text())))

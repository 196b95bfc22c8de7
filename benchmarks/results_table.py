"""Render a results.json of bench_env_manager.py as the Markdown tables of RESULTS.md.

Usage::

    python benchmarks/results_table.py benchmarks/out/results.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def tables(results: dict) -> str:
    """One Markdown table per workload, with ratios to the single loop and to AsyncVectorEnv."""
    lines = []
    for label, rates in results["workloads"].items():
        single, vector = rates["single-process loop"], rates["gymnasium AsyncVectorEnv"]
        env_num = int(label.rsplit("x", 1)[-1])
        lines += [f"### {label}", "", "| executor | steps/s | x single | x AsyncVectorEnv | us per batch step |"]
        lines.append("|---|---:|---:|---:|---:|")
        for name, rate in rates.items():
            per_batch = env_num / rate * 1e6
            lines.append(f"| {name} | {rate:,.0f} | {rate / single:.2f} | {rate / vector:.2f} | {per_batch:.1f} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(tables(json.loads(Path(sys.argv[1]).read_text())))

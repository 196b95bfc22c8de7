"""Bar charts of a recorded run: each executor's steps/s relative to the single-process loop, per workload.

Without arguments it draws the committed chart of the current standing (``standing.STANDING_JSON``, its
rows) into ``docs/assets/benchmarks.png``; ``bench_env_manager.py`` draws every row of a fresh run with
``plot``. Needs matplotlib (the ``bench`` extra).

Usage::

    python benchmarks/chart.py [RESULTS_JSON [PNG]]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from independent import BOUND
from standing import BENCH_DIR, SINGLE, STANDING_JSON, load, standing_rates

CHART_PNG = BENCH_DIR.parent / "docs" / "assets" / "benchmarks.png"


def plot(results: dict, path: Path, rows: Callable[[dict[str, float]], dict[str, float]] = dict) -> bool:
    """Draw ``rows(rates)`` of every workload of ``results`` into the PNG ``path``.

    Returns:
        False when matplotlib is not installed or the run has no workloads (nothing is drawn).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart (pip install -e '.[bench]')")
        return False
    workloads = {label: rows(rates) for label, rates in results["workloads"].items()}
    if not workloads:
        return False
    height = sum(0.25 * len(rates) + 0.8 for rates in workloads.values())
    fig, axes = plt.subplots(
        len(workloads),
        1,
        figsize=(9, height),
        squeeze=False,
        gridspec_kw={"height_ratios": [len(rates) for rates in workloads.values()]},
    )
    for axis, (label, rates) in zip(axes[:, 0], workloads.items(), strict=True):
        single = rates[SINGLE]
        names = list(rates)
        ratios = [rates[name] / single for name in names]
        colors = ["tab:orange" if name.startswith("ding_env") else "tab:gray" for name in names]
        colors = ["tab:blue" if name == BOUND else color for name, color in zip(names, colors, strict=True)]
        axis.barh(names, ratios, color=colors)
        axis.axvline(1.0, color="black", linewidth=0.8)
        for y, ratio in enumerate(ratios):
            axis.text(ratio, y, f" {ratio:.2f}", va="center", fontsize=7)
        axis.set_title(f"{label}: steps/s relative to the single-process loop", fontsize=10)
        axis.invert_yaxis()
        axis.tick_params(axis="y", labelsize=8)
        axis.set_xlim(0, max(ratios) * 1.15)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    # No timestamps in the file, so the same run always gives the same bytes.
    fig.savefig(path, dpi=80, bbox_inches="tight", metadata={"Software": None})  # long row names stay whole
    plt.close(fig)
    return True


if __name__ == "__main__":
    json_path = Path(sys.argv[1]) if len(sys.argv) > 1 else STANDING_JSON
    png_path = Path(sys.argv[2]) if len(sys.argv) > 2 else CHART_PNG
    sys.exit(0 if plot(load(json_path), png_path, standing_rates) else 1)

"""Progress bars of the CLI (tqdm, imported when a bar is made): one line, 80 columns at most, with ETA."""

from __future__ import annotations

import shutil
from typing import Any, TextIO


def progress_bar(total: int, stream: TextIO | None, desc: str, unit: str) -> Any:
    """A tqdm bar on ``stream`` that fits the terminal (80 columns at most) and shows the ETA.

    Disabled when ``stream`` is None or not a terminal, so logs and pipes get no redraws.
    """
    from tqdm import tqdm

    interactive = stream is not None and stream.isatty()
    columns = min(80, shutil.get_terminal_size((80, 24)).columns)
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        file=stream,
        ncols=columns,
        disable=not interactive,
        mininterval=0.25,
        bar_format="{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]{postfix}",
    )

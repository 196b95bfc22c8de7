"""Progress bars of the CLI (tqdm, imported when a bar is made): one line, 80 columns at most, with ETA."""

from __future__ import annotations

import shutil
from typing import Any, TextIO


class _NoBar:
    """What ``progress_bar`` gives where no bar is drawn: the calls the CLI makes on a bar, doing nothing."""

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None

    def update(self, n: int = 1) -> None:
        return None

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        return None


def progress_bar(total: int, stream: TextIO | None, desc: str, unit: str) -> Any:
    """A tqdm bar on ``stream`` that fits the terminal (80 columns at most) and shows the ETA.

    None is drawn when ``stream`` is None or not a terminal, so logs and pipes get no redraws (and tqdm is
    not imported).
    """
    if stream is None or not stream.isatty():
        return _NoBar()
    from tqdm import tqdm

    columns = min(80, shutil.get_terminal_size((80, 24)).columns)
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        file=stream,
        ncols=columns,
        mininterval=0.25,
        bar_format="{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]{postfix}",
    )

"""Warnings shown at the line of the caller's code that led to them, however deep in ding-env they arise."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_at_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message)`` attributed to the first frame outside the ``ding_env`` package.

    A warning raised from a backend several calls below ``manager.launch()`` would otherwise name a line of
    ding-env's (``stacklevel`` counts frames, and their number depends on the path taken).
    """
    level, frame = 2, sys._getframe(1)  # stacklevel 2: the frame that called this function
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        level += 1
        frame = frame.f_back
    warnings.warn(message, category, stacklevel=level)


@contextlib.contextmanager
def entry_point_warnings_unlocated() -> Iterator[None]:
    """Show warnings whose line is the program's entry point (``ding-env``'s script, runpy) without a location.

    Run from the command line, ``warn_at_caller`` reaches no frame of the user's: the first one outside
    ``ding_env`` is the ``ding-env`` script's ``sys.exit(main())``, or ``<frozen runpy>`` for ``python -m``,
    and a location naming either tells a user nothing. Warnings from the user's own files keep theirs.
    """
    entry = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else None
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001, ANN202 (showwarning's)
        if filename.startswith("<frozen") or (entry is not None and os.path.abspath(filename) == entry):
            print(f"{category.__name__}: {message}", file=sys.stderr if file is None else file)
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = shown

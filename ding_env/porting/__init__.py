"""Porting DI-engine env code to ding_env: ``ding-env port SRC --out DST`` (or ``python -m ding_env.porting``).

The import renames are a table (``IMPORT_RENAMES``, the README's) and a function over source text
(``rename_imports``); :func:`port` ports a file or a package folder, byte for byte but for the
lines it changes, and returns what it found, which ``format_report`` writes as ``PORTING.md``.
Modules: ``names`` (what each DI-engine name becomes), ``imports`` (what each import statement
becomes, for the rewrite and the report alike), ``references`` (relative imports and module-path
strings), ``rewrite`` (line rewriting that keeps every other byte), ``scan`` (the static scan of
hazards), ``numpy2`` (numpy's removed aliases), ``fixes`` (``--fix``), ``destination`` (where a port
and its report go), ``trial`` (``--try``), ``tool`` (the port itself), ``report`` and ``command`` (the CLI).
"""

from ding_env.porting.imports import rename_imports
from ding_env.porting.names import IMPORT_RENAMES, resolve
from ding_env.porting.report import format_report
from ding_env.porting.tool import PortResult, port

__all__ = ["IMPORT_RENAMES", "PortResult", "format_report", "port", "rename_imports", "resolve"]

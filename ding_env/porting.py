"""Porting DI-engine env code: the import renames, as a table and as a function over source text.

``python -m ding_env.porting FILE...`` prints each file with its imports renamed.
"""

from __future__ import annotations

import re
import sys

# DI-engine module -> ding_env module. A longer prefix is tried before a shorter one; submodules follow
# their parent (ding.envs.common.common_function -> ding_env.common.common_function).
IMPORT_RENAMES = {
    "ding.envs": "ding_env",
    "ding.utils": "ding_env.utils",
    "ding.torch_utils": "ding_env.utils",
}

_IMPORT_LINE = re.compile(
    r"^(?P<head>\s*(?:from|import)\s+)(?P<module>"
    + "|".join(re.escape(name) for name in sorted(IMPORT_RENAMES, key=len, reverse=True))
    + r")(?P<tail>[.\s].*|$)"
)


def rename_imports(source: str) -> str:
    """``source`` with the modules of ``IMPORT_RENAMES`` renamed on its ``import`` / ``from`` lines only."""

    def rename(match: re.Match) -> str:
        return match.group("head") + IMPORT_RENAMES[match.group("module")] + match.group("tail")

    return "\n".join(_IMPORT_LINE.sub(rename, line) for line in source.split("\n"))


if __name__ == "__main__":
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as file:
            sys.stdout.write(rename_imports(file.read()))

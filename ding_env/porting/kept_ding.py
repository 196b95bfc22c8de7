"""Env-layer names a ported file still reaches through DI-engine's ``ding`` package (``import ding`` kept).

A file that imports ``ding`` itself for its training code (``ding.policy``) keeps that import, and
with it ``ding.utils.ENV_REGISTRY`` and ``ding.envs.*`` stay DI-engine's: an env registered there is
not in ding-env's registry, so ``ding-env run`` and the managers never find it. Each such use is
reported at its line with the ding_env name to write.
"""

from __future__ import annotations

import ast

from ding_env.porting.findings import ERROR, NAMES, WARNING, Item
from ding_env.porting.names import RENAMED, rename_module, resolve


def kept_ding_items(path: str, tree: ast.Module) -> list[Item]:
    """One item per line of ``tree`` (the ported code) using an env-layer name through a kept ``import ding``."""
    bound = {  # import ding, import ding as di, and import ding.policy (which binds ding too)
        alias.asname or "ding"
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name == "ding" or (alias.name.startswith("ding.") and alias.asname is None)
    }
    if not bound:
        return []
    longest: dict[tuple[int, int], tuple[str, str]] = {}  # the whole chain at each place: (as written, as ding's)
    for node in ast.walk(tree):
        spelled = _dotted(node)
        if spelled is None or spelled.split(".")[0] not in bound:
            continue
        place = (node.lineno, node.col_offset)
        if len(spelled) > len(longest.get(place, ("", ""))[0]):
            longest[place] = (spelled, "ding" + spelled[spelled.index(".") :])
    items = []
    for (line, _), (spelled, dotted) in sorted(longest.items()):
        new = _ding_env_name(dotted)
        if new is None:
            continue
        registry = new.endswith(".ENV_REGISTRY") or ".ENV_REGISTRY." in f"{dotted}."
        what = f"{spelled}: `import ding` keeps it DI-engine's" + (
            ", so an env registered there is not in ding-env's registry (ding-env run and the managers do not find it)"
            if registry
            else ""
        )
        items.append(Item(path, line, ERROR if registry else WARNING, what, f"import ding_env and write {new}", NAMES))
    return items


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or not parts:
        return None
    return ".".join([node.id, *reversed(parts)])


def _ding_env_name(dotted: str) -> str | None:
    """The ding_env name of the longest env-layer DI-engine name ``dotted`` starts with, or None."""
    parts = dotted.split(".")
    for end in range(len(parts) - 1, 1, -1):
        module = ".".join(parts[:end])
        if rename_module(module) is None:
            continue
        resolution = resolve(module, parts[end])
        if resolution.status == RENAMED:
            return resolution.new
    return None

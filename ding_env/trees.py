"""Trees: leaves nested in dicts and tuples, as ``Dict`` and ``Tuple`` observations, actions and their layouts are.

A node is a dict or a tuple; anything else (an array, an ``ArraySpec``, a leaf space) is a leaf.
Code that walks such a tree goes through ``map_tree`` (leaf by leaf, keeping the nesting) or
``split_tree`` (a tree of batches into one tree per row), so the nesting rules live here only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def map_tree(fn: Callable[..., Any], tree: Any, *others: Any) -> Any:
    """``fn(leaf, *other_leaves)`` for every leaf of ``tree``, nested as ``tree`` is.

    ``others`` have the nesting of ``tree``: their dicts are read by ``tree``'s keys (so the result
    has ``tree``'s key order) and lists may stand for its tuples.
    """
    if not isinstance(tree, (dict, tuple)):  # a leaf, the usual case
        return fn(tree, *others)
    if isinstance(tree, dict):
        return {key: map_tree(fn, sub, *[other[key] for other in others]) for key, sub in tree.items()}
    return tuple([map_tree(fn, *items) for items in zip(tree, *others, strict=True)])


def leaves(tree: Any) -> list[Any]:
    """The leaves of ``tree``, in its order."""
    found: list[Any] = []
    map_tree(found.append, tree)
    return found


def split_tree(fn: Callable[[Any], list[Any]], tree: Any, count: int) -> list[Any]:
    """The ``count`` rows of ``tree``, one tree each; ``fn(leaf)`` gives the ``count`` rows of a leaf."""
    if not isinstance(tree, (dict, tuple)):  # a leaf, the usual case
        return fn(tree)
    if isinstance(tree, dict):
        columns = {key: split_tree(fn, sub, count) for key, sub in tree.items()}
        return [{key: rows[index] for key, rows in columns.items()} for index in range(count)]
    columns = [split_tree(fn, sub, count) for sub in tree]
    return [tuple([rows[index] for rows in columns]) for index in range(count)]

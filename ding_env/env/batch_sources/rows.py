"""Rows of stacked observations: put in the caller's order, picked, written and stacked.

Observations are arrays or dicts/tuples of arrays (Dict/Tuple spaces), with one row per sub-env;
``ding_env.trees.map_tree`` walks the nesting.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ding_env.trees import map_tree


def rows_in_order(reported_ids: np.ndarray, ids: np.ndarray) -> np.ndarray | None:
    """Indices putting rows reported for ``reported_ids`` in the order of ``ids``; None when they already are."""
    reported_ids = np.asarray(reported_ids)
    if np.array_equal(reported_ids, ids):
        return None
    sorter = np.argsort(reported_ids)
    return sorter[np.searchsorted(reported_ids, ids, sorter=sorter)]


def take_rows(tree: Any, rows: np.ndarray | None) -> Any:
    """Rows ``rows`` of every array in ``tree`` (``tree`` itself when ``rows`` is None)."""
    return tree if rows is None else map_tree(lambda array: array[rows], tree)


def merge_rows(parts: list[tuple[np.ndarray, Any]], ids: np.ndarray) -> Any:
    """The rows of ``parts`` (each ``(its ids, its stacked rows)``, together ``ids``) in the order of ``ids``."""
    if len(parts) == 1:
        return parts[0][1]
    part_ids = np.concatenate([part[0] for part in parts])
    merged = map_tree(lambda *arrays: np.concatenate(arrays), parts[0][1], *[part[1] for part in parts[1:]])
    return take_rows(merged, rows_in_order(part_ids, ids))


def row_of(tree: Any, row: int) -> Any:
    """Row ``row`` of every array in ``tree``, copied (the stack it came from may be written to)."""
    return map_tree(lambda array: np.array(array[row]), tree)


def set_row(tree: Any, row: int, value: Any) -> None:
    """Write ``value`` (one row, nested as ``tree``'s rows) into row ``row`` of ``tree``."""
    map_tree(lambda array, item: array.__setitem__(row, item), tree, value)


def stack_rows(rows: list[Any]) -> Any:
    """Single rows (trees of arrays) stacked into one tree of arrays."""
    return map_tree(lambda *arrays: np.stack(arrays), rows[0], *rows[1:])

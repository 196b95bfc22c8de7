"""Array layouts derived from spaces, and trees of arrays (nested Dict/Tuple observations).

A *layout* mirrors a space: an :class:`ArraySpec` leaf per array, inside dicts
and tuples for ``Dict`` and ``Tuple`` spaces. Managers allocate one batched
array per leaf and check every array an env produces against its leaf.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from ding_env.errors import EnvDataError


class ArraySpec(NamedTuple):
    """Shape and dtype of one array leaf."""

    shape: tuple[int, ...]
    dtype: np.dtype


def layout_of(space: gym.spaces.Space) -> Any:
    """The layout of ``space``.

    Raises:
        TypeError: For spaces without a fixed array form (Text, Graph, Sequence).
    """
    if isinstance(space, gym.spaces.Dict):
        return {key: layout_of(sub) for key, sub in space.spaces.items()}
    if isinstance(space, gym.spaces.Tuple):
        return tuple(layout_of(sub) for sub in space.spaces)
    if isinstance(space, (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)):
        return ArraySpec(tuple(space.shape), np.dtype(space.dtype))
    raise TypeError(f"space {space!r} has no fixed array layout")


def reward_layout(space: gym.spaces.Space) -> ArraySpec:
    """The layout of one env's reward row: the reward space's shape (``(1,)`` for a scalar space) and dtype."""
    return ArraySpec(tuple(space.shape) or (1,), np.dtype(space.dtype))


def map_layout(fn: Callable[[ArraySpec], Any], layout: Any) -> Any:
    """Apply ``fn`` to every leaf of ``layout``, keeping the nesting."""
    if isinstance(layout, ArraySpec):
        return fn(layout)
    if isinstance(layout, dict):
        return {key: map_layout(fn, sub) for key, sub in layout.items()}
    return tuple(map_layout(fn, sub) for sub in layout)


def leaves(layout: Any) -> list[ArraySpec]:
    """The leaves of ``layout`` in a fixed order."""
    if isinstance(layout, ArraySpec):
        return [layout]
    subs = layout.values() if isinstance(layout, dict) else layout
    return [leaf for sub in subs for leaf in leaves(sub)]


def map_tree(fn: Callable[..., Any], tree: Any, *others: Any) -> Any:
    """Apply ``fn`` leaf-wise over ``tree`` and trees of the same nesting."""
    if isinstance(tree, dict):
        return {key: map_tree(fn, tree[key], *(other[key] for other in others)) for key in tree}
    if isinstance(tree, tuple):
        return tuple(map_tree(fn, *items) for items in zip(tree, *others, strict=True))
    return fn(tree, *others)


def check_value(layout: Any, value: Any, where: str, field: str = "obs") -> None:
    """Check that ``value`` has exactly the shapes and dtypes of ``layout``.

    No casting, no broadcasting: a float64 array for a float32 leaf is an error.

    Raises:
        EnvDataError: Naming ``where`` (the env), the field path, what was expected and what arrived.
    """
    if isinstance(layout, ArraySpec):
        shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
        if shape != layout.shape or dtype != layout.dtype or not isinstance(value, (np.ndarray, np.generic)):
            got = f"shape {shape}, dtype {dtype}" if dtype is not None else f"{type(value).__name__} {value!r:.60}"
            raise EnvDataError(
                f"{where}: {field} must have shape {layout.shape} and dtype {layout.dtype} "
                f"as its space declares, got {got}"
            )
        return
    if isinstance(layout, dict):
        if not isinstance(value, dict) or value.keys() != layout.keys():
            keys = sorted(value) if isinstance(value, dict) else type(value).__name__
            raise EnvDataError(f"{where}: {field} must be a dict with keys {sorted(layout)}, got {keys}")
        for key, sub in layout.items():
            check_value(sub, value[key], where, f"{field}[{key!r}]")
        return
    if not isinstance(value, (tuple, list)) or len(value) != len(layout):
        raise EnvDataError(f"{where}: {field} must be a tuple of {len(layout)} items, got {type(value).__name__}")
    for index, (sub, item) in enumerate(zip(layout, value, strict=True)):
        check_value(sub, item, where, f"{field}[{index}]")


def compile_check(layout: Any, describe: Callable[[Any], str]) -> Callable[[Any, Any, str], None]:
    """A fast ``check(value, key, field)`` for ``layout``; ``describe(key)`` names the env, only on error."""
    if isinstance(layout, ArraySpec):
        shape, dtype = layout.shape, layout.dtype

        def check_leaf(value: Any, key: Any, field: str) -> None:
            if type(value) is not np.ndarray or value.shape != shape or value.dtype != dtype:
                check_value(layout, value, describe(key), field)

        return check_leaf

    def check_tree(value: Any, key: Any, field: str) -> None:
        check_value(layout, value, describe(key), field)

    return check_tree


def allocate(layout: Any, count: int, make: Callable[[tuple[int, ...], np.dtype], np.ndarray] | None = None) -> Any:
    """A tree of arrays with a leading batch axis of ``count`` for every leaf."""
    make = make or (lambda shape, dtype: np.zeros(shape, dtype))
    return map_layout(lambda leaf: make((count, *leaf.shape), leaf.dtype), layout)


def write(buffers: Any, index: Any, value: Any) -> None:
    """Copy ``value`` into row ``index`` (or rows) of every leaf of ``buffers``."""
    if isinstance(buffers, dict):
        for key, sub in buffers.items():
            write(sub, index, value[key])
    elif isinstance(buffers, tuple):
        for sub, item in zip(buffers, value, strict=True):
            write(sub, index, item)
    else:
        buffers[index] = value


def compile_writer(buffers: Any) -> Callable[[int, Any], None]:
    """A fast ``write(index, value)`` for ``buffers`` (a single array needs no tree walk)."""
    if isinstance(buffers, np.ndarray):

        def write_leaf(index: int, value: Any) -> None:
            buffers[index] = value

        return write_leaf
    return lambda index, value: write(buffers, index, value)


def put(buffers: Any, rows: Any, values: Any) -> None:
    """Copy the stacked ``values`` into ``rows`` (an index, slice or index array) of every leaf."""
    write(buffers, rows, values)


def take(buffers: Any, rows: Any) -> Any:
    """Rows of every leaf: views for a slice, copies for an index array."""
    return map_tree(lambda array: array[rows], buffers)


def copy_tree(tree: Any) -> Any:
    """A copy of every leaf of ``tree`` (None stays None: no envs were ready)."""
    if type(tree) is np.ndarray:  # the common case, without the tree walk
        return tree.copy()
    return None if tree is None else map_tree(np.copy, tree)


def row(buffers: Any, index: int, copy: bool) -> Any:
    """Row ``index`` of every leaf, copied or as a view."""
    if copy:
        return map_tree(lambda array: array[index].copy(), buffers)
    return map_tree(lambda array: array[index], buffers)


def split_rows(buffers: Any, count: int, copy: bool) -> list[Any]:
    """The ``count`` rows of ``buffers`` as one tree each.

    With ``copy``, every leaf is copied once and its rows are views of that private copy: the
    same values as a copy per row, for one numpy call instead of ``count``.
    """
    if isinstance(buffers, np.ndarray):
        return list(buffers.copy() if copy else buffers)
    if isinstance(buffers, dict):
        parts = {key: split_rows(sub, count, copy) for key, sub in buffers.items()}
        return [{key: rows[index] for key, rows in parts.items()} for index in range(count)]
    parts = [split_rows(sub, count, copy) for sub in buffers]
    return [tuple(rows[index] for rows in parts) for index in range(count)]


def action_rows(tree: Any, count: int) -> list[Any]:
    """The ``count`` rows of stacked actions, one tree per env, copied out of ``tree``.

    Every leaf is an ``np.ndarray``, a 0-d one for scalar actions (``Discrete``): what DI-engine's
    collectors hand its envs, and what its envs assert. Every manager passes actions on this way.
    """
    if isinstance(tree, np.ndarray):
        batch = tree.copy()  # the env's actions are its own, whatever the caller does with its array
        return [batch[index, ...] for index in range(count)] if batch.ndim == 1 else list(batch)
    if isinstance(tree, dict):
        parts = {key: action_rows(sub, count) for key, sub in tree.items()}
        return [{key: rows[index] for key, rows in parts.items()} for index in range(count)]
    parts = [action_rows(sub, count) for sub in tree]
    return [tuple(rows[index] for rows in parts) for index in range(count)]


def compile_order(layout: Any) -> Callable[[Any], Any]:
    """A function putting a tree's dict keys in ``layout``'s order (the space's); identity for arrays.

    The shared-memory managers rebuild observations from their buffers in the space's order; this
    gives the serial manager the same order, so ``obs.values()`` means the same in every manager.
    """
    if isinstance(layout, ArraySpec):
        return _same
    return partial(_in_order, layout)


def _same(value: Any) -> Any:
    return value


def _in_order(layout: Any, value: Any) -> Any:
    if isinstance(layout, ArraySpec):  # a NamedTuple: tested before tuples
        return value
    if isinstance(layout, dict):
        return {key: _in_order(sub, value[key]) for key, sub in layout.items()}
    return tuple(_in_order(sub, item) for sub, item in zip(layout, value, strict=True))


def unstack(tree: Any) -> list[Any]:
    """The rows of a tree of stacked arrays (the inverse of ``stack``), as views."""
    tree = map_tree(np.asarray, tree)
    leaf = tree
    while isinstance(leaf, dict | tuple):
        leaf = next(iter(leaf.values()), None) if isinstance(leaf, dict) else (leaf[0] if leaf else None)
    return split_rows(tree, 0 if leaf is None else len(leaf), copy=False)


def conform(layout: Any, value: Any) -> Any:
    """``value`` (already checked against the space of ``layout``) as the managers' buffers hold it.

    Each leaf becomes a fresh array of its layout's dtype (0-d for shape ``()``), so an env gets
    the same types from the serial manager as from shared memory (see ``action_rows``).
    """
    if isinstance(layout, ArraySpec):
        return np.array(value, dtype=layout.dtype)  # a copy: the env's action is its own
    if isinstance(layout, dict):
        return {key: conform(sub, value[key]) for key, sub in layout.items()}
    return tuple(conform(sub, item) for sub, item in zip(layout, value, strict=True))


def stack(values: list[Any]) -> Any:
    """Stack per-env trees into one tree of batched arrays."""
    first = values[0]
    if isinstance(first, dict):
        return {key: stack([value[key] for value in values]) for key in first}
    if isinstance(first, tuple):
        return tuple(stack([value[index] for value in values]) for index in range(len(first)))
    return np.array(values)  # same result as np.stack for equal shapes, without its Python-level overhead


def rows_of(ids: np.ndarray) -> slice | np.ndarray:
    """A slice when ``ids`` are consecutive and increasing (so indexing gives views), else ``ids``."""
    if not len(ids):
        return ids
    values = ids.tolist()
    first = values[0]
    if values[-1] - first == len(values) - 1 and values == list(range(first, first + len(values))):
        return slice(first, first + len(values))
    return ids

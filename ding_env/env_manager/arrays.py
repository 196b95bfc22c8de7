"""Array layouts derived from spaces, and trees of arrays (nested Dict/Tuple observations).

A *layout* mirrors a space: an :class:`ArraySpec` leaf per array, inside dicts
and tuples for ``Dict`` and ``Tuple`` spaces. Managers allocate one batched
array per leaf and check every array an env produces against its leaf.
Every walk over a layout or a tree of arrays is a ``map_tree`` or ``split_tree``
(``ding_env.trees``); the functions run per step first handle a single array directly,
which needs no walk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.env.spaces import ARRAY_SPACES, space_tree, value_problems
from ding_env.errors import EnvDataError
from ding_env.trees import leaves, map_tree, split_tree


@dataclass(frozen=True, slots=True)
class ArraySpec:
    """Shape and dtype of one array leaf (a leaf of a tree, not a tuple node)."""

    shape: tuple[int, ...]
    dtype: np.dtype


def layout_of(space: gym.spaces.Space) -> Any:
    """The layout of ``space``.

    Raises:
        TypeError: For spaces without a fixed array form (Text, Graph, Sequence).
    """
    return map_tree(_leaf_layout, space_tree(space))


def _leaf_layout(space: gym.spaces.Space) -> ArraySpec:
    if not isinstance(space, ARRAY_SPACES):
        raise TypeError(f"space {space!r} has no fixed array layout")
    return ArraySpec(tuple(space.shape), np.dtype(space.dtype))


def reward_layout(space: gym.spaces.Space) -> ArraySpec:
    """The layout of one env's reward row: the reward space's shape (``(1,)`` for a scalar space) and dtype."""
    return ArraySpec(tuple(space.shape) or (1,), np.dtype(space.dtype))


def check_value(layout: Any, value: Any, where: str, field: str = "obs") -> None:
    """Check that ``value`` has exactly the nesting, shapes and dtypes of ``layout``.

    No casting, no broadcasting: a float64 array for a float32 leaf is an error.

    Raises:
        EnvDataError: Naming ``where`` (the env), the field path, what was expected and what arrived.
    """
    problems = value_problems(value, layout, field)
    if problems:
        more = f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
        raise EnvDataError(f"{where}: {'; '.join(problems[:3])}{more}")


def compile_check(layout: Any, describe: Callable[[Any], str]) -> Callable[[Any, Any, str], None]:
    """A fast ``check(value, key, field)`` for ``layout``; ``describe(key)`` names the env, only on error."""
    if isinstance(layout, ArraySpec):
        shape, dtype = layout.shape, layout.dtype

        def check_leaf(value: Any, key: Any, field: str) -> None:
            # An exact array passes in three comparisons; anything else (a numpy scalar may pass) is checked in full.
            if type(value) is not np.ndarray or value.shape != shape or value.dtype != dtype:
                check_value(layout, value, describe(key), field)

        return check_leaf

    def check_tree(value: Any, key: Any, field: str) -> None:
        if value_problems(value, layout, field):
            check_value(layout, value, describe(key), field)

    return check_tree


def compile_stacked_check(layout: Any) -> Callable[[Any, int, str], None]:
    """A fast ``check(value, rows, field)``: ``value`` must be ``rows`` observations of ``layout``, stacked.

    What a batch env returns for ``rows`` sub-envs. The check raises ``EnvDataError`` naming the field,
    the stacked shape or dtype expected and what arrived: no casting, as for one env's observation.
    """
    if isinstance(layout, ArraySpec):
        shape, dtype = layout.shape, layout.dtype

        def check_leaf(value: Any, rows: int, field: str) -> None:
            if type(value) is not np.ndarray or value.shape != (rows, *shape) or value.dtype != dtype:
                check_value(ArraySpec((rows, *shape), dtype), value, f"{rows} stacked rows", field)

        return check_leaf

    def check_tree(value: Any, rows: int, field: str) -> None:
        check_value(
            map_tree(lambda leaf: ArraySpec((rows, *leaf.shape), leaf.dtype), layout),
            value,
            f"{rows} stacked rows",
            field,
        )

    return check_tree


def allocate(layout: Any, count: int, make: Callable[[tuple[int, ...], np.dtype], np.ndarray] | None = None) -> Any:
    """A tree of arrays with a leading batch axis of ``count`` for every leaf."""
    make = make or (lambda shape, dtype: np.zeros(shape, dtype))
    return map_tree(lambda leaf: make((count, *leaf.shape), leaf.dtype), layout)


def write(buffers: Any, index: Any, value: Any) -> None:
    """Copy ``value`` into row ``index`` (an index, slice or index array) of every leaf of ``buffers``."""
    # A loop of its own, not map_tree: run per env step, and map_tree would build a result tree of Nones.
    if isinstance(buffers, dict):
        for key, sub in buffers.items():
            write(sub, index, value[key])
    elif isinstance(buffers, tuple):
        for sub, item in zip(buffers, value, strict=True):
            write(sub, index, item)
    else:
        buffers[index] = value


def compile_writer(buffers: Any) -> Callable[[int, Any], None]:
    """A fast ``write(index, value)`` for ``buffers``."""
    if isinstance(buffers, np.ndarray):

        def write_leaf(index: int, value: Any) -> None:
            buffers[index] = value

        return write_leaf
    return partial(write, buffers)


def take(buffers: Any, rows: Any) -> Any:
    """Rows of every leaf: views for a slice, copies for an index array."""
    if type(buffers) is np.ndarray:  # one array, the usual case: no tree to walk
        return buffers[rows]
    return map_tree(lambda array: array[rows], buffers)


def copy_tree(tree: Any) -> Any:
    """A copy of every leaf of ``tree`` (None stays None: no envs were ready)."""
    if type(tree) is np.ndarray:
        return tree.copy()
    return None if tree is None else map_tree(np.copy, tree)


def row(buffers: Any, index: int, copy: bool) -> Any:
    """Row ``index`` of every leaf, copied or as a view (a 0-d array, not a numpy scalar, for a leaf of one value)."""
    if copy:
        return map_tree(lambda array: array[index, ...].copy(), buffers)
    return map_tree(lambda array: array[index, ...], buffers)


def split_rows(buffers: Any, count: int, copy: bool) -> list[Any]:
    """The ``count`` rows of ``buffers`` as one tree each.

    With ``copy``, every leaf is copied once and its rows are views of that private copy: the
    same values as a copy per row, for one numpy call instead of ``count``.
    """
    if isinstance(buffers, np.ndarray):
        return _copied_rows(buffers) if copy else _rows(buffers)
    return split_tree(_copied_rows if copy else _rows, buffers, count)


def _rows(array: np.ndarray) -> list[Any]:
    """The rows of ``array`` as views; a 1-d array's as 0-d arrays where it holds numbers.

    An env returns an observation of one number as a 0-d array; a ``Text`` leaf's rows stay ``str``.
    """
    if array.ndim > 1 or array.dtype.kind not in "biufc":
        return list(array)
    return [array[index, ...] for index in range(len(array))]


def _copied_rows(array: np.ndarray) -> list[np.ndarray]:
    return _rows(array.copy())


def action_rows(tree: Any, count: int) -> list[Any]:
    """The ``count`` rows of stacked actions, one tree per env, copied out of ``tree``.

    Every leaf is an ``np.ndarray``, a 0-d one for scalar actions (``Discrete``): what DI-engine's
    collectors hand its envs, and what its envs assert. Every manager passes actions on this way.
    """
    if isinstance(tree, np.ndarray):
        return _action_rows(tree)
    return split_tree(_action_rows, tree, count)


def _action_rows(batch: np.ndarray) -> list[np.ndarray]:
    if batch.dtype.hasobject:  # actions of a space without an array form (``object_rows``): the values themselves
        return list(batch)
    batch = batch.copy()  # the env's actions are its own, whatever the caller does with its array
    return [batch[index, ...] for index in range(len(batch))] if batch.ndim == 1 else list(batch)


def object_rows(values: list[Any]) -> np.ndarray:
    """``values`` as a 1-d object array, one value per row (tuples and lists stay whole values).

    The stacked form of actions whose space has no array form (``Text``, ``Sequence``, ``Graph``),
    so every batch of actions is indexed by rows the same way.
    """
    rows = np.empty(len(values), dtype=object)
    for index, value in enumerate(values):
        rows[index] = value
    return rows


def compile_order(layout: Any) -> Callable[[Any], Any]:
    """A function putting a tree's dict keys in ``layout``'s order (the space's); identity for arrays.

    The shared-memory managers rebuild observations from their buffers in the space's order; this
    gives the serial manager the same order, so ``obs.values()`` means the same in every manager.
    """
    if isinstance(layout, ArraySpec):
        return _same
    return partial(map_tree, _value_of_leaf, layout)


def _same(value: Any) -> Any:
    return value


def _value_of_leaf(spec: ArraySpec, value: Any) -> Any:
    return value


def unstack(tree: Any) -> list[Any]:
    """The rows of a tree of stacked arrays (the inverse of ``stack``), as views."""
    tree = map_tree(np.asarray, tree)
    first = next(iter(leaves(tree)), None)
    # Rows of actions: a leaf's items as numpy gives them (numpy scalars, str), the forms the action checks take.
    return list(tree) if isinstance(tree, np.ndarray) else split_tree(list, tree, 0 if first is None else len(first))


def conform(layout: Any, value: Any) -> Any:
    """``value`` (already checked against the space of ``layout``) as the managers' buffers hold it.

    Each leaf becomes a fresh array of its layout's dtype (0-d for shape ``()``), so an env gets
    the same types from the serial manager as from shared memory (see ``action_rows``).
    """
    return map_tree(_conform_leaf, layout, value)


def _conform_leaf(spec: ArraySpec, value: Any) -> np.ndarray:
    return np.array(value, dtype=spec.dtype)  # a copy: the env's action is its own


def stack(values: list[Any]) -> Any:
    """Stack per-env trees into one tree of batched arrays."""
    # Its own recursion, not map_tree over the values: run per step, and passing every env's tree
    # through map_tree's arguments at each node costs more.
    first = values[0]
    if isinstance(first, dict):
        return {key: stack([value[key] for value in values]) for key in first}
    if isinstance(first, tuple):
        return tuple([stack([value[index] for value in values]) for index in range(len(first))])
    return np.array(values)  # same result as np.stack for equal shapes, without its Python-level overhead


def concatenate(trees: list[Any]) -> Any:
    """Trees of stacked arrays joined row-wise, leaf by leaf (new arrays, the caller's)."""
    return map_tree(lambda *leaves: np.concatenate(leaves), *trees)


def rows_of(ids: np.ndarray) -> slice | np.ndarray:
    """A slice when ``ids`` are consecutive and increasing (so indexing gives views), else ``ids``."""
    if not len(ids):
        return ids
    values = ids.tolist()
    first = values[0]
    if values[-1] - first == len(values) - 1 and values == list(range(first, first + len(values))):
        return slice(first, first + len(values))
    return ids

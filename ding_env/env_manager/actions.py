"""Action validation shared by every manager: bad actions fail in the caller, before any env sees them.

Checks are vectorised over the batch: dtype kind, shape, finiteness and
bounds (``Box``), range (``Discrete``, ``MultiDiscrete``), 0/1 (``MultiBinary``).
Valid actions come back stacked, row ``k`` for the ``k``-th env: one array in the space's dtype,
ready for shared memory; for ``Dict``/``Tuple`` spaces a tree of such arrays, one per leaf with
its subspace's dtype; for spaces with no array form an object array of the values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.env.spaces import ARRAY_SPACES, space_tree
from ding_env.env_manager import arrays
from ding_env.summary import describe_typed, describe_value

# Up to this many actions, bounds are checked on a Python list: on a few values Python's min and max
# cost less than numpy's reductions (benchmarks/history/runs.md, the action checks of runs 4-5 and 15).
_SMALL_BATCH = 64


class ActionChecker:
    """Validates actions for one action space.

    Args:
        space: The envs' action space.
        owner: Names the manager in error messages.
    """

    def __init__(self, space: gym.spaces.Space, owner: str) -> None:
        self.space = space
        self.owner = owner
        self.shape = tuple(space.shape or ())
        self.size = int(np.prod(self.shape, dtype=np.int64))  # values in one action
        self.squeezed = _squeezed(self.shape)
        self.dtype = np.dtype(space.dtype) if space.dtype is not None else None
        self.array_form = isinstance(space, ARRAY_SPACES)
        # Dict/Tuple spaces of array spaces: each action is conformed to the leaves' dtypes, as shared
        # memory holds it. None for array spaces and for spaces without an array form (passed on as given).
        self.layout = None
        self.tree = None if self.array_form else space_tree(space)  # Dict/Tuple parts as dicts and tuples
        if not self.array_form:
            try:
                self.layout = arrays.layout_of(space)
            except TypeError:  # Text, Graph, Sequence: no array form
                pass
        # With finite Box bounds, one bounds test also catches NaN and inf.
        self.finite_bounds = isinstance(space, gym.spaces.Box) and bool(
            np.isfinite(space.low).all() and np.isfinite(space.high).all()
        )
        # Discrete ranges as Python ints, for the check of small batches.
        self.discrete_range = (
            (int(space.start), int(space.start + space.n)) if isinstance(space, gym.spaces.Discrete) else None
        )
        # A Box whose every dimension has the same finite bounds, as Python numbers (MuJoCo's are so):
        # small batches are then checked on a list.
        self.uniform_bounds = None
        if self.finite_bounds and space.low.size and (space.low == space.low.flat[0]).all():
            if (space.high == space.high.flat[0]).all():
                self.uniform_bounds = (space.low.flat[0].item(), space.high.flat[0].item())

    def check_batch(self, env_ids: np.ndarray, actions: Any) -> Any:
        """``actions`` (row ``k`` for ``env_ids[k]``) as one validated array.

        Raises:
            ValueError: Naming the first bad env id, the space and the value received.
        """
        if not len(env_ids):  # a step of no env (the async managers wait for results): any empty batch will do
            if _empty(actions):
                return actions
            raise ValueError(f"{self.owner}: a step of no env ids got actions {describe_value(actions)}")
        if self.discrete_range is not None and type(actions) is np.ndarray and actions.dtype.kind in "iu":
            checked = self._check_discrete_array(env_ids, actions)
            if checked is not None:
                return checked
        if not self.array_form:
            if isinstance(actions, Mapping) and isinstance(self.space, gym.spaces.Dict):
                self._check_rows(env_ids, actions)
                actions = arrays.unstack(actions)  # Dict actions stacked in one tree: one row per env
            if type(actions) is np.ndarray and actions.dtype == object and actions.ndim == 1:
                actions = list(actions)  # one action object per env, as numpy holds a list of dicts or tuples
            if not isinstance(actions, (list, tuple)):
                raise ValueError(
                    f"{self.owner}: actions for envs {env_ids.tolist()} must be a list with one action per env, "
                    f"got {describe_typed(actions)}"
                )
            if len(actions) != len(env_ids):
                raise ValueError(f"{self.owner}: got {len(actions)} actions for {len(env_ids)} env ids")
            return self._stacked(
                [self._checked(env_id, action) for env_id, action in zip(env_ids.tolist(), actions, strict=True)]
            )
        array = np.asarray(actions)
        expected = (len(env_ids), *self.shape)
        if array.shape != expected:
            if array.ndim >= 1 and array.shape[0] == len(env_ids) and _squeezed(array.shape[1:]) == self.squeezed:
                array = array.reshape(expected)  # e.g. (n, 1) for Discrete, (n,) for a Box of shape (1,)
            else:
                raise ValueError(
                    f"{self.owner}: actions for envs {env_ids.tolist()} must have shape {expected} "
                    f"({len(env_ids)} x {self.space}), got shape {array.shape}"
                )
        if isinstance(self.space, gym.spaces.Box):
            return self._check_box(env_ids, array)
        return self._check_integers(env_ids, array)

    def check_mapping(self, env_ids: np.ndarray, actions: Any) -> Any:
        """The dict API's ``{env_id: action}`` for ``env_ids``, validated and stacked (row ``k`` for ``env_ids[k]``).

        Actions of array spaces that have one type and stack without promotion (so a bool or float
        among ints is not silently converted) are checked in one vectorised pass, others env by env.
        """
        values = [actions[env_id] for env_id in env_ids.tolist()]
        if not self.array_form:
            return self._stacked(
                [self._checked(env_id, value) for env_id, value in zip(env_ids.tolist(), values, strict=True)]
            )
        if not values:
            return np.zeros((0, *self.shape), dtype=self.dtype)
        stacked = _stack_uniform(values)
        if stacked is not None and stacked.size == len(values) * self.size:
            return self.check_batch(env_ids, stacked)
        return np.stack([self.check_one(env_id, value) for env_id, value in zip(env_ids.tolist(), values, strict=True)])

    def check_one(self, env_id: int, action: Any) -> Any:
        """One env's action, validated (the dict API)."""
        if not self.array_form:
            return self._checked(env_id, action)
        array = np.asarray(action)
        if _squeezed(array.shape) != self.squeezed:
            self._fail(env_id, action, f"has shape {array.shape}, expected {self.shape}")
        return self.check_batch(np.array([env_id]), array[None])[0]

    def _checked(self, env_id: int, action: Any) -> Any:
        """One action of a space without a single array form, checked and (Dict/Tuple of arrays) conformed."""
        if not self.space.contains(action):
            self._fail(env_id, action, "is not in the action space")
        # space.contains takes True for a Discrete; the array spaces' own checks refuse bools too.
        path = _bool_leaf(self.tree, action, "action")
        if path is not None:
            self._fail(env_id, action, f"holds a bool at {path}")
        return action if self.layout is None else arrays.conform(self.layout, action)

    def _stacked(self, actions: list[Any]) -> Any:
        """Checked actions of a space without a single array form, stacked as every batch of actions is.

        Dict/Tuple spaces of array spaces give one tree of stacked arrays; spaces with no array form
        at all (Text, Graph, Sequence) an object array with one value per row.
        """
        if self.layout is None:
            return arrays.object_rows(actions)
        if not actions:
            return arrays.allocate(self.layout, 0)
        return arrays.stack(actions)

    def _check_box(self, env_ids: np.ndarray, array: np.ndarray) -> np.ndarray:
        if array.dtype.kind not in "fiu":
            self._fail(int(env_ids[0]), array[0], f"has dtype {array.dtype}, expected numbers ({self.dtype})")
        if self.uniform_bounds is not None and array.size <= _SMALL_BATCH and self._inside_uniform(array):
            return array.astype(self.dtype, copy=False)
        space = self.space
        if self.finite_bounds:
            inside = (array >= space.low) & (array <= space.high)  # False for NaN, and for inf
            if np.count_nonzero(inside) == inside.size:
                return array.astype(self.dtype, copy=False)
        if not np.isfinite(array).all():
            bad = ~np.isfinite(array).reshape(len(env_ids), -1).all(axis=1)
            row = int(np.flatnonzero(bad)[0])
            self._fail(int(env_ids[row]), array[row], "holds NaN or inf")
        if (array < space.low).any() or (array > space.high).any():  # ndarray methods: no Python-level wrapper
            outside = ((array < space.low) | (array > space.high)).reshape(len(env_ids), -1).any(axis=1)
            row = int(np.flatnonzero(outside)[0])
            self._fail(int(env_ids[row]), array[row], self._outside(array[row]))
        return array.astype(self.dtype, copy=False)

    def _outside(self, action: np.ndarray) -> str:
        """What is out of bounds in ``action``: its first such element, with that element's own bounds."""
        low, high = (np.broadcast_to(bound, action.shape).ravel() for bound in (self.space.low, self.space.high))
        values = action.ravel()
        flat = int(np.flatnonzero((values < low) | (values > high))[0])
        where = np.unravel_index(flat, action.shape) if action.ndim > 1 else (flat,)
        index = where[0] if len(where) == 1 else tuple(int(i) for i in where)
        return (
            f"is outside the bounds: element {index} is {values[flat]}, outside [{low[flat]}, {high[flat]}] "
            "(an env that clips its actions, as DingEnvWrapper's action_clip does, still gets only actions inside "
            "its space from a manager: clip them in the policy)"
        )

    def _inside_uniform(self, array: np.ndarray) -> bool:
        """Whether a small batch holds only finite values within the uniform bounds.

        False sends the batch to the general check, which names the problem. ``min`` and ``max``
        skip a NaN unnoticed, hence the test of the sum, which is finite only if every value is
        (or if it overflows, when the general check decides).
        """
        values = array.ravel().tolist()
        low, high = self.uniform_bounds
        return math.isfinite(sum(values)) and min(values) >= low and max(values) <= high

    def _check_discrete_array(self, env_ids: np.ndarray, array: np.ndarray) -> np.ndarray | None:
        """The common case, a small integer array of shape ``(n,)`` in range, checked in a few Python calls.

        Returns:
            The actions in the space's dtype, or None to take the general checks (which name the problem).
        """
        count = len(env_ids)
        if array.shape != (count,) or count > _SMALL_BATCH or self._outside_discrete(array.tolist()):
            return None
        return array.astype(self.dtype, copy=False)

    def _outside_discrete(self, values: list[int]) -> bool:
        """Whether any of a small batch of ``Discrete`` actions is out of range.

        Python's min and max beat two numpy reductions on a few values.
        """
        low, high = self.discrete_range
        return bool(values) and (min(values) < low or max(values) >= high)

    def _check_integers(self, env_ids: np.ndarray, array: np.ndarray) -> np.ndarray:
        if array.dtype.kind not in "iu":
            if array.dtype.kind != "f":
                self._fail(int(env_ids[0]), array[0], f"has dtype {array.dtype}, expected integers")
            whole = np.mod(array, 1) == 0  # whole floats are taken; NaN and inf are not
            if not whole.all():
                row = int(np.flatnonzero(~whole.reshape(len(env_ids), -1).all(axis=1))[0])
                self._fail(int(env_ids[row]), array[row], "is not a whole number, expected integers")
        space = self.space
        if isinstance(space, gym.spaces.Discrete):
            low, high = self.discrete_range
            if array.size <= _SMALL_BATCH:
                bad = self._outside_discrete(array.ravel().tolist())
            else:
                bad = array.size and (array.min() < low or array.max() >= high)
        else:
            if isinstance(space, gym.spaces.MultiDiscrete):
                low, high = space.start, space.start + space.nvec
            else:
                low, high = 0, 2
            bad = array.size and ((array < low).any() or (array >= high).any())
        if bad:
            outside = ((array < low) | (array >= high)).reshape(len(env_ids), -1).any(axis=1)
            row = int(np.flatnonzero(outside)[0])
            self._fail(int(env_ids[row]), array[row], "is out of range")
        return array.astype(self.dtype, copy=False)

    def _check_rows(self, env_ids: np.ndarray, actions: Mapping) -> None:
        """Stacked ``Dict`` actions hold one row per env in every key: name the first key that does not."""
        for path, leaf in _leaf_paths(actions, "actions"):
            rows = np.shape(leaf)[0] if np.ndim(leaf) else None
            if rows != len(env_ids):
                raise ValueError(
                    f"{self.owner}: stacked Dict actions for envs {env_ids.tolist()} need one row per env in every "
                    f"key: expected {len(env_ids)} rows in {path}, got {describe_value(leaf)}"
                )

    def _fail(self, env_id: int, action: Any, problem: str) -> None:
        raise ValueError(
            f"{self.owner}: action for env {env_id} {problem}: expected a value in {self.space}, "
            f"got {describe_value(action)}"
        )


def _squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` without its dimensions of size 1.

    An action is taken in any shape equal to the space's up to such dimensions ((1,) for a Discrete's
    (), as DI-engine's policies give it) and reshaped; any other shape, even with as many values (a
    transposed Box action), is refused: reshaping it would scramble the values.
    """
    return tuple(size for size in shape if size != 1)


def _bool_leaf(tree: Any, value: Any, path: str) -> str | None:
    """Where ``value`` (inside the space ``tree``) holds a bool for a Discrete, Box or MultiDiscrete part, or None."""
    if isinstance(tree, (dict, tuple)):
        keys = tree.keys() if isinstance(tree, dict) else range(len(tree))
        for key in keys:
            found = _bool_leaf(tree[key], value[key], f"{path}[{key!r}]")
            if found is not None:
                return found
        return None
    if isinstance(tree, (gym.spaces.Discrete, gym.spaces.Box, gym.spaces.MultiDiscrete)):
        return path if np.asarray(value).dtype == np.bool_ else None
    return None


def _leaf_paths(tree: Any, path: str) -> list[tuple[str, Any]]:
    """``(path, leaf)`` of every leaf of a tree of dicts and tuples, e.g. ``("actions['push']", array)``."""
    if isinstance(tree, Mapping):
        return [pair for key, sub in tree.items() for pair in _leaf_paths(sub, f"{path}[{key!r}]")]
    if isinstance(tree, tuple):
        return [pair for i, sub in enumerate(tree) for pair in _leaf_paths(sub, f"{path}[{i}]")]
    return [(path, tree)]


# Python types whose values stack into an array of one kind without promotion (bool is not int here).
_UNIFORM_SCALARS = (int, float)


def _stack_uniform(values: list[Any]) -> np.ndarray | None:
    """``values`` stacked when they share one type (and dtype) so stacking converts nothing, else None."""
    kinds = {type(value) for value in values}
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    if kind is np.ndarray or issubclass(kind, np.generic):
        if len({value.dtype for value in values}) != 1 or len({value.shape for value in values}) != 1:
            return None
    elif kind not in _UNIFORM_SCALARS:
        return None
    stacked = np.array(values)
    return None if stacked.dtype == object else stacked  # e.g. ints beyond int64: checked one by one


def _empty(actions: Any) -> bool:
    """Whether ``actions`` hold no action: an empty list or array, or a stacked ``Dict`` or ``Tuple`` of such."""
    if isinstance(actions, Mapping):
        return all(_empty(part) for part in actions.values())
    # Stacked Tuple actions: one stacked part per sub-space (a tuple of plain values is one action per env).
    if (
        isinstance(actions, tuple)
        and actions
        and all(isinstance(part, (np.ndarray, Mapping, tuple)) for part in actions)
    ):
        return all(_empty(part) for part in actions)
    try:
        return len(actions) == 0
    except TypeError:  # a scalar
        return False

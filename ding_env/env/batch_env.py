"""``BaseBatchEnv``: one object stepping many envs at once (a batch env), and its step record ``BatchStep``.

A batch env holds ``num_envs`` sub-envs, numbered ``0 .. num_envs - 1``. Each sub-env is an env of its
own: it has its own episodes, its own seed and its own termination and truncation; the batch env only
steps them together, with one call on stacked arrays. The spaces are those of ONE sub-env.

Example step sequence (``num_envs=3``)::

    env = MyBatchEnv(dict(num_envs=3))   # stores config only: cheap, picklable
    env.seed(0)                          # sub-env i gets seed 0 + i, dynamic (new start per episode)
    obs = env.reset()                    # all sub-envs: obs rows 0, 1, 2
    step = env.step(actions)             # actions stacked, one row per sub-env
    step.done                            # e.g. [False, True, False]: sub-env 1 ended its episode;
    step.obs[1]                          # its TRUE final observation (no reset happened)
    env.step(actions[[0, 2]], env_ids=[0, 2])   # fine: sub-envs 0 and 2 step, 1 is left as it is
    env.step(actions)                    # EnvStateError: sub-env 1 needs reset() first
    env.reset([1])                       # its next episode: one obs row
    env.close()

The batch env never resets a sub-env on its own: whoever drives it (a manager) decides when, and the
step that ends an episode always carries the true final observation. Exactly as ``BaseEnv``:

=============  ==========  =========  ===========================
step           terminated  truncated  bootstrap from this obs?
=============  ==========  =========  ===========================
mid-episode    False       False      yes
natural end    True        False      no (discount 0)
time limit     False       True       yes (discount 1)
=============  ==========  =========  ===========================

A step that reaches a terminal state at the time limit is ``terminated`` (the state is terminal),
never both.

Subclasses implement ``_reset``, ``_step``, ``_close``, ``__repr__`` and the three space properties;
this class checks the sub-env ids, the reset-before-step order and the seeds, so every batch env
refuses bad calls with the same clear errors.
"""

from __future__ import annotations

import abc
import copy
from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from easydict import EasyDict
from gymnasium.vector.utils import create_empty_array

from ding_env.config import check_config_dict, deep_merge_dicts
from ding_env.env.batch_step import (
    BatchStep,
    EnvIds,
    check_info_rows,
    refuse_record,
    rows_of,
    scalar_reward_space,
)
from ding_env.env.seeding import checked_seed, derive_seeds
from ding_env.env.spaces import cast_reward
from ding_env.errors import ConfigError, EnvStateError
from ding_env.summary import describe_value
from ding_env.trees import leaves

# What a batch env's author imports, from here: the base class, its record and their helpers.
__all__ = ["BaseBatchEnv", "BatchStep", "EnvIds", "is_batch_env_class", "scalar_reward_space"]


class BaseBatchEnv(abc.ABC):
    """Abstract base of a batch env: ``num_envs`` sub-envs stepped with one call.

    Lifecycle as ``BaseEnv``: ``__init__`` stores config only (the simulator is built on the first
    ``reset()``), so a batch env is cheap to construct and picklable before its first reset.

    Class attributes:
        config: Defaults, merged under the user's config; ``num_envs`` is the number of sub-envs.
        lockstep: True for a batch env that can only step all its sub-envs together (a Gymnasium
            vector env): ``step`` then takes every sub-env, each of them reset and running.
    """

    config: ClassVar[dict] = dict(num_envs=1)
    lockstep: ClassVar[bool] = False

    def __init__(self, cfg: dict | None = None) -> None:
        """Store the config, merged over :meth:`default_config`.

        Raises:
            ConfigError: ``cfg`` is neither a dict nor None, or ``num_envs`` is not an int >= 1.
        """
        check_config_dict(cfg, f"{type(self).__name__} cfg")
        self._cfg = deep_merge_dicts(self.default_config(), cfg)
        num_envs = self._cfg.get("num_envs")
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ConfigError(f"{type(self).__name__} num_envs: expected an int >= 1, got {describe_value(num_envs)}")
        self._num_envs = int(num_envs)
        self._running = np.zeros(self._num_envs, dtype=bool)
        self._returns = np.zeros(self._num_envs, dtype=np.float64)
        self._seeds: list[int] | None = None
        self._dynamic_seed = True
        self._generators: list[np.random.Generator | None] = [None] * self._num_envs

    @classmethod
    def default_config(cls) -> EasyDict:
        """A deep copy of the class ``config`` dict."""
        return EasyDict(copy.deepcopy(cls.config))

    @property
    def num_envs(self) -> int:
        """How many sub-envs this batch env steps."""
        return self._num_envs

    # ---- seeding -------------------------------------------------------

    def seed(self, seed: int | Sequence[int], dynamic_seed: bool = True) -> None:
        """Set every sub-env's seed, used from its next reset on.

        Per sub-env, as ``BaseEnv.seed``: with ``dynamic_seed=False`` every reset of sub-env ``i``
        replays the episode start of its seed (evaluation); with True each of its episodes starts
        anew, drawn reproducibly from its seed (collection): from one random stream per sub-env,
        seeded at its first reset (as a Gymnasium env reset once with the seed, then without).

        Args:
            seed: An int ``s`` (sub-env ``i`` gets ``s + i``, as a manager seeds its envs) or one
                int >= 0 per sub-env.
            dynamic_seed: Draw a new seed per episode instead of replaying the seed.

        Raises:
            TypeError, ValueError: A seed that is not an int >= 0, or not one per sub-env.
        """
        self._seeds, self._dynamic_seed = self._checked_seeds(seed), bool(dynamic_seed)
        self._generators = [None] * self._num_envs

    def _checked_seeds(self, seed: int | Sequence[int]) -> list[int]:
        """One seed per sub-env from ``seed()``'s argument.

        Raises:
            TypeError, ValueError: A seed that is not an int >= 0, or not one per sub-env.
        """
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            return derive_seeds(seed, self._num_envs)
        if isinstance(seed, (Sequence, np.ndarray)) and not isinstance(seed, (str, bytes)):
            if len(seed) != self._num_envs:
                raise ValueError(
                    f"{self!r}.seed(): expected one seed per sub-env ({self._num_envs}), got {len(seed)}: "
                    f"{describe_value(seed)}"
                )
            return [checked_seed(value, f"{self!r} seed of sub-env {index}") for index, value in enumerate(seed)]
        raise TypeError(f"{self!r}.seed(): expected an int or one int per sub-env, got {describe_value(seed)}")

    @property
    def seeds(self) -> list[int] | None:
        """The seed of each sub-env given to ``seed()``, or None when it was never called."""
        return None if self._seeds is None else list(self._seeds)

    @property
    def dynamic_seed(self) -> bool:
        """Whether each episode draws a new seed (True) or replays the sub-env's seed (False)."""
        return self._dynamic_seed

    def _episode_generators(self, env_ids: EnvIds) -> list[np.random.Generator]:
        """The generator each of ``env_ids`` draws the episode it is starting from.

        Static seeds: a generator seeded with the sub-env's seed, anew at every reset. Dynamic
        seeds: one generator per sub-env, seeded at its first reset after ``seed()`` and kept
        running (a Gymnasium env reset with a seed once, then without). Unseeded: fresh entropy.
        Call it once per reset of those sub-envs.
        """
        generators = []
        static = self._seeds is not None and not self._dynamic_seed
        for index in range(self._num_envs) if env_ids is None else env_ids.tolist():
            generator = self._generators[index]
            if generator is None or static:
                seed = None if self._seeds is None else self._seeds[index]
                generator = self._generators[index] = np.random.default_rng(seed)
            generators.append(generator)
        return generators

    # ---- the contract --------------------------------------------------

    def reset(self, env_ids: Sequence[int] | np.ndarray | None = None) -> Any:
        """Start a new episode in each of ``env_ids`` (None: every sub-env) and return their first observations.

        Returns:
            Stacked observations, row ``k`` belonging to ``env_ids[k]``.

        Raises:
            ValueError: ``env_ids`` are not distinct sub-env ids.
        """
        ids = self._checked_ids(env_ids)
        if ids is not None and not len(ids):  # env.reset(np.flatnonzero(step.done)) when none ended
            return create_empty_array(self.observation_space, 0)
        obs = self._reset(ids)
        index = slice(None) if ids is None else ids
        self._returns[index] = 0.0
        self._running[index] = True
        return obs

    def step(self, actions: Any, env_ids: Sequence[int] | np.ndarray | None = None) -> BatchStep:
        """Apply one action to each of ``env_ids`` (None: every sub-env, in order); leave the others as they are.

        Args:
            actions: Stacked actions, row ``k`` for ``env_ids[k]``, each row an action of ``action_space``.
            env_ids: Distinct sub-env ids, each reset and not done since.

        Returns:
            The step's ``BatchStep``. A sub-env whose episode ended needs ``reset`` before its next step.

        Raises:
            ValueError: ``env_ids`` are not distinct sub-env ids, or ``actions`` has another number of rows.
            EnvStateError: A sub-env was never reset or its episode ended, or a lockstep batch env was
                given only some of its sub-envs.
        """
        ids = self._checked_ids(env_ids)
        if ids is not None and not len(ids):  # no sub-env: a record of no rows
            reward = self.reward_space
            empty = np.zeros(0, dtype=bool)
            obs = create_empty_array(self.observation_space, 0)
            return BatchStep(obs, np.zeros((0, *reward.shape), reward.dtype), empty, empty.copy(), np.zeros(0), {})
        if ids is None:
            if np.count_nonzero(self._running) != self._num_envs:  # count_nonzero: a C call, .all() a Python one
                self._refuse_step(np.flatnonzero(~self._running))
        else:
            if self.lockstep:
                raise EnvStateError(
                    f"{self!r} steps all its sub-envs at once: step() takes one action per sub-env "
                    f"(env_ids None or every id 0..{self._num_envs - 1}), got env_ids {describe_value(ids)}"
                )
            running = self._running[ids]
            if not running.all():
                self._refuse_step(ids[~running])
        rows = self._num_envs if ids is None else len(ids)
        if type(actions) is not np.ndarray or actions.ndim == 0 or len(actions) != rows:
            self._check_action_rows(actions, rows)
        record = self._step(actions, ids)
        # Checked in a few comparisons (no loop: this runs on every step of every batch env).
        terminated, truncated, shape = record.terminated, record.truncated, (rows,)
        if (
            type(terminated) is not np.ndarray
            or type(truncated) is not np.ndarray
            or terminated.shape != shape
            or truncated.shape != shape
            or terminated.dtype.kind != "b"
            or truncated.dtype.kind != "b"
            or rows_of(record.reward) != rows
            or rows_of(record.episode_return) != rows
        ):
            refuse_record(f"{self!r}.step()", record, rows, self.reward_space.shape)
        if record.info:
            check_info_rows(f"{self!r}.step()", record.info, rows)
        done = record.done
        if np.count_nonzero(done):
            self._running[done if ids is None else ids[done]] = False
        return record

    def close(self) -> None:
        """Release the simulator; every sub-env then needs a reset. Calling it twice is allowed."""
        self._running[:] = False
        self._close()

    def __enter__(self) -> BaseBatchEnv:
        return self

    def __exit__(self, exc_type: type | None, exc: BaseException | None, tb: object) -> None:
        """Close the batch env at the end of a ``with`` block."""
        self.close()

    # ---- what a subclass implements ------------------------------------

    @abc.abstractmethod
    def _reset(self, env_ids: EnvIds) -> Any:
        """Start an episode in each of ``env_ids`` (None: all, in order); return their stacked first observations.

        Build the simulator on the first call. Draw each sub-env's start from
        ``_episode_generators(env_ids)`` (a simulator that takes seeds only when it is made reads
        ``seeds`` and ``dynamic_seed``: see ``batch_sources.seeded_at_reset``).
        """

    @abc.abstractmethod
    def _step(self, actions: Any, env_ids: EnvIds) -> BatchStep:
        """Step ``env_ids`` (None: all, in order; each is running) and return the record, built with ``_transition``."""

    @abc.abstractmethod
    def _close(self) -> None:
        """Release the simulator (it may be built again by a later reset). Must allow a second call."""

    @abc.abstractmethod
    def __repr__(self) -> str:
        """A short description naming the batch env."""

    @property
    @abc.abstractmethod
    def observation_space(self) -> gym.spaces.Space:
        """Space of ONE sub-env's observations."""

    @property
    @abc.abstractmethod
    def action_space(self) -> gym.spaces.Space:
        """Space of ONE sub-env's actions."""

    @property
    @abc.abstractmethod
    def reward_space(self) -> gym.spaces.Space:
        """Space of ONE sub-env's rewards (shape ``(1,)``)."""

    # ---- helpers for subclasses ----------------------------------------

    def _transition(
        self,
        env_ids: EnvIds,
        obs: Any,
        reward: Any,
        terminated: Any,
        truncated: Any,
        info: dict | None = None,
        raw_reward: Any = None,
        episode_return: np.ndarray | None = None,
    ) -> BatchStep:
        """The ``BatchStep`` of stepping ``env_ids``, keeping each sub-env's episode return.

        Args:
            env_ids: The stepped sub-envs, as ``_step`` got them.
            obs: Stacked observations (the true final ones where the episode ended).
            reward: ``(n,)`` or ``(n, 1)`` rewards, as the learner sees them.
            terminated: ``(n,)`` bools.
            truncated: ``(n,)`` bools; cleared where ``terminated``.
            info: ``{key: array with n rows}``.
            raw_reward: The unclipped rewards the episode return sums, when ``reward`` is clipped.
            episode_return: The returns to report, for an env that keeps them itself (a game's
                return across the lives its episodes end at); None: this class sums them.
        """
        layout = self.__dict__.get("_reward_layout")
        if layout is None:  # the reward space does not change; some envs build it on every access
            space = self.reward_space
            layout = self._reward_layout = (space.dtype, (-1, *space.shape))
        reward = cast_reward(reward, layout[0]).reshape(layout[1])  # never a silent cast
        terminated = np.asarray(terminated, dtype=bool)
        truncated = np.asarray(truncated, dtype=bool) & ~terminated
        if episode_return is None:
            raw = reward.reshape(len(reward), -1)[:, 0] if raw_reward is None else np.asarray(raw_reward).reshape(-1)
            index = slice(None) if env_ids is None else env_ids
            self._returns[index] += raw
            episode_return = self._returns[index].copy()
        return BatchStep(obs, reward, terminated, truncated, episode_return, info or {})

    def _checked_ids(self, env_ids: Sequence[int] | np.ndarray | None) -> EnvIds:
        """``env_ids`` as an int64 array, or None for every sub-env in order.

        Raises:
            ValueError: Not a flat sequence of distinct ints in ``[0, num_envs)``.
        """
        if env_ids is None:
            return None
        ids = np.asarray(env_ids)
        if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
            raise ValueError(f"{self!r}: env_ids must be a flat sequence of ints, got {describe_value(env_ids)}")
        ids = ids.astype(np.int64, copy=False)
        values = ids.tolist()  # checked as Python ints: fewer calls than numpy's min, max and unique for a batch
        if values and (min(values) < 0 or max(values) >= self._num_envs or len(set(values)) != len(values)):
            raise ValueError(
                f"{self!r}: env_ids must be distinct sub-env ids in [0, {self._num_envs}), got {describe_value(ids)}"
            )
        if len(values) == self._num_envs and values == sorted(values):
            return None  # every sub-env in order: the fast path
        return ids

    def _check_action_rows(self, actions: Any, rows: int) -> None:
        """Refuse stacked actions (arrays, tensors or lists; dicts and tuples of them) without ``rows`` rows each.

        Raises:
            ValueError: Naming the rows expected and what arrived.
        """
        # A tuple is a Tuple space's stacked parts; for another space, one action per sub-env.
        nested = isinstance(self.action_space, (gym.spaces.Dict, gym.spaces.Tuple))
        for leaf in leaves(actions) if nested else [actions]:
            if getattr(leaf, "ndim", 1) and hasattr(leaf, "__len__") and len(leaf) == rows:  # arrays, tensors, lists
                continue
            got = f"an array of shape {leaf.shape}" if isinstance(leaf, np.ndarray) else describe_value(leaf)
            raise ValueError(
                f"{self!r}.step(): expected {rows} stacked actions (one row per stepped sub-env), got {got}"
            )

    def _refuse_step(self, env_ids: np.ndarray) -> None:
        raise EnvStateError(
            f"{self!r}: sub-envs {env_ids.tolist()} need reset() before step() "
            "(never reset, closed since, or their episode ended)"
        )


def is_batch_env_class(value: object) -> bool:
    """Whether ``value`` is a ``BaseBatchEnv`` subclass (an env type or target that builds batch envs)."""
    return isinstance(value, type) and issubclass(value, BaseBatchEnv)

"""Every env of a manager stepped together: what vectorised-env APIs (Gymnasium, SB3) expect.

The managers return the envs that finished a step (the async one may return some of
them later) and reset a finished env in its own process at once: the step carries the
true final observation and the reset one is the env's next ready observation.
:class:`Lockstep` waits until every env has its result and hands back both, so an
adapter only has to place them where its library wants them. It uses the managers'
public API only (``seed``, ``launch``/``reset``, ``ready_obs_batch``, ``step_batch``,
``step``), so it works over every manager type.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from ding_env.env_manager import arrays
from ding_env.env_manager.outcome import TimestepBatch
from ding_env.errors import ClosedEnvError, EnvStateError


def rewards_of(batch: TimestepBatch) -> np.ndarray:
    """The ``(n,)`` float64 rewards of a step of every env (one value per env), as vector-env APIs return them."""
    return np.asarray(batch.reward, dtype=np.float64).reshape(len(batch.env_id))


class Lockstep:
    """Drives a manager so that every env takes one action per step.

    Args:
        manager: An env manager of any type, launched or not (``reset`` launches it).
            Its envs must auto-reset and run endless episodes (``auto_reset=True``,
            ``episode_num=inf``, the defaults), since every env must be ready after each step.
    """

    def __init__(self, manager: Any) -> None:
        self.manager = manager
        self.num_envs = manager.env_num
        self.single_observation_space: gym.spaces.Space = manager.observation_space
        self.single_action_space: gym.spaces.Space = manager.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.env_ids = np.arange(self.num_envs, dtype=np.int64)
        self._launched = not manager.closed
        self._closed = False

    def reset(self, seed: int | Sequence[int | None] | None = None, reset_param: dict | None = None) -> Any:
        """Reset every env (or those of ``reset_param``), seeding them first when ``seed`` is given.

        Args:
            seed: None keeps each env's seeding; an int gives env ``i`` the seed ``seed + i``; a
                list gives one seed per env (None: leave that env's seeding). Seeds are dynamic:
                the episodes after this one draw their seeds reproducibly from it.
            reset_param: ``{env_id: kwargs}`` to reset only those envs, with those ``env.reset``
                kwargs (kept by the manager for the envs' later resets).

        Returns:
            The observations of every env, stacked.
        """
        self._check_open()
        if seed is not None:
            self.manager.seed(self._seeds_by_env(seed), dynamic_seed=True)
        if not self._launched:
            self.launch(reset_param)
        else:
            self.manager.reset(reset_param)
        return self._ready_obs()

    def launch(self, reset_param: dict | None = None) -> None:
        """Launch the manager (its envs and workers) if it is not running yet."""
        self._check_open()
        if not self._launched:
            self.manager.launch(reset_param)
            self._launched = True

    def step(self, actions: Any, env_ids: np.ndarray | None = None) -> tuple[Any, TimestepBatch]:
        """Step every env (or those of ``env_ids``) with its row of ``actions`` and wait for all of them.

        Args:
            actions: A batch of the action space (or a list with one action per env stepped).
            env_ids: The envs to step, increasing (default: every env); the others stay as they are.

        Returns:
            ``(obs, batch)``: the observations to act on next (the reset observation where an episode
            ended), and the step of the envs stepped, row ``k`` for ``env_ids[k]``, whose ``obs`` are the
            ones the step produced (the true final one where ``done``). Every array is the caller's.

        Raises:
            EnvStateError: Before ``reset()``, or when an env is not ready after its step.
        """
        self._check_open()
        if not self._launched:
            raise EnvStateError("step() before reset(): reset the envs first")
        env_ids = self.env_ids if env_ids is None else env_ids
        if isinstance(self.single_action_space, gym.spaces.Tuple) and not isinstance(actions, list):
            actions = list(iterate(self.action_space, actions))  # the managers take one tuple per env
        batch = self.manager.step_batch(env_ids, actions)
        if len(batch.env_id) == len(env_ids):
            batch = batch._replace(
                obs=_owned_tree(batch.obs),
                reward=np.array(batch.reward),
                done=np.array(batch.done, dtype=bool),
                truncated=np.array(batch.truncated, dtype=bool),
            )
        else:  # an async manager returned early: collect the rest
            batch = self._gather(batch, env_ids)
        # Where no episode ended, the observations to act on are the step's: no need to read them again.
        obs = self._ready_obs(env_ids) if batch.done.any() else batch.obs
        return obs, batch

    def env_attribute(self, name: str) -> Any:
        """The envs' attribute ``name`` through the manager: a list, or a function calling the method on every env.

        Raises:
            AttributeError: When the manager itself has an attribute ``name`` (``seed``, ``reset``, ...),
                which hides the envs' own, or when the envs have none.
        """
        self._check_open()
        if name in dir(self.manager):  # not an env attribute but the manager's own (its class's, or held by it)
            raise AttributeError(
                f"{name!r} is an attribute of {type(self.manager).__name__} itself, which hides the envs' own"
            )
        if not self._launched:
            raise EnvStateError(f"env attribute {name!r} is read from running envs: call reset() first")
        return getattr(self.manager, name)

    def set_env_attribute(self, name: str, values: Any, env_ids: list[int] | None = None) -> None:
        """Set the envs' attribute ``name`` through the manager (one value for all, or one per env).

        Raises:
            EnvStateError: Before the first reset.
            ValueError: For a private name or a list of the wrong length.
        """
        self._check_open()
        if not self._launched:
            raise EnvStateError(f"env attribute {name!r} is set on running envs: call reset() first")
        self.manager.set_env_attr(name, values, env_ids)

    def close(self) -> None:
        """Close the manager. Safe to call more than once."""
        self._closed = True
        self.manager.close()

    def _gather(self, batch: TimestepBatch, env_ids: np.ndarray) -> TimestepBatch:
        rows: dict[int, tuple] = {}
        batch_obs_space = batch_space(self.single_observation_space, len(batch.env_id))
        for k, obs in enumerate(iterate(batch_obs_space, batch.obs)):
            env_id = int(batch.env_id[k])
            rows[env_id] = (obs, batch.reward[k], batch.done[k], batch.truncated[k], batch.info[k])
        while len(rows) < len(env_ids):
            for env_id, timestep in self.manager.step({}).items():  # collects results, steps nothing
                rows[env_id] = (timestep.obs, timestep.reward, timestep.done, timestep.truncated, timestep.info)
        ordered = [rows[env_id] for env_id in env_ids.tolist()]
        out = create_empty_array(self.single_observation_space, len(env_ids))
        step_obs = concatenate(self.single_observation_space, [row[0] for row in ordered], out)  # a new array
        return TimestepBatch(
            np.array(env_ids, dtype=np.int64),
            step_obs,
            np.stack([np.asarray(row[1]) for row in ordered]),
            np.array([row[2] for row in ordered], dtype=bool),
            np.array([row[3] for row in ordered], dtype=bool),
            [row[4] for row in ordered],
        )

    def _ready_obs(self, env_ids: np.ndarray | None = None) -> Any:
        """The ready observations of every env (or of ``env_ids``): every env must be ready."""
        ready = self.manager.ready_obs_batch
        if len(ready.env_id) != self.num_envs:
            not_ready = sorted(set(range(self.num_envs)) - set(ready.env_id.tolist()))
            raise EnvStateError(
                f"envs {not_ready} of {type(self.manager).__name__} are not ready after their step; "
                "a vectorised env needs every env to auto-reset (manager config auto_reset=True, episode_num=inf)"
            )
        if env_ids is not None and len(env_ids) != self.num_envs:  # rows are env ids: every env is ready
            return arrays.take(ready.obs, env_ids)  # copies: an index array
        return _owned_tree(ready.obs)

    def _seeds_by_env(self, seed: int | Sequence[int | None]) -> int | dict[int, int]:
        if isinstance(seed, Sequence):
            if len(seed) != self.num_envs:
                raise ValueError(f"reset(seed=...) takes one seed per env: expected {self.num_envs}, got {len(seed)}")
            return {env_id: value for env_id, value in enumerate(seed) if value is not None}
        return seed

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedEnvError(f"{type(self.manager).__name__} is closed")


def _owned_tree(value: Any) -> Any:
    """``value`` with every array the caller's own: a view (the managers' ``copy_on_get=False``) is copied."""
    if isinstance(value, dict):
        return {key: _owned_tree(sub) for key, sub in value.items()}
    if isinstance(value, tuple):
        return tuple(_owned_tree(sub) for sub in value)
    value = np.asarray(value)
    return value if value.flags.owndata else value.copy()

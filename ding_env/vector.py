"""A ``gymnasium.vector.VectorEnv`` over any env manager, for code written against Gymnasium's vector API.

The managers reset a finished env within the step that ended its episode, which is
Gymnasium 1.x's ``AutoresetMode.SAME_STEP``: ``step`` returns the reset observation
of a finished env, and its true final observation and final info are in
``infos["final_obs"]`` and ``infos["final_info"]`` (masked by ``infos["_final_obs"]``
and ``infos["_final_info"]``), exactly where ``gymnasium.vector.SyncVectorEnv`` puts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import iterate

from ding_env.lockstep import Lockstep, rewards_of


class ManagerVectorEnv(VectorEnv):
    """Gymnasium's vector API over an env manager (``BaseEnvManager``, the subprocess ones, V2).

    Args:
        manager: The manager, launched or not; ``reset()`` launches it. ``close()`` closes it.

    Example::

        cartpole = lambda: DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
        envs = ManagerVectorEnv(create_env_manager({"type": "subprocess"}, [cartpole] * 4))
        obs, infos = envs.reset(seed=0)
        obs, rewards, terminations, truncations, infos = envs.step(envs.action_space.sample())

    Seeds: ``reset(seed=s)`` seeds env ``i`` with ``s + i`` as ``SyncVectorEnv`` does; the
    envs' later episodes draw their seeds reproducibly from it (the managers' dynamic seeds).
    Rewards are ``float64``, as Gymnasium's vector envs return them; the step infos keep the
    managers' keys (``truncated`` and ``eval_episode_return`` on done steps).
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, manager: Any) -> None:
        self._lockstep = Lockstep(manager)
        self.manager = manager
        self.num_envs = self._lockstep.num_envs
        self.single_observation_space = self._lockstep.single_observation_space
        self.single_action_space = self._lockstep.single_action_space
        self.observation_space = self._lockstep.observation_space
        self.action_space = self._lockstep.action_space
        self.metadata = dict(self.metadata)

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every env (or those of ``options["reset_mask"]``) and return their observations.

        Args:
            seed: None, an int (env ``i`` gets ``seed + i``) or one seed (or None) per env.
            options: ``reset_mask``, a ``(num_envs,)`` bool array, resets only those envs; any other
                keys are passed to those envs' ``reset`` (and kept for their later resets, as the
                managers keep reset params).

        Returns:
            The observations of every env and an empty info dict (the managers keep no reset infos).
        """
        options = dict(options or {})
        reset_mask = options.pop("reset_mask", None)
        if reset_mask is None:
            env_ids = range(self.num_envs)
        else:
            reset_mask = np.asarray(reset_mask)
            if reset_mask.shape != (self.num_envs,) or reset_mask.dtype != np.bool_:
                raise ValueError(
                    f"options['reset_mask'] must be a bool array of shape ({self.num_envs},), "
                    f"got {reset_mask.dtype} {reset_mask.shape}"
                )
            env_ids = np.flatnonzero(reset_mask).tolist()
        reset_param = None if reset_mask is None and not options else {env_id: options for env_id in env_ids}
        obs = self._lockstep.reset(seed, reset_param)
        return obs, {}

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every env; a finished env is reset in the same step (``AutoresetMode.SAME_STEP``).

        Returns:
            ``(obs, rewards, terminations, truncations, infos)``. Where an episode ended, ``obs`` holds
            the reset observation and ``infos["final_obs"]`` / ``infos["final_info"]`` the step's.
        """
        obs, batch = self._lockstep.step(actions)
        infos: dict[str, Any] = {}
        done_rows = np.flatnonzero(batch.done).tolist()
        if done_rows:
            batch_obs_space = self.observation_space
            final_obs = list(iterate(batch_obs_space, batch.obs))
            for row in done_rows:
                infos = self._add_info(infos, {"final_obs": final_obs[row], "final_info": batch.info[row]}, row)
        for row, info in enumerate(batch.info):
            if row not in done_rows:
                infos = self._add_info(infos, info, row)
        return obs, rewards_of(batch), batch.terminated, batch.truncated, infos

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call the method ``name`` of every env (or read the attribute ``name``) and return the results.

        Raises:
            AttributeError: When the manager itself has an attribute ``name`` (such as ``seed`` or
                ``reset``), which hides the envs' own, or when the envs have no attribute ``name``.
        """
        values = self._lockstep.env_attribute(name)
        if callable(values):
            return tuple(values(*args, **kwargs))
        return tuple(values)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """The attribute ``name`` of every env."""
        return tuple(self._lockstep.env_attribute(name))

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """Set attribute ``name`` of every env: ``values`` has one value per env, or is one value for all."""
        self._lockstep.set_env_attribute(name, values)

    def close_extras(self, **kwargs: Any) -> None:
        """Close the manager and its envs."""
        self._lockstep.close()

    def __repr__(self) -> str:
        return f"ManagerVectorEnv({type(self.manager).__name__}, num_envs={self.num_envs})"

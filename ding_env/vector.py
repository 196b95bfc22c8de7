"""A ``gymnasium.vector.VectorEnv`` over any env manager, for code written against Gymnasium's vector API.

It takes what ``gymnasium.vector.SyncVectorEnv`` takes, functions returning Gymnasium envs (or
``BaseEnv`` s), so swapping it in is one line, or a manager of any type. Both of Gymnasium 1.x's
autoreset modes are offered (``metadata["autoreset_mode"]`` says which):

* ``AutoresetMode.NEXT_STEP`` (the default, as ``SyncVectorEnv``'s): the step that ends an episode
  returns its true final observation; the next ``step`` ignores that env's action and returns its
  reset observation, with reward 0 and neither terminated nor truncated.
* ``AutoresetMode.SAME_STEP``: the step that ends an episode returns the reset observation, and the
  true final observation and final info are in ``infos["final_obs"]`` and ``infos["final_info"]``
  (masked by ``infos["_final_obs"]`` and ``infos["_final_info"]``), where ``SyncVectorEnv`` puts them.

The managers reset a finished env within the step that ended its episode; in ``NEXT_STEP`` mode the
reset observation is held until the env's next step. Given env factories, the vector env launches the
manager at its first ``reset()``, seeded as that reset says: as in ``SyncVectorEnv``, an env's first reset
is that one. Until then ``metadata`` and ``render_mode`` (which the rendering wrappers of
``gymnasium.wrappers.vector`` read as they are built) come from envs of the factories, made and closed again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from ding_env.env.base_env import BaseEnv
from ding_env.env_manager import arrays, create_env_manager, validation
from ding_env.env_manager.actions import ActionChecker
from ding_env.errors import EnvStateError
from ding_env.lockstep import Lockstep, check_manager, is_manager, rewards_of
from ding_env.summary import describe_typed
from ding_env.vector_slots import as_base_env, read_from_env

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)


# Manager types whose envs are built elsewhere (env servers): env factories given here would not be what runs.
REMOTE_TYPES = ("remote", "async_remote")


class ManagerVectorEnv(VectorEnv):
    """Gymnasium's vector API over an env manager (``BaseEnvManager``, the subprocess ones, V2, remote).

    Args:
        envs: Env factories as ``SyncVectorEnv`` takes them (functions returning a Gymnasium env or a
            ``BaseEnv``), run by a manager made from ``manager_cfg`` and launched at the first ``reset()``;
            or a manager, launched or not (it is launched here; ``close()`` closes it). Its envs must
            auto-reset forever (``auto_reset=True``, ``episode_num=inf``, the defaults).
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default) or ``SAME_STEP``, or their names
            (``"NextStep"``, ``"SameStep"``).
        manager_cfg: The manager's config when ``envs`` are factories (default ``{"type": "base"}``: the
            envs run in this process, as in ``SyncVectorEnv``; ``{"type": "subprocess"}`` for workers).

    Example::

        envs = ManagerVectorEnv([make_env(i) for i in range(4)])  # in place of gym.vector.SyncVectorEnv
        obs, infos = envs.reset(seed=0)
        obs, rewards, terminations, truncations, infos = envs.step(envs.action_space.sample())

    A Gymnasium env runs inside ``DingEnvWrapper`` with no wrappers added, and is seeded as
    ``SyncVectorEnv`` seeds it: ``reset(seed=s)`` resets env ``i`` with seed ``s + i`` and its later
    episodes continue its own generator, so the same seeds give ``SyncVectorEnv``'s episodes. What
    ``DingEnvWrapper`` holds in its own dtypes differs from ``SyncVectorEnv``'s values:

    * float observations (``float64`` ones too) are ``float32``, integer ones other than ``uint8`` are
      ``int64``, and ``single_observation_space`` says so (actions and their space are the env's);
    * rewards go through the managers' ``float32`` arrays: returned as ``float64``, as Gymnasium's
      vector envs return them, but rounded to ``float32`` precision (Pendulum-v1's first reward after
      ``reset(seed=0)`` and action 0.5 is ``-0.76200531`` in ``SyncVectorEnv``, ``-0.76200533`` here);
      rewards that are ``float32`` values already (CartPole's 1.0) are unchanged;
    * ``reset()`` returns an empty info dict: the managers keep no reset infos, where ``SyncVectorEnv``
      returns the envs' (an env whose ``reset`` returns ``{}``, as CartPole's, loses nothing);
    * step infos gain ``truncated`` and ``eval_episode_return`` on done steps, and numpy scalars in
      them are Python scalars;
    * a step that reaches a terminal state at the time limit is terminated and not truncated
      (``SyncVectorEnv`` passes on both flags).

    A ``BaseEnv`` (and every env of a manager given as ``envs``) is seeded ``s + i`` too, with the
    managers' dynamic seeds: each episode, the first included, draws its seed reproducibly from
    it, so its episodes are its own, not ``SyncVectorEnv``'s.

    ``render_mode`` is the envs' when they all have the same one (else None), ``metadata`` is env 0's
    (``render_fps`` ...) with ``autoreset_mode``, and ``render()`` returns every env's frame, as in
    ``SyncVectorEnv``.

    Raises:
        ValueError: For an autoreset mode other than these two, or a manager whose envs do not
            auto-reset forever.
        TypeError: For ``envs`` that are neither env factories nor a manager.
        EnvError: From the manager's launch (at the first ``reset()`` for factories), for one whose ``env_fn``
            return Gymnasium envs not in ``DingEnvWrapper`` (give such factories as ``envs`` instead).
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        envs: Any,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        manager_cfg: dict | None = None,
    ) -> None:
        if autoreset_mode not in [*AUTORESET_MODES, *(mode.value for mode in AUTORESET_MODES)]:
            raise ValueError(
                f"ManagerVectorEnv autoreset_mode: expected one of {[mode.value for mode in AUTORESET_MODES]}, "
                f"got {autoreset_mode!r}"
            )
        made_here = not is_manager(envs)
        if not made_here:
            if manager_cfg is not None:
                raise ValueError(
                    "ManagerVectorEnv: manager_cfg configures a manager for env factories, not a given one"
                )
        else:
            if callable(envs) and not isinstance(envs, Iterable):
                raise TypeError(
                    f"ManagerVectorEnv takes a list of env factories, as SyncVectorEnv does (or a manager), got one "
                    f"factory, {describe_typed(envs)}: give one per env, e.g. ManagerVectorEnv([make_env] * 4)"
                )
            if not isinstance(envs, Iterable) or isinstance(envs, (str, bytes, Mapping)):
                check_manager(envs, "ManagerVectorEnv")  # says what arrived and what to give instead
            if isinstance(manager_cfg, Mapping) and manager_cfg.get("type") in REMOTE_TYPES:
                raise ValueError(
                    f"ManagerVectorEnv: manager_cfg type {manager_cfg['type']!r} runs its servers' envs, not the "
                    "factories given, whose spaces and seeding would be reported for them: give the remote manager "
                    "itself, ManagerVectorEnv(create_env_manager({'type': 'remote', 'servers': [...]}, env_fns))"
                )
            # One constructor per factory: a factory given for several envs (SyncVectorEnv([make] * 4)) is called once
            # where a manager calls each constructor once (to tell batch envs apart), as here to read render modes.
            wrapped: dict[int, Callable[[], BaseEnv]] = {}
            env_fns = [
                wrapped.setdefault(id(env_fn), partial(as_base_env, env_fn))
                for env_fn in validation.check_env_fns(envs)
            ]
            envs = create_env_manager(dict(manager_cfg or {}), env_fns)
        if AutoresetMode(autoreset_mode) == AutoresetMode.NEXT_STEP and getattr(envs, "lockstep", False):
            # NEXT_STEP steps only the envs that did not just finish; a lockstep batch env steps all or none.
            if made_here:
                envs.close()
            raise ValueError(
                "ManagerVectorEnv: the manager hosts a lockstep batch env (a Gymnasium vector env, env "
                "batch=N), which steps all its sub-envs or none, where autoreset_mode NEXT_STEP steps only "
                "those whose episode did not just end: give autoreset_mode='SameStep'"
            )
        # Factories: as SyncVectorEnv's envs, the envs' first reset is this vector env's first reset(seed=...), when
        # the manager is launched (a wrapper keeping statistics, NormalizeObservation's, sees no other). A manager
        # given is launched here: its envs are read below.
        restart = "reset(options={'reset_mask': mask}) restarts the envs of the mask, reset() every env"
        self._lockstep = Lockstep(envs, "ManagerVectorEnv", launch_at_first_reset=made_here, restart=restart)
        self._env_fns = env_fns if made_here else None
        self._modes: list[str | None] | None = None  # the envs' render modes, once read
        metadata = read_from_env(env_fns[0], "metadata", {}) if made_here else self._lockstep.metadata()
        self.manager = envs
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.num_envs = self._lockstep.num_envs
        self.single_observation_space = self._lockstep.single_observation_space
        self.single_action_space = self._lockstep.single_action_space
        self.observation_space = self._lockstep.observation_space
        self.action_space = self._lockstep.action_space
        # SyncVectorEnv copies env 0's metadata and takes its render mode; one mode is only the vector env's
        # when every env has it (render() renders them all), so envs made with different ones have none.
        self.metadata = dict(metadata if isinstance(metadata, Mapping) else {}, autoreset_mode=self.autoreset_mode)
        # NEXT_STEP: the envs whose episode ended in the last step, and their reset observations (held till then).
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._reset_obs: dict[int, Any] = {}
        self._obs_spaces: dict[int, gym.Space] = {}
        self._action_checker = ActionChecker(self.single_action_space, repr(self))

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every env (or those of ``options["reset_mask"]``) and return their observations.

        Args:
            seed: None, an int (env ``i`` gets ``seed + i``) or one seed (or None) per env; with a
                ``reset_mask``, only the envs reset are seeded.
            options: ``reset_mask``, a ``(num_envs,)`` bool array, resets only those envs; any other
                keys are passed to those envs' ``reset`` (and kept for their auto-resets, as the
                managers keep reset params, until the next ``reset``: without options, it clears them).

        Returns:
            The observations of every env and an empty info dict: the managers keep no reset infos, so
            the envs' are not returned (``SyncVectorEnv`` returns them).
        """
        if isinstance(seed, (str, bytes)):  # a sequence, but not of seeds
            raise TypeError(f"reset(seed=...): expected None, an int or one int (or None) per env, got {seed!r}"[:300])
        if isinstance(seed, np.integer):
            seed = int(seed)
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
            if isinstance(seed, int):
                seed = [seed + env_id for env_id in range(self.num_envs)]
            if seed is not None:  # an env not reset keeps its seeding, as in SyncVectorEnv
                seed = [value if reset_mask[env_id] else None for env_id, value in enumerate(seed)]
        # Every reset env gets this call's options, {} included: a reset without options clears the kept ones.
        reset_param = {env_id: options for env_id in env_ids}
        obs = self._lockstep.reset(seed, reset_param)
        for env_id in env_ids:  # a reset env takes its next action at once
            self._autoreset[env_id] = False
            self._reset_obs.pop(env_id, None)
        return obs, {}

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every env; where an episode ended, the env is reset as ``autoreset_mode`` says.

        Returns:
            ``(obs, rewards, terminations, truncations, infos)``.
        """
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            return self._step_same_step(actions)
        return self._step_next_step(actions)

    def _step_same_step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The managers' own order: a finished env's reset observation now, its final one in the infos."""
        obs, batch = self._lockstep.step(actions)
        infos: dict[str, Any] = {}
        done_rows = np.flatnonzero(batch.done).tolist()
        if done_rows:
            final_obs = list(iterate(self.observation_space, batch.obs))
            for row in done_rows:
                infos = self._add_info(infos, {"final_obs": final_obs[row], "final_info": batch.info[row]}, row)
        for row, info in enumerate(batch.info):
            if row not in done_rows:
                infos = self._add_info(infos, info, row)
        return obs, rewards_of(batch), batch.terminated, batch.truncated, infos

    def _step_next_step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The final observation now; an env that finished last step is not stepped but hands out its reset one."""
        if not self._autoreset.any():
            ready_obs, batch = self._lockstep.step(actions)
            stepped = list(range(self.num_envs))
            obs, reward, terminated, truncated = batch.obs, rewards_of(batch), batch.terminated, batch.truncated
        else:
            stepped_ids = np.flatnonzero(~self._autoreset)
            # Every env's action is checked, as in the steps that step them all, before the stepped ones are taken.
            per_env = self._lockstep.per_env_actions(actions)
            checked = self._action_checker.check_batch(self._lockstep.env_ids, per_env)
            ready_obs, batch = self._lockstep.step(arrays.take(checked, stepped_ids), stepped_ids)
            stepped = stepped_ids.tolist()
            obs = self._with_reset_obs(stepped, batch.obs)
            reward = np.zeros(self.num_envs, dtype=np.float64)
            terminated = np.zeros(self.num_envs, dtype=bool)
            truncated = np.zeros(self.num_envs, dtype=bool)
            reward[stepped] = rewards_of(batch)
            terminated[stepped] = batch.terminated
            truncated[stepped] = batch.truncated
        self._autoreset = terminated | truncated
        if self._autoreset.any():  # hold the reset observations for the next step
            ready = iterate(self._obs_space_of(len(stepped)), ready_obs)
            ended = self._autoreset
            self._reset_obs.update((env_id, row) for env_id, row in zip(stepped, ready, strict=True) if ended[env_id])
        infos: dict[str, Any] = {}
        for env_id, info in zip(stepped, batch.info, strict=True):  # a reset env has no info: none is kept
            infos = self._add_info(infos, info, env_id)
        return obs, reward, terminated, truncated, infos

    def _obs_space_of(self, count: int) -> gym.Space:
        """The observation space of ``count`` envs, made once per count (``batch_space`` deep-copies the space)."""
        space = self._obs_spaces.get(count)
        if space is None:
            space = self._obs_spaces[count] = batch_space(self.single_observation_space, count)
        return space

    def _with_reset_obs(self, stepped: list[int], step_obs: Any) -> Any:
        """Every env's observation: the step's for ``stepped``, the held reset one for the others."""
        rows = [self._reset_obs.pop(env_id, None) for env_id in range(self.num_envs)]
        step_rows = iterate(self._obs_space_of(len(stepped)), step_obs)
        for env_id, row in zip(stepped, step_rows, strict=True):
            rows[env_id] = row
        space = self.single_observation_space
        return concatenate(space, rows, create_empty_array(space, self.num_envs))

    @property
    def render_mode(self) -> str | None:  # type: ignore[override]  # read when asked: each env's, from its factory
        """The envs' render mode when they all have the same one, else None."""
        modes = self._render_modes
        return modes[0] if len(set(modes)) == 1 else None

    @property
    def _render_modes(self) -> list[str | None]:
        """Each env's ``render_mode``: the envs' once launched, before that an env of each factory's (closed again)."""
        if self._modes is None:
            if self._env_fns is None or self._lockstep.launched:
                self._modes = self._lockstep.render_modes()
            else:
                distinct = {id(env_fn): env_fn for env_fn in self._env_fns}  # a factory given for several envs: once
                read = {key: read_from_env(env_fn, "render_mode", None) for key, env_fn in distinct.items()}
                self._modes = [read[id(env_fn)] for env_fn in self._env_fns]
        return self._modes

    def render(self) -> tuple[Any, ...]:
        """Every env's ``render()`` in env order (frames in ``rgb_array`` mode), as ``SyncVectorEnv.render()`` gives.

        Raises:
            EnvStateError: When the envs were made without a render mode, or with different ones.
        """
        if self.render_mode is None:
            raise EnvStateError(
                f"{self!r}.render(): the envs' render modes are {self._render_modes}; render() needs the same one "
                "in every env: make each with it, e.g. gym.make(env_id, render_mode='rgb_array')"
            )
        return tuple(self._lockstep.render())

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

    @property
    def np_random_seed(self) -> tuple[Any, ...]:
        """Every env's ``np_random_seed``, as ``SyncVectorEnv`` gives them (not a generator of the vector env's)."""
        return self.get_attr("np_random_seed")

    @property
    def np_random(self) -> tuple[Any, ...]:
        """Every env's ``np_random``, as ``SyncVectorEnv`` gives them (copies, from worker processes)."""
        return self.get_attr("np_random")

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """Set attribute ``name`` of every env: ``values`` has one value per env, or is one value for all.

        A Gymnasium env (made from a factory, or in a ``DingEnvWrapper``) gets it where its wrappers hold it,
        as ``SyncVectorEnv`` sets it (``DingEnvWrapper.set_wrapper_attr``); an env of your own (a ``BaseEnv``)
        on itself.
        """
        self._lockstep.set_env_attribute(name, values)

    def close_extras(self, **kwargs: Any) -> None:
        """Close the manager and its envs."""
        self._lockstep.close()

    def __repr__(self) -> str:
        return f"ManagerVectorEnv({type(self.manager).__name__}, num_envs={self.num_envs})"

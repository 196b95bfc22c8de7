"""Every env of a manager stepped together: what vectorised-env APIs (Gymnasium, SB3) expect.

The managers return the envs that finished a step (the async one may return some of
them later) and reset a finished env in its own process at once: the step carries the
true final observation and the reset one is the env's next ready observation.
:class:`Lockstep` waits until every env has its result and hands back both, so an
adapter only has to place them where its library wants them. It uses the managers'
public API only (``config``, ``seed``, ``launch``/``reset``, ``ready_obs_batch``,
``step_batch``, ``step``, env attributes), so it works over every manager type.

It is built as the adapters are and launches the manager then, as ``SyncVectorEnv`` and
``DummyVecEnv`` build their envs in their constructors: the envs' spaces, render modes and
metadata are read from them (or, for a manager the adapter made itself, at the first reset,
which then is the envs' first). What would fail only later is refused there: an object that
is not a manager, a manager whose envs do not auto-reset forever, and (by the launch) a
manager of Gymnasium envs not wrapped in ``DingEnvWrapper``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from ding_env.env_manager import arrays
from ding_env.env_manager.outcome import TimestepBatch
from ding_env.errors import ClosedEnvError, EnvNotReadyError, EnvStateError
from ding_env.summary import describe_typed

# What the adapters take, and how to make one from Gymnasium env factories: for the messages refusing anything else.
A_MANAGER = "an env manager with the batched API (create_env_manager(cfg, env_fns), of any type but env_pool)"
WRAP_GYMNASIUM_ENVS = (
    "wrap each Gymnasium env in DingEnvWrapper, e.g. create_env_manager({'type': 'base'}, "
    "[lambda: DingEnvWrapper(gym.make('CartPole-v1'))] * 4), or give the env factories as they are to "
    "ding_env.vector.ManagerVectorEnv, which wraps them"
)


def rewards_of(batch: TimestepBatch) -> np.ndarray:
    """The ``(n,)`` float64 rewards of a step of every env (one value per env), as vector-env APIs return them."""
    return np.asarray(batch.reward, dtype=np.float64).reshape(len(batch.env_id))


def is_manager(candidate: Any) -> bool:
    """Whether ``candidate`` is an env manager with the batched API the adapters drive (every type has it)."""
    return callable(getattr(candidate, "step_batch", None)) and hasattr(candidate, "env_num")


def check_manager(candidate: Any, owner: str) -> None:
    """Raise unless ``candidate`` is an env manager.

    Raises:
        TypeError: Naming what arrived and what to give instead: for env factories, a manager of them;
            for an adapter over a manager, its ``manager``.
    """
    if is_manager(candidate):
        return
    if is_manager(getattr(candidate, "manager", None)):  # ManagerVectorEnv, ManagerVecEnv
        hint = f"give the manager it runs on, {owner}(envs.manager)"
    elif callable(getattr(candidate, "step", None)) and hasattr(candidate, "env_num"):  # the env_pool type
        hint = (
            f"{type(candidate).__name__} has DI-engine's dict interface only (step({{env_id: action}})), not the "
            "batched one (ready_obs_batch, step_batch); for EnvPool, host it as a batch env in a manager "
            "(EnvPoolBatchEnv, or batch_source='envpool' in a DingEnvWrapper config)"
        )
    elif isinstance(candidate, (list, tuple)) and all(callable(item) for item in candidate):
        hint = f"these look like env factories: make a manager of them and {WRAP_GYMNASIUM_ENVS}"
    else:
        hint = f"make a manager of env factories; for Gymnasium envs, {WRAP_GYMNASIUM_ENVS}"
    raise TypeError(f"{owner} takes {A_MANAGER}, got {describe_typed(candidate)}: {hint}")


def check_endless(manager: Any, owner: str) -> None:
    """Raise unless ``manager``'s config lets every env reset itself at each episode end, forever.

    A vectorised env steps every env at every step, so every env must be ready after each step.

    Raises:
        ValueError: Naming the settings that stop that (``auto_reset=False``, a finite ``episode_num``).
    """
    config = getattr(manager, "config", None)  # the managers' public copy of their config
    if not isinstance(config, Mapping):
        return
    settings = []
    if not config.get("auto_reset", True):
        settings.append("auto_reset=False")
    if config.get("episode_num", math.inf) != math.inf:
        settings.append(f"episode_num={config['episode_num']}")
    if settings:
        raise ValueError(
            f"{owner} steps every env at every step, so its manager must reset each env when its episode ends, "
            f"without end: {type(manager).__name__} has {' and '.join(settings)}; create it with auto_reset=True "
            "and episode_num=inf (the defaults)"
        )


class Lockstep:
    """Drives a manager so that every env takes one action per step.

    Args:
        manager: An env manager of any type, launched or not (it is launched here). Its envs must
            auto-reset and run endless episodes (``auto_reset=True``, ``episode_num=inf``, the defaults),
            since every env must be ready after each step.
        owner: The adapter, named in error messages.
        launch_at_first_reset: Launch a manager not launched yet at the first ``reset()`` (seeded as that
            reset says) instead of here: its envs' first reset is then the caller's, as in a vector env
            that builds its envs without resetting them. Reading or setting env attributes launches it
            before that.
        restart: How the adapter's caller restarts an env that failed (said when a step finds one).

    Raises:
        TypeError: For an object that is not a manager.
        EnvError: When the launch fails, as for a manager whose ``env_fn`` return Gymnasium envs not in
            ``DingEnvWrapper`` (the error names the env and how to wrap it).
        ValueError: For a manager whose envs do not auto-reset forever.
    """

    def __init__(
        self, manager: Any, owner: str, launch_at_first_reset: bool = False, restart: str = "reset() restarts every env"
    ) -> None:
        check_manager(manager, owner)
        check_endless(manager, owner)
        self.manager = manager
        self.owner = owner
        self.restart = restart
        self.num_envs = manager.env_num
        self._closed = False
        # A manager launched by its caller may be stepped at once; one launched here is reset first, as an env is.
        self._may_step = not manager.closed
        self._launched = not manager.closed
        if not launch_at_first_reset:
            self._launch()
        self.single_observation_space: gym.spaces.Space = manager.observation_space
        self.single_action_space: gym.spaces.Space = manager.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.env_ids = np.arange(self.num_envs, dtype=np.int64)

    @property
    def launched(self) -> bool:
        """Whether the manager was launched (by its caller, here, or at the first reset)."""
        return self._launched

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
        if self._launched:
            self.manager.reset(reset_param)
        else:  # the launch resets every env: those reset_param leaves out with no kwargs
            self.manager.launch(reset_param)
            self._launched = True
        self._may_step = True
        return self._ready_obs()

    def per_env_actions(self, actions: Any) -> Any:
        """``actions`` as the managers take them: a ``Tuple`` space's batch becomes one tuple per env.

        Other batches, and lists of per-env actions, are as they are.
        """
        if isinstance(self.single_action_space, gym.spaces.Tuple) and not isinstance(actions, list):
            return list(iterate(self.action_space, actions))
        return actions

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
        if not self._may_step:
            raise EnvStateError("step() before reset(): reset the envs first")
        env_ids = self.env_ids if env_ids is None else env_ids
        try:
            batch = self.manager.step_batch(env_ids, self.per_env_actions(actions))
        except EnvNotReadyError as error:  # an env failed: the manager's own reset is not the caller's
            error.add_note(f"{self.owner}: {self.restart}")
            raise
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
        self._launch()
        return getattr(self.manager, name)

    def set_env_attribute(self, name: str, values: Any, env_ids: list[int] | None = None) -> None:
        """Set the envs' attribute ``name`` through the manager (one value for all, or one per env).

        Raises:
            ValueError: For a private name or a list of the wrong length.
        """
        self._check_open()
        self._launch()
        self.manager.set_env_attr(name, values, env_ids)

    def render_modes(self) -> list[str | None]:
        """Each env's ``render_mode``; None for an env without one (a ``gym.Env`` without one does not render)."""
        try:
            return list(self.env_attribute("render_mode"))
        except AttributeError:
            return [None] * self.num_envs

    def metadata(self) -> dict[str, Any]:
        """A copy of env 0's ``metadata`` (``render_fps``, ``render_modes``), as ``SyncVectorEnv`` copies it; or {}."""
        try:
            metadata = self.env_attribute("metadata")[0]
        except AttributeError:
            return {}
        return dict(metadata) if isinstance(metadata, Mapping) else {}

    def render(self) -> list[Any]:
        """Every env's ``render()`` result (a frame in ``rgb_array`` mode), in env order."""
        return list(self.env_attribute("render")())

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

    def _launch(self) -> None:
        """Launch the manager unless it is launched (its envs reset with the seeding they have)."""
        if not self._launched:
            # A Gymnasium env not in DingEnvWrapper is an EnvError of launch naming it and how to wrap it.
            self.manager.launch()
            self._launched = True

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

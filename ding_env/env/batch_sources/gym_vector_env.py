"""``GymVectorBatchEnv``: a Gymnasium vector env as a batch env.

Example::

    env = GymVectorBatchEnv(dict(env_id="ALE/Pong-v5", num_envs=8))   # made on the first reset
    env.seed(0)
    obs = env.reset()
    step = env.step(np.zeros(8, dtype=np.int64))   # every sub-env steps: a vector env is lockstep

A Gymnasium vector env steps all its sub-envs with each call, so this batch env is ``lockstep``:
``step`` takes one action per sub-env, and a sub-env whose episode ended is reset before the next
step. Gymnasium 1.x vector envs reset sub-envs in one of three modes; two can give the contract
exactly, and this class asks for them:

* ``Disabled`` (``vectorization_mode='sync'`` or ``'async'``, and vector entry points that offer it):
  no reset of their own; the done step's observation is the final one, and ``reset(env_ids)``
  resets just those sub-envs with the ``reset_mask`` option.
* ``SameStep`` (e.g. ALE's vector entry point): the vector env resets a sub-env in the step that
  ends its episode; the final observation comes from ``info['final_obs']`` and the new episode's
  first observation is kept for ``reset(env_ids)``.

``NextStep`` envs (Gymnasium's own CartPole-v1 vector entry point) reset a sub-env only with the
next step, so its first observation cannot be had before the other sub-envs step again: they are
refused with a ``ConfigError`` (``dizoo``'s ``CartPoleBatchEnv`` is CartPole-v1 as a batch env).

Seeds: a vector env seeds sub-env ``i`` with ``seed + i`` when every sub-env is reset, so the seeds
must be consecutive and take effect at the next ``reset()`` (see ``SeedsAtFullReset``).
"""

from __future__ import annotations

import inspect
import multiprocessing
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import load_env_creator
from gymnasium.vector import AutoresetMode

from ding_env.config import check_env_keys
from ding_env.env.batch_env import BatchStep, EnvIds, scalar_reward_space
from ding_env.env.batch_sources.rows import row_of, set_row, stack_rows, take_rows
from ding_env.env.batch_sources.seeded_at_reset import SeedsAtFullReset
from ding_env.env.gym_ids import register_env_id
from ding_env.env_wrappers.converters import box_scale, obs_converter, scaled_action_space
from ding_env.env_wrappers.dtypes import convention_space
from ding_env.env_wrappers.family import MUJOCO, family_of_env_id
from ding_env.env_wrappers.mujoco_warnings import route_mujoco_warnings
from ding_env.errors import ConfigError
from ding_env.summary import describe_value

_MODES = ("vector_entry_point", "sync", "async")


class GymVectorBatchEnv(SeedsAtFullReset):
    """The ``num_envs`` sub-envs of a Gymnasium vector env, as a (lockstep) batch env.

    Args:
        cfg: Settings; see ``GymVectorBatchEnv.config``.
        make_env: Builds the vector env instead of ``gym.make_vec`` (a picklable function for a
            batch env sent to another process); its ``num_envs`` must be ``cfg.num_envs``.

    Raises:
        ConfigError: For an unknown config key, or neither ``env_id`` nor ``make_env``.
    """

    config: ClassVar[dict] = dict(
        # Gymnasium id given to gym.make_vec.
        env_id=None,
        num_envs=8,
        # 'vector_entry_point': the id's own vector env; 'sync' / 'async': Gymnasium's vector envs over copies of it.
        vectorization_mode="vector_entry_point",
        # More gym.make_vec keyword arguments (the env's own, e.g. max_episode_steps).
        make_kwargs={},
        # Info keys passed on in BatchStep.info (each an array with one row per sub-env); None: every key
        # whose value is such an array (Gymnasium's "_key" masks and final_obs / final_info left out).
        info_keys=None,
        # Box actions given in [-1, 1], mapped linearly to the bounds (DingEnvWrapper's act_scale).
        act_scale=False,
        # Box actions clipped to their bounds ([-1, 1] with act_scale) first (DingEnvWrapper's action_clip).
        action_clip=False,
    )
    lockstep: ClassVar[bool] = True

    def __init__(self, cfg: dict | None = None, make_env: Callable[[], gym.vector.VectorEnv] | None = None) -> None:
        cfg = dict(cfg or {})
        check_env_keys(cfg, self.config, "GymVectorBatchEnv config")
        if make_env is None and not cfg.get("env_id"):
            raise ConfigError("GymVectorBatchEnv needs cfg.env_id or make_env, got neither")
        if cfg.get("vectorization_mode", "vector_entry_point") not in _MODES:
            raise ConfigError(
                f"GymVectorBatchEnv vectorization_mode: expected one of {', '.join(_MODES)}, "
                f"got {describe_value(cfg['vectorization_mode'])}"
            )
        super().__init__(cfg)
        self._make_env = make_env
        self._env: gym.vector.VectorEnv | None = None
        self._reward_space = scalar_reward_space()
        self._ready_rows: dict[int, Any] = {}  # first observations the vector env made but nobody asked for yet

    # ---- construction --------------------------------------------------

    @property
    def env(self) -> gym.vector.VectorEnv:
        """The Gymnasium vector env (made on first use)."""
        if self._env is None:
            env = self._make_env() if self._make_env is not None else self._make_vec()
            mode = AutoresetMode(env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP))
            if mode == AutoresetMode.NEXT_STEP or env.num_envs != self._num_envs:
                env.close()
                raise ConfigError(self._refusal(mode, env.num_envs))
            self._mode = mode
            self._observation_space = convention_space(env.single_observation_space)
            unused = [key for key in ("act_scale", "action_clip") if self._cfg[key]]
            if unused and not isinstance(env.single_action_space, gym.spaces.Box):
                env.close()  # a DingEnvWrapper would apply them to the Box parts: refused, not left unapplied
                raise ConfigError(
                    f"{self!r}: {' and '.join(unused)} {'applies' if len(unused) == 1 else 'apply'} to a Box action "
                    "space in a batch env, and "
                    f"{env.single_action_space} is not one: leave them off, or host one DingEnvWrapper per env"
                )
            self._set_action_space(env.single_action_space)
            self._convert_obs = obs_converter(self._observation_space, owner=repr(self))
            self._env = env
        return self._env

    def _set_action_space(self, raw: gym.spaces.Space) -> None:
        """The action space users act in, and how a Box action becomes the vector env's (scaled, clipped)."""
        box = isinstance(raw, gym.spaces.Box)
        self._raw_action_space = raw
        self._action_space = scaled_action_space(raw) if box and self._cfg.act_scale else raw
        self._scale = box_scale(raw) if box and self._cfg.act_scale else None
        self._clip = (self._action_space.low, self._action_space.high) if box and self._cfg.action_clip else None

    def _make_vec(self) -> gym.vector.VectorEnv:
        cfg, kwargs = self._cfg, dict(self._cfg.make_kwargs or {})
        if cfg.env_id is not None:
            register_env_id(cfg.env_id)  # ALE and MiniGrid ids, as DingEnvWrapper registers them
        if cfg.env_id is not None and family_of_env_id(cfg.env_id) == MUJOCO:
            route_mujoco_warnings()  # as DingEnvWrapper does: warnings, not stderr lines and a MUJOCO_LOG.TXT
        if cfg.vectorization_mode == "async" and multiprocessing.current_process().daemon:
            raise ConfigError(
                f"{self!r}: vectorization_mode 'async' starts processes of its own, which a manager's worker "
                "process (daemonic) cannot start: use vectorization_mode 'sync' there (the manager's workers already "
                "step in parallel), or host the batch env in the base manager"
            )
        if cfg.vectorization_mode != "vector_entry_point":
            kwargs["vector_kwargs"] = dict(kwargs.get("vector_kwargs", {}), autoreset_mode=AutoresetMode.DISABLED)
            return gym.make_vec(cfg.env_id, self._num_envs, vectorization_mode=cfg.vectorization_mode, **kwargs)
        creator = vector_creator(cfg.env_id)
        if creator is None:
            raise ConfigError(f"{self!r}: {cfg.env_id!r} has no vector entry point; use vectorization_mode 'sync'")
        if picks_autoreset_mode(creator):
            kwargs.setdefault("autoreset_mode", AutoresetMode.SAME_STEP)
        return gym.make_vec(cfg.env_id, self._num_envs, vectorization_mode="vector_entry_point", **kwargs)

    def _refusal(self, mode: AutoresetMode, num_envs: int) -> str:
        if num_envs != self._num_envs:
            return f"{self!r}: make_env built a vector env of {num_envs} sub-envs, expected num_envs={self._num_envs}"
        return (
            f"{self!r}: the vector env resets a sub-env only with the next step (autoreset mode {mode.value}), so "
            "it cannot give the first observation of a sub-env's next episode before the others step again; use "
            "vectorization_mode 'sync'/'async', a vector env with autoreset mode Disabled or SameStep, or a "
            "BaseBatchEnv (for CartPole-v1: dizoo.classic_control.cartpole.envs.CartPoleBatchEnv)"
        )

    def seed(self, seed: int | Sequence[int], dynamic_seed: bool = True) -> None:
        """Set the seeds, sub-env ``i`` getting ``seed + i``; they take effect at the next ``reset()``.

        Raises:
            ValueError: For a list of seeds that are not consecutive.
        """
        seeds = self._checked_seeds(seed)
        if seeds != list(range(seeds[0], seeds[0] + self._num_envs)):
            raise ValueError(
                f"{self!r}.seed(): a Gymnasium vector env seeds sub-env i with seed + i, so the seeds must be "
                f"consecutive, got {describe_value(seeds)}"
            )
        super().seed(seeds, dynamic_seed)

    # ---- BaseBatchEnv --------------------------------------------------

    def _reset(self, env_ids: EnvIds) -> Any:
        ids = np.arange(self._num_envs) if env_ids is None else env_ids
        if self._env is None or self._seeding_due(ids, every=env_ids is None):
            self._reset_every_env()
        missing = [env_id for env_id in ids.tolist() if env_id not in self._ready_rows]
        if missing:
            mask = np.zeros(self._num_envs, dtype=bool)
            mask[missing] = True
            # Every sub-env: a plain reset, which every vector env has; some: the reset_mask option.
            obs, _ = self.env.reset(options=None if mask.all() else {"reset_mask": mask})
            obs = self._convert_obs(obs)
            for env_id in missing:
                self._ready_rows[env_id] = row_of(obs, env_id)
        self._started_episodes(ids)
        return stack_rows([self._ready_rows.pop(env_id) for env_id in ids.tolist()])

    def _reset_every_env(self) -> None:
        """Reset every sub-env (with the seeds when set and due) and keep their first observations."""
        seeds = self.seeds
        due = seeds is not None and (self._reseed or not self.dynamic_seed)
        obs, _ = self.env.reset(seed=seeds[0] if due else None)
        if due:
            self._seeds_applied()
        obs = self._convert_obs(obs)
        self._ready_rows = {env_id: row_of(obs, env_id) for env_id in range(self._num_envs)}

    def _step(self, actions: Any, env_ids: EnvIds) -> BatchStep:
        actions = np.asarray(actions)
        if isinstance(self._action_space, gym.spaces.Discrete):
            actions = actions.reshape(self._num_envs).astype(self._action_space.dtype, copy=False)
        elif self._clip is not None or self._scale is not None:
            actions = actions.astype(self._raw_action_space.dtype, copy=False)
            if self._clip is not None:
                actions = np.clip(actions, *self._clip)
            if self._scale is not None:
                actions = self._scale[0] + actions * self._scale[1]
        obs, reward, terminated, truncated, info = self._env.step(actions)
        done = np.asarray(terminated) | np.asarray(truncated)
        obs = self._convert_obs(obs)
        if self._mode == AutoresetMode.SAME_STEP and done.any():
            final_obs = info["final_obs"]
            for env_id in np.flatnonzero(done).tolist():
                self._ready_rows[env_id] = row_of(obs, env_id)
                set_row(obs, env_id, final_obs[env_id])
        final = info.get("final_info") if done.any() else None
        final = final if isinstance(final, dict) else None  # a SameStep env's info of the steps that ended
        keys = self._cfg.info_keys if self._cfg.info_keys is not None else self._row_keys(info, final)
        extra = {key: rows for key in keys if (rows := self._info_rows(info, final, key, done)) is not None}
        return self._transition(env_ids, obs, reward, terminated, truncated, extra)

    def _row_keys(self, info: dict, final: dict | None) -> list[str]:
        """The keys with one row per sub-env in ``info`` or ``final`` (not Gymnasium's own bookkeeping)."""
        keys = {}
        for part in (info, final or {}):
            for key, value in part.items():
                if key.startswith("_") or key in ("final_obs", "final_info"):
                    continue
                if isinstance(value, np.ndarray) and value.shape[:1] == (self._num_envs,):
                    keys[key] = None
        return list(keys)

    def _info_rows(self, info: dict, final: dict | None, key: str, done: np.ndarray) -> np.ndarray | None:
        """``key``'s rows: the step's values, a done row of a SameStep env from ``final`` (not its reset's).

        A row whose sub-env did not report the key (Gymnasium's ``_key`` mask) is masked, so its info
        has no such key, as a ``DingEnvWrapper`` env's would not. None: no sub-env reported it.
        """
        values, present = self._reported(info, key)
        if final is not None:
            final_values, final_present = self._reported(final, key)
            if final_values is None and values is None:
                return None
            values = np.zeros_like(final_values) if values is None else values.copy()
            present = present.copy()
            present[done] = False  # a done row's info is the final step's, never its reset's
            if final_values is not None:
                values[done] = take_rows(final_values, done)
                present[done] = final_present[done]
        if values is None:
            return None
        return values if present.all() else np.ma.masked_array(values, mask=~present)

    def _reported(self, info: dict, key: str) -> tuple[np.ndarray | None, np.ndarray]:
        """``info[key]`` as an array (None when absent) and which sub-envs reported it."""
        if key not in info:
            return None, np.zeros(self._num_envs, dtype=bool)
        mask = info.get("_" + key)
        present = np.ones(self._num_envs, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
        return np.asarray(info[key]), present

    def _close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None
        self._ready_rows = {}

    def __repr__(self) -> str:
        name = self._cfg.env_id or getattr(self._make_env, "__name__", "make_env")
        return f"GymVectorBatchEnv({name}, num_envs={self._num_envs})"

    @property
    def observation_space(self) -> gym.spaces.Space:
        """One sub-env's observation space, in the dtype convention (float32 for floats)."""
        self.env  # noqa: B018 - builds the vector env and its spaces
        return self._observation_space

    @property
    def action_space(self) -> gym.spaces.Space:
        """One sub-env's action space."""
        self.env  # noqa: B018 - builds the vector env and its spaces
        return self._action_space

    @property
    def reward_space(self) -> gym.spaces.Space:
        """``Box(-inf, inf, (1,), float32)``."""
        return self._reward_space


def vector_creator(env_id: str) -> Callable[..., gym.vector.VectorEnv] | None:
    """The vector entry point of a Gymnasium id, loaded (None when it has none)."""
    entry_point = gym.spec(env_id).vector_entry_point
    if entry_point is None:
        return None
    return entry_point if callable(entry_point) else load_env_creator(entry_point)


def picks_autoreset_mode(creator: Callable[..., gym.vector.VectorEnv]) -> bool:
    """Whether a vector entry point takes ``autoreset_mode`` (then it is asked for ``SameStep``)."""
    return "autoreset_mode" in inspect.signature(creator).parameters

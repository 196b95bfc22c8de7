"""``PoolEnvManager``: DI-engine's ``env_pool`` manager type, an EnvPool pool behind the manager semantics.

DI-engine builds it from a config alone (no ``env_fn``)::

    manager = PoolEnvManager(dict(env_id="Pong-v5", env_num=8, batch_size=8, episodic_life=True, reward_clip=True))
    manager.seed(0)
    manager.launch()
    timesteps = manager.step({env_id: action for env_id in manager.ready_obs})

The pool is stepped by ``envpool_runner.EnvPoolRunner``, which turns EnvPool's stacked results into
timesteps directly, with the managers' semantics (truncation kept in ``info['truncated']``, the true
final observation on the done step, ``eval_episode_return`` the game's raw return, auto-reset): the
same trajectories as an ``EnvPoolBatchEnv`` in any manager, without the batch-env and manager layers,
which cost about as much as EnvPool's own step on MuJoCo tasks. With ``batch_size < env_num``
(DI-engine's asynchronous mode) the pool runs in EnvPool's asynchronous mode: each ``step`` returns
the first ``batch_size`` results to arrive, and the other envs keep running while the policy computes.

What differs from DI-engine's class: observations keep EnvPool's dtype (Atari frames ``uint8``, not cast
to float32); ``seed(s)`` gives env ``i`` the seed ``s + i`` as in DI-engine, and the config's ``seed`` is
used when ``seed()`` is not called (DI-engine ignored it and took 0). In the asynchronous mode an env
whose episode ended is restarted by EnvPool and is ready again once its first observation arrives;
DI-engine's class handed the restart back as a transition of its own (reward 0, the reset observation).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from easydict import EasyDict

from ding_env.config import deep_merge_dicts, merge_known_keys
from ding_env.env.base_env import BaseEnvTimestep
from ding_env.env.batch_sources.envpool_env import ATARI_MODULE, EnvPoolBatchEnv, envpool_family, import_envpool
from ding_env.env_manager.envpool_runner import EnvPoolRunner
from ding_env.env_manager.validation import check_dynamic_seed, check_seed
from ding_env.errors import ClosedEnvError, ConfigError, EnvStateError
from ding_env.summary import describe_value

INT32_MAX = 2**31 - 1  # EnvPool takes its seeds as int32

__all__ = ["PoolEnvManager"]

# DI-engine's keys, given to envpool.make for Atari tasks (other tasks take none of them).
ATARI_MAKE_KEYS = ("episodic_life", "reward_clip", "gray_scale", "stack_num", "frame_skip")


def pool_env(env_id: str, env_num: int, atari_kwargs: dict, make_kwargs: dict) -> EnvPoolBatchEnv:
    """An ``EnvPoolBatchEnv`` of ``env_num`` envs of ``env_id``, with ``atari_kwargs`` for an Atari task."""
    family = envpool_family(import_envpool("the env_pool manager"), env_id, "the env_pool manager")
    kwargs = {**atari_kwargs, **make_kwargs} if family == ATARI_MODULE else dict(make_kwargs)
    return EnvPoolBatchEnv(dict(env_id=env_id, num_envs=env_num, env_wrapper=None, make_kwargs=kwargs))


class PoolEnvManager:
    """``env_num`` EnvPool envs of ``env_id`` behind DI-engine's ``PoolEnvManager`` interface; type ``'env_pool'``.

    Args:
        cfg: Settings; see ``PoolEnvManager.config``.

    Raises:
        ConfigError: For an unknown key, no ``env_id``, or a ``batch_size`` outside ``1..env_num``.
        ImportError: Without EnvPool (``pip install 'ding-env[envpool]'``).
    """

    manager_type = "env_pool"
    # Built from its config: create_env_manager gives it no env_fn.
    takes_env_fn = False
    config: ClassVar[dict] = dict(
        type="env_pool",
        # EnvPool task id ('Pong-v5', 'HalfCheetah-v4', 'CartPole-v1', ...).
        env_id=None,
        env_num=8,
        # Envs returned by each step: env_num (EnvPool's synchronous mode) or fewer (its asynchronous mode).
        batch_size=8,
        # Env i gets seed + i when seed() is not called (None: 0, as DI-engine).
        seed=None,
        # Atari tasks: EnvPool's options of these names, with DI-engine's values.
        episodic_life=False,
        reward_clip=False,
        gray_scale=True,
        stack_num=4,
        frame_skip=4,
        # More envpool.make keyword arguments (any task); they override the ones above.
        make_kwargs={},
    )

    @classmethod
    def default_config(cls) -> EasyDict:
        """A copy of ``config``."""
        return EasyDict(deep_merge_dicts(cls.config, {}))

    def __init__(self, cfg: Mapping | None = None) -> None:
        if cfg is not None and not isinstance(cfg, Mapping):
            raise ConfigError(f"PoolEnvManager config: expected a dict, got {describe_value(cfg)}")
        self._cfg = cfg = merge_known_keys(self.config, dict(cfg or {}), "the env_pool manager config")
        if not cfg.env_id:
            raise ConfigError("PoolEnvManager needs cfg.env_id (an EnvPool task id such as 'Pong-v5'), got none")
        if not (isinstance(cfg.env_num, int) and cfg.env_num >= 1):
            raise ConfigError(f"PoolEnvManager config 'env_num': expected an int >= 1, got {cfg.env_num!r}")
        if not (isinstance(cfg.batch_size, int) and 1 <= cfg.batch_size <= cfg.env_num):
            raise ConfigError(
                f"PoolEnvManager config 'batch_size': expected an int in 1..env_num={cfg.env_num}, "
                f"got {cfg.batch_size!r}"
            )
        atari_kwargs = {key: cfg[key] for key in ATARI_MAKE_KEYS}
        pool_task = pool_env(cfg.env_id, cfg.env_num, atari_kwargs, dict(cfg.make_kwargs or {}))
        self._runner = EnvPoolRunner(pool_task, cfg.batch_size, repr(self))
        self._seed: int | None = None if cfg.seed is None else self._checked_seed(cfg.seed, "config 'seed'")
        self._reseed = False  # seed() was called since the pool was made
        self._closed_for_good = False

    # ---- DI-engine's interface -------------------------------------------

    def launch(self) -> None:
        """Make the pool (seeded) and reset every env.

        Raises:
            EnvStateError: When already launched.
        """
        self._check_open()
        if not self.closed:
            raise EnvStateError(f"{self!r} is already launched; call reset() to start over")
        self._runner.start(self._pool_seed())

    def reset(self) -> None:
        """Reset every env.

        The synchronous mode goes on to new episodes (after ``seed()``, each env starts again from its
        new seed). In the asynchronous mode, and after an interrupted step, the pool is made again: each
        env starts again from its seed, as at ``launch()``; ``seed()`` a new seed first for new episodes.

        Raises:
            EnvStateError: Before ``launch()``.
        """
        self._check_launched()
        if self._runner.synchronous and not self._reseed and self._runner.interrupted is None:
            self._runner.reset()
        else:  # the asynchronous mode, a new seed, or a pool whose step was interrupted: a new pool
            self._runner.start(self._pool_seed())

    def step(self, action: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """Step the envs of ``action`` (ids of ``ready_obs``) and return the timesteps of up to ``batch_size`` envs.

        The synchronous mode returns every stepped env's; the asynchronous one those that arrived first (see
        ``envpool_runner.EnvPoolRunner.step``).

        Raises:
            TypeError: For ``action`` not a mapping.
            ValueError: For an env id that is not an int in ``0..env_num - 1``, or not ready (its
                previous result was not returned yet), or an action outside the action space.
            EnvStateError: Before ``launch()``, or after a step interrupted while EnvPool ran it (Ctrl-C):
                ``reset()`` then makes the pool again.
            ClosedEnvError: After ``close()``.
        """
        if not isinstance(action, Mapping):
            raise TypeError(f"{self!r}.step: expected {{env_id: action}}, got {describe_value(action)}")
        self._check_launched()
        env_num = self.env_num
        if not all(type(env_id) is int and 0 <= env_id < env_num for env_id in action):
            action = self._int_ids(action)
        ready = self._runner.ready
        not_ready = [env_id for env_id in action if env_id not in ready]
        if not_ready:
            raise ValueError(
                f"{self!r}.step: env ids {not_ready[:20]} are not ready; ready env ids: {sorted(ready)[:20]}"
            )
        return self._runner.step(action)

    def seed(self, seed: int, dynamic_seed: bool | None = None) -> None:
        """Env ``i`` gets ``seed + i`` at the next ``launch()`` or ``reset()``; every episode follows from it.

        EnvPool seeds an env once, so ``dynamic_seed=False`` (replaying one episode start) is not
        available: it is warned about and ignored, as DI-engine does.
        """
        self._check_open()
        seed = self._checked_seed(seed, "seed")
        if check_dynamic_seed(repr(self), dynamic_seed) is False:
            warnings.warn(f"{self!r}: EnvPool cannot replay an episode start; dynamic_seed=False ignored", stacklevel=2)
        self._seed = seed
        self._reseed = True

    def _checked_seed(self, seed: Any, what: str) -> int:
        """``seed`` as an int >= 0 whose envs' seeds ``seed + i`` fit EnvPool's int32 seeds."""
        seed = check_seed(repr(self), seed, what)
        if seed + self._cfg.env_num - 1 > INT32_MAX:
            raise ValueError(
                f"{self!r}: {what} + env id must fit EnvPool's int32 seeds (at most {INT32_MAX}), got {seed} "
                f"for {self._cfg.env_num} envs"
            )
        return seed

    def close(self) -> None:
        """Close the pool. Safe to call more than once."""
        self._runner.close()
        self._closed_for_good = True

    @property
    def env_num(self) -> int:
        """Number of envs."""
        return self._cfg.env_num

    @property
    def ready_obs(self) -> dict[int, Any]:
        """``{env_id: obs}`` of the envs to step next (copies, the caller's own)."""
        ready = self._runner.ready
        # By env id in the synchronous mode, as every manager gives them; by arrival in the asynchronous one.
        items = sorted(ready.items()) if self._runner.synchronous else ready.items()
        return {env_id: obs.copy() for env_id, obs in items}

    @property
    def closed(self) -> bool:
        """True until ``launch()`` and after ``close()``."""
        return self._runner.pool is None

    def _pool_seed(self) -> int:
        self._reseed = False
        return 0 if self._seed is None else self._seed

    def _check_open(self) -> None:
        if self._closed_for_good:
            raise ClosedEnvError(f"{self!r} is closed")

    def _check_launched(self) -> None:
        self._check_open()
        if self.closed:
            raise EnvStateError(f"{self!r} is not launched; call launch() first")

    def _int_ids(self, action: Mapping[int, Any]) -> dict[int, Any]:
        """``action`` keyed by Python ints (numpy integers become ints).

        Raises:
            ValueError: For an id that is not an integer in ``0..env_num - 1``.
        """
        bad = [
            env_id
            for env_id in action
            if isinstance(env_id, bool) or not isinstance(env_id, (int, np.integer)) or not 0 <= env_id < self.env_num
        ]
        if bad:
            raise ValueError(f"{self!r}.step: env ids are ints in [0, {self.env_num}), got {bad[:20]}")
        return {int(env_id): value for env_id, value in action.items()}

    @property
    def _envs(self) -> EnvPoolBatchEnv:
        # What knows the spaces: the pool's task.
        return self._runner.pool_env

    @property
    def _closed(self) -> bool:
        # DI-engine's name of ``closed``, which its code and tests read.
        return self.closed

    @property
    def observation_space(self) -> gym.spaces.Space:
        """One env's observation space."""
        return self._envs.observation_space

    @property
    def action_space(self) -> gym.spaces.Space:
        """One env's action space."""
        return self._envs.action_space

    @property
    def reward_space(self) -> gym.spaces.Space:
        """One env's reward space."""
        return self._envs.reward_space

    def __enter__(self) -> PoolEnvManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PoolEnvManager({self._cfg.env_id}, env_num={self._cfg.env_num}, batch_size={self._cfg.batch_size})"

"""``EnvPoolBatchEnv``: an EnvPool pool (C++ envs on threads) as a batch env.

Example::

    env = EnvPoolBatchEnv(dict(env_id="Pong-v5", num_envs=8))   # the pool is made on the first reset
    env.seed(0)
    obs = env.reset()                                           # (8, 4, 84, 84) uint8
    step = env.step(np.zeros(8, dtype=np.int64))

EnvPool resets an env by itself when it is stepped after its episode ended (ignoring the action);
this class never lets that happen unasked: a sub-env whose episode ended is reset by ``reset``,
which sends it that same step, so the final observation and the next episode's first observation
are both EnvPool's own, and an Atari game goes on after a lost life (episodic life) as in raw
EnvPool. A sub-env that is mid-episode (or never started) is reset with EnvPool's ``reset``.

Seeds: EnvPool seeds each env once, when the pool is made. ``seed()`` therefore takes effect at
the next reset of every sub-env together (``reset()``), which makes a new pool; with dynamic seeds
each sub-env's episodes then follow from its seed. Static seeds replay the episode start at every
``reset()`` of all sub-envs (a new pool each time); resetting some sub-envs again under static
seeds cannot replay their seed and raises ``EnvStateError``.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ding_env.config import check_env_keys
from ding_env.env.batch_env import BatchStep, EnvIds, scalar_reward_space
from ding_env.env.batch_sources.rows import merge_rows, rows_in_order, take_rows
from ding_env.env.batch_sources.seeded_at_reset import SeedsAtFullReset
from ding_env.env.ding_env_wrapper import DingEnvWrapper
from ding_env.env.seeding import derive_seeds
from ding_env.env_wrappers.converters import obs_converter
from ding_env.env_wrappers.dtypes import convention_space
from ding_env.errors import ConfigError

ATARI_MODULE = "envpool.atari"
ATARI_KEYS = ("frame_stack", "noop_max", "frame_skip", "screen_size", "scale_obs", "repeat_action_probability")


class EnvPoolBatchEnv(SeedsAtFullReset):
    """``num_envs`` EnvPool envs of ``env_id`` in one pool, as sub-envs of a batch env.

    With ``env_wrapper='default'`` an Atari game gets the preprocessing of ``DingEnvWrapper``'s
    Atari preset from EnvPool's own options: ``noop_max`` no-ops on reset, ``frame_skip`` with
    max-pooling, ``screen_size`` grayscale frames, a stack of ``frame_stack`` frames
    (``uint8 (4, 84, 84)``), FIRE on reset, and when training (``is_train``) episodic life and reward
    clipping; ``eval_episode_return`` is the raw game return. Float observations (MuJoCo) are float32.

    Raises:
        ConfigError: For an unknown config key, or no ``env_id``.
    """

    config: ClassVar[dict] = dict(
        # EnvPool task id ('Pong-v5', 'HalfCheetah-v4', 'CartPole-v1', ...).
        env_id=None,
        num_envs=8,
        # 'default': the family's standard preprocessing (Atari's below); None: EnvPool's defaults.
        env_wrapper="default",
        # Atari: the keys of DingEnvWrapper's Atari preset, with its defaults and meaning, except
        # repeat_action_probability None, which is EnvPool's default (0).
        **{key: DingEnvWrapper.config[key] for key in ATARI_KEYS},
        # EnvPool's worker threads (0: EnvPool picks).
        num_threads=0,
        # More envpool.make_gymnasium keyword arguments; they override the ones above.
        make_kwargs={},
        # EnvPool info keys passed on in BatchStep.info ('lives', 'elapsed_step', ...).
        info_keys=[],
    )

    def __init__(self, cfg: dict | None = None) -> None:
        cfg = dict(cfg or {})
        check_env_keys(cfg, self.config, "EnvPoolBatchEnv config")
        if not cfg.get("env_id"):
            raise ConfigError("EnvPoolBatchEnv needs cfg.env_id (an EnvPool task id such as 'Pong-v5'), got none")
        super().__init__(cfg)
        self._pool: Any = None
        self._reward_space = scalar_reward_space()
        self._spec: Any = None
        self._ended = np.zeros(self._num_envs, dtype=bool)  # EnvPool's own "episode ended" flag
        self._game_returns = np.zeros(self._num_envs, dtype=np.float64)

    # ---- construction --------------------------------------------------

    def _envpool(self) -> Any:
        return import_envpool(repr(self))

    def _make_kwargs(self) -> dict:
        """envpool.make keyword arguments besides num_envs and seed: the preset's, then ``make_kwargs``."""
        cfg, kwargs = self._cfg, {}
        atari_preset = self._cfg.env_wrapper == "default" and self._module() == ATARI_MODULE
        # The preset's keys act through it alone (scale_obs, applied to any task, aside): set otherwise, refused.
        unapplied = [key for key in ATARI_KEYS if key != "scale_obs" and cfg[key] != self.config[key]]
        if unapplied and not atari_preset:
            raise ConfigError(
                f"{self!r}: {', '.join(f'{key}={cfg[key]!r}' for key in unapplied)} act through the Atari preset "
                f"only (env_wrapper='default' on an Atari task), which {cfg.env_id!r} with env_wrapper "
                f"{cfg.env_wrapper!r} does not have: leave them at their defaults, or give EnvPool's own options "
                "in make_kwargs"
            )
        if atari_preset:
            is_train = bool(cfg.get("is_train", True))
            kwargs.update(
                stack_num=cfg.frame_stack,
                noop_max=cfg.noop_max,
                frame_skip=cfg.frame_skip,
                img_height=cfg.screen_size,
                img_width=cfg.screen_size,
                gray_scale=True,
                use_fire_reset=True,
                episodic_life=is_train,
                reward_clip=is_train,
            )
            if cfg.repeat_action_probability is not None:
                kwargs["repeat_action_probability"] = cfg.repeat_action_probability
        elif self._cfg.env_wrapper not in ("default", None):
            raise ConfigError(f"{self!r} env_wrapper: expected 'default' or None, got {self._cfg.env_wrapper!r}")
        if self._cfg.num_threads:
            kwargs["num_threads"] = self._cfg.num_threads
        kwargs.update(self._cfg.make_kwargs or {})
        return kwargs

    def _module(self) -> str:
        return envpool_family(self._envpool(), self._cfg.env_id, repr(self))

    def _spaces(self) -> Any:
        if self._spec is None:
            with _quiet_spaces():  # EnvPool builds its spaces on first access
                spec = self._envpool().make_spec(self._cfg.env_id, num_envs=self._num_envs, **self._make_kwargs())
                obs_space, action_space = convention_space(spec.observation_space), spec.action_space
            if self._cfg.scale_obs:
                obs_space = gym.spaces.Box(0.0, 1.0, obs_space.shape, np.float32)
            self._spec = (obs_space, convention_space(action_space))
            # EnvPool hands out new arrays every call (each owns its buffer): no copy when the dtype is ours.
            self._convert_obs = (
                _scaled if self._cfg.scale_obs else obs_converter(obs_space, copy=False, owner=repr(self))
            )
        return self._spec

    def make_pool(self, seeds: list[int] | None, batch_size: int | None = None) -> Any:
        """A raw EnvPool pool of this batch env's task and settings (not this batch env's own).

        Args:
            seeds: One seed per sub-env (None: fresh entropy, as an unseeded ``BaseEnv``).
            batch_size: The results each ``recv`` waits for, below ``num_envs`` for EnvPool's
                asynchronous mode (None: ``num_envs``, the synchronous mode).
        """
        if seeds is None:
            seeds = derive_seeds(int(np.random.SeedSequence().entropy % (2**31 - self._num_envs)), self._num_envs)
        self._spaces()
        with _quiet_spaces():
            pool = self._envpool().make_gymnasium(
                self._cfg.env_id,
                num_envs=self._num_envs,
                batch_size=batch_size or self._num_envs,
                seed=seeds,
                **self._make_kwargs(),
            )
            pool.observation_space  # noqa: B018 - the pool builds (and keeps) it on first access
        return pool

    def convert_obs(self, obs: np.ndarray) -> Any:
        """Stacked EnvPool observations in this batch env's observation space (float32 floats, scaled frames)."""
        self._spaces()
        return self._convert_obs(obs)

    def _make_pool(self) -> None:
        self._close()
        self._pool = self.make_pool(self.seeds)
        self._seeds_applied()
        self._ended[:] = False

    # ---- BaseBatchEnv --------------------------------------------------

    def _reset(self, env_ids: EnvIds) -> Any:
        ids = np.arange(self._num_envs) if env_ids is None else env_ids
        if self._pool is None or self._seeding_due(ids, every=env_ids is None):
            self._make_pool()
        if len(ids) == 0:
            return self._convert_obs(np.empty((0, *self._spec[0].shape), dtype=self._spec[0].dtype))
        rows = []
        # Sub-envs whose episode ended get EnvPool's own reset (a step, its action ignored): for an
        # Atari game with episodic life it goes on after a lost life; the others are reset outright.
        ended = self._ended[ids]
        for part, after_end in ((ids[ended], True), (ids[~ended], False)):
            if len(part) == 0:
                continue
            if after_end:
                obs, _, _, _, info = self._pool.step(idle_actions(self._pool, len(part)), env_id=part.astype(np.int32))
            else:
                obs, info = self._pool.reset(env_id=part.astype(np.int32))
            order = rows_in_order(info["env_id"], part)
            real_reset = take_rows(info["elapsed_step"], order) == 0
            self._game_returns[part[real_reset]] = 0.0
            rows.append((part, take_rows(obs, order)))
        self._started_episodes(ids)
        self._ended[ids] = False
        return self._convert_obs(merge_rows(rows, ids))

    def _step(self, actions: Any, env_ids: EnvIds) -> BatchStep:
        ids = self._pool.all_env_ids if env_ids is None else env_ids.astype(np.int32)
        actions = np.asarray(actions)
        if isinstance(self._spec[1], gym.spaces.Discrete):
            actions = actions.reshape(len(ids))
        obs, reward, terminated, truncated, info = self._pool.step(actions, env_id=ids)
        order = rows_in_order(info["env_id"], ids)
        obs, reward = self._convert_obs(take_rows(obs, order)), take_rows(reward, order)
        terminated, truncated = take_rows(terminated, order), take_rows(truncated, order)
        raw = take_rows(info["reward"], order) if "reward" in info else reward
        index = slice(None) if env_ids is None else env_ids
        self._game_returns[index] += raw
        done = terminated | truncated
        self._ended[index] = done
        extra = {key: take_rows(info[key], order) for key in self._cfg.info_keys}
        return self._transition(
            env_ids, obs, reward, terminated, truncated, extra, episode_return=self._game_returns[index].copy()
        )

    def _close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __repr__(self) -> str:
        return f"EnvPoolBatchEnv({self._cfg.env_id}, num_envs={self._num_envs})"

    @property
    def observation_space(self) -> gym.spaces.Space:
        """One sub-env's observation space (float32 for floats; ``[0, 1]`` float32 frames with ``scale_obs``)."""
        return self._spaces()[0]

    @property
    def action_space(self) -> gym.spaces.Space:
        """One sub-env's action space (float Boxes as float32)."""
        return self._spaces()[1]

    @property
    def reward_space(self) -> gym.spaces.Space:
        """``Box(-inf, inf, (1,), float32)``."""
        return self._reward_space

    def __getstate__(self) -> dict:
        if self._pool is not None:
            raise TypeError(f"{self!r} cannot be pickled once its pool is made (before its first reset it can)")
        return self.__dict__.copy()


def idle_actions(pool: Any, count: int) -> np.ndarray:
    """``count`` zero actions of ``pool``'s action space: what restarts finished envs (EnvPool ignores them)."""
    space = pool.action_space
    return np.zeros((count, *space.shape), dtype=space.dtype)


def envpool_family(envpool: Any, env_id: str, where: str) -> str:
    """The EnvPool module of ``env_id``'s family ('envpool.atari', 'envpool.mujoco.gym', ...).

    Raises:
        ConfigError: For an id that is not an EnvPool task, naming ``where``.
    """
    specs = envpool.registration.registry.specs
    if env_id not in specs:
        raise ConfigError(f"{where}: env_id {env_id!r} is not an EnvPool task; see envpool.list_all_envs()")
    return specs[env_id][0]


def import_envpool(where: str) -> Any:
    """The ``envpool`` module.

    Raises:
        ImportError: Naming ``where`` and the extra to install, without EnvPool.
    """
    try:
        import envpool
    except ImportError as error:
        raise ImportError(f"{where} needs EnvPool: pip install 'ding-env[envpool]'") from error
    return envpool


def _scaled(obs: np.ndarray) -> np.ndarray:
    """uint8 frames as float32 in [0, 1]."""
    return obs.astype(np.float32) / np.float32(255.0)


@contextlib.contextmanager
def _quiet_spaces() -> Iterator[None]:
    """Hide the warning Gymnasium gives for EnvPool's float64 bounds of float32 Boxes.

    Nothing is lost: the bounds are infinite or float32 values.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*precision lowered by casting to float32", category=UserWarning)
        yield

"""``BaseEnv``: the env contract every manager drives.

Lifecycle::

    env = MyEnv(cfg)          # stores config only: cheap, picklable
    env.seed(0, dynamic_seed=False)
    obs = env.reset()         # builds the simulator on the first call
    timestep = env.step(action)
    env.close()

Seeding is built in. A subclass calls :meth:`_next_episode_seed` at the top of
``reset()`` and passes the result to its simulator (None means "unseeded: do
not re-seed"); randomness of its own comes from :attr:`np_random`.
"""

from __future__ import annotations

import abc
import copy
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from easydict import EasyDict

from ding_env.common.env_element import BaseEnvInfo
from ding_env.config import check_config_dict, deep_merge_dicts
from ding_env.env.legacy_gym_checker import harmless_passive_checker
from ding_env.env.seeding import EpisodeSeeder
from ding_env.env.timestep import BaseEnvTimestep

# DI-engine's code imports BaseEnvTimestep (and, in its older envs, BaseEnvInfo) from ding.envs.env.base_env too.
__all__ = ["BaseEnv", "BaseEnvInfo", "BaseEnvTimestep"]


class BaseEnv(abc.ABC):
    """Abstract base of every ding_env environment.

    Subclasses set a class ``config`` dict of defaults and implement
    ``reset``, ``step``, ``close``, ``__repr__`` and the three space
    properties. ``__init__`` must not build the simulator (lazy init), so an
    env can be constructed cheaply and shipped to a worker process. A ``with``
    block closes the env at its end.
    """

    config: ClassVar[dict] = {}

    def __new__(cls, *args: Any, **kwargs: Any) -> BaseEnv:
        """A new env; legacy gym's passive env checker is made to run on numpy 2 first.

        DI-engine's envs call ``gym.make`` themselves (in ``__init__`` or ``reset``), in the caller
        and in worker processes alike, and gym 0.26's checker fails on numpy 2 (see
        ``legacy_gym_checker``); every env, wherever it is built, passes here.
        """
        harmless_passive_checker()
        return super().__new__(cls)

    def __init__(self, cfg: dict | None = None) -> None:
        """Store the config, merged over :meth:`default_config`.

        Args:
            cfg: User settings; keys the env does not define are kept (env
                configs travel with manager keys such as ``collector_env_num``).

        Raises:
            ConfigError: If ``cfg`` is neither a dict nor None.
        """
        check_config_dict(cfg, f"{type(self).__name__} cfg")
        self._cfg = deep_merge_dicts(self.default_config(), cfg)
        self._init_flag = False

    @classmethod
    def default_config(cls) -> EasyDict:
        """A deep copy of the class ``config`` dict."""
        return EasyDict(copy.deepcopy(cls.config))

    # ---- seeding -------------------------------------------------------

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        """Set the seed used from the next ``reset()`` on.

        Args:
            seed: Base seed (int >= 0).
            dynamic_seed: True (collection): every episode gets a new seed
                drawn reproducibly from ``seed``. False (evaluation): every
                reset replays the episode start of ``seed``.
        """
        self._seeder = EpisodeSeeder(seed, dynamic_seed)
        self._seed = seed
        self._dynamic_seed = dynamic_seed
        self._action_sampler = None  # the next random_action seeds the action space anew

    def _next_episode_seed(self) -> int | None:
        """The seed of the episode being reset, and re-seed :attr:`np_random` with it.

        Returns:
            The episode seed, or None if ``seed()`` was never called (the
            simulator then keeps its own RNG running).
        """
        seeder = self.__dict__.get("_seeder")
        if seeder is None:
            seeder = self._seeder = EpisodeSeeder(None)
        episode_seed = seeder.next_episode_seed()
        if episode_seed is not None:
            # Built on first use: a generator costs ~10 us, and most envs seed their simulator instead.
            self.__dict__.pop("_np_random", None)
            self._np_random_seed = episode_seed
        return episode_seed

    @property
    def np_random(self) -> np.random.Generator:
        """The env's own generator, re-seeded at each seeded episode start."""
        if "_np_random" not in self.__dict__:
            self._np_random = np.random.default_rng(self.__dict__.get("_np_random_seed"))
        return self._np_random

    @np_random.setter
    def np_random(self, generator: np.random.Generator) -> None:
        # DI-engine's envs (and gym's seeding idiom) assign their own: self.np_random, _ = seeding.np_random(seed).
        self._np_random = generator

    # ---- the contract --------------------------------------------------

    @abc.abstractmethod
    def reset(self) -> Any:
        """Start an episode and return its first observation."""

    @abc.abstractmethod
    def step(self, action: Any) -> BaseEnvTimestep:
        """Apply ``action`` and return the resulting timestep."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the simulator. Calling it twice is allowed."""

    @abc.abstractmethod
    def __repr__(self) -> str:
        """A short description naming the env."""

    @property
    @abc.abstractmethod
    def observation_space(self) -> gym.spaces.Space:
        """Space of the observations."""

    @property
    @abc.abstractmethod
    def action_space(self) -> gym.spaces.Space:
        """Space of the actions."""

    @property
    @abc.abstractmethod
    def reward_space(self) -> gym.spaces.Space:
        """Space of the rewards (shape ``(1,)``)."""

    # ---- optional ------------------------------------------------------

    def random_action(self) -> Any:
        """A uniformly random action inside ``action_space``, with its dtype.

        The sampler is seeded from the env's seed, so it is reproducible: it is the action space the
        first call after ``seed()`` finds, seeded then, and stays so while the env's action space is equal
        to it (an ``action_space`` property may build a new space at every access).
        """
        space = self.action_space
        sampler = self.__dict__.get("_action_sampler")
        if sampler is None or (sampler is not space and sampler != space):
            seed = self.__dict__.get("_seed")
            space.seed(None if seed is None else int(seed))
            self._action_sampler = sampler = space
        return sampler.sample()

    def __enter__(self) -> BaseEnv:
        return self

    def __exit__(self, exc_type: type | None, exc: BaseException | None, tb: object) -> None:
        """Close the env, as Gymnasium envs do at the end of a ``with`` block."""
        self.close()

    def enable_save_replay(self, replay_path: str) -> None:
        """Record each episode to a video under ``replay_path``.

        Raises:
            NotImplementedError: For envs that cannot render.
        """
        raise NotImplementedError(f"{type(self).__name__} does not support saving replays")

    @staticmethod
    def create_collector_env_cfg(cfg: dict) -> list[EasyDict]:
        """``cfg.collector_env_num`` independent copies of ``cfg`` with ``is_train=True``."""
        return _per_env_configs(cfg, "collector_env_num", is_train=True)

    @staticmethod
    def create_evaluator_env_cfg(cfg: dict) -> list[EasyDict]:
        """``cfg.evaluator_env_num`` independent copies of ``cfg`` with ``is_train=False``."""
        return _per_env_configs(cfg, "evaluator_env_num", is_train=False)


def _per_env_configs(cfg: dict, count_key: str, is_train: bool) -> list[EasyDict]:
    count = cfg.get(count_key, 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"{count_key} must be an int >= 1, got {count!r}")
    configs = []
    for _ in range(count):
        env_cfg = deep_merge_dicts(cfg, {})
        env_cfg.is_train = is_train
        configs.append(env_cfg)
    return configs

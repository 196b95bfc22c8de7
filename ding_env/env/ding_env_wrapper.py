"""``DingEnvWrapper``: any Gymnasium (or legacy gym) env as a ``BaseEnv``.

Example::

    env = DingEnvWrapper(cfg={'env_id': 'CartPole-v1'})   # created on first reset
    env.seed(0)
    obs = env.reset()
    timestep = env.step(env.random_action())

Outputs follow the ding_env contract: float observations are float32 (and the
observation space says so), the reward is a ``(1,)`` float32 array, ``done`` is
a Python bool, and done steps carry ``info['truncated']`` and
``info['eval_episode_return']``. numpy scalars in the env's info become Python scalars.
A public name the wrapper lacks is the Gymnasium env's (``env.gravity``; see ``gym_attributes``), and
``reset(**options)`` passes its keyword arguments to the env's ``reset(options=...)``.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ding_env.config import MAKE_KWARGS_HINT, check_batch, check_caller, check_config_dict, check_env_keys
from ding_env.env import section_configs, wrapper_clone
from ding_env.env.base_env import BaseEnv
from ding_env.env.gym_attributes import GymAttributes
from ding_env.env.make_by_env_id import make_by_env_id
from ding_env.env.timestep import BaseEnvTimestep, StepFields, as_reward, final_info
from ding_env.env_wrappers.array_spaces import check_array_spaces
from ding_env.env_wrappers.converters import (
    action_converter,
    di_engine_action,
    has_box,
    obs_converter,
    scaled_action_space,
)
from ding_env.env_wrappers.dtypes import convention_space
from ding_env.env_wrappers.env_wrappers import apply_wrappers
from ding_env.env_wrappers.family import family_of_env
from ding_env.env_wrappers.legacy_gym import (
    LegacyGymEnv,
    is_legacy_env,
    legacy_gym_has,
    make_legacy_gym_env,
    replay_make_kwargs,
)
from ding_env.env_wrappers.multi_agent import is_pettingzoo_env
from ding_env.env_wrappers.presets import (
    atari_step_limit,
    check_given_env,
    warn_unused_atari_keys,
    wrapper_specs,
)
from ding_env.env_wrappers.replay import EpisodeVideoWrapper, replay_prefix
from ding_env.env_wrappers.time_limit import TimeLimitWrapper
from ding_env.env_wrappers.wrapper_config import REW_CLIP_FLOOR, WRAPPER_CONFIG, check_wrapper_config
from ding_env.errors import ConfigError, EnvStateError
from ding_env.summary import describe_typed

_CONVERTERS = ("_convert_obs", "_adopt_obs", "_convert_action")  # made with the env; never pickled


class DingEnvWrapper(GymAttributes, BaseEnv):
    """A Gymnasium env behind the ``BaseEnv`` contract.

    Args:
        env: A Gymnasium env instance, or a legacy gym-API env instance. When
            None, ``cfg.env_id`` is created with ``gymnasium.make`` on the
            first reset (lazy init).
        cfg: Settings; ``DingEnvWrapper.config`` holds their defaults (``wrapper_config.WRAPPER_CONFIG`` says
            what each key does).
        seed_api: False for an env that cannot be seeded (DI-engine's argument): its resets get no
            seed, so its episodes do not follow from ``seed()``.
        caller: ``'collector'`` or ``'evaluator'`` (DI-engine's argument): picks the training or the
            evaluation preprocessing when ``cfg`` has no ``is_train``.
        is_gymnasium: Where ``cfg.env_id`` is looked up (DI-engine's argument): True in Gymnasium, False
            in legacy gym (``gym.make``, as DI-engine does by default; gym must be installed), None in
            Gymnasium and then, for an id Gymnasium does not have (or only as a deprecated version), in
            legacy gym when it is installed.

    Raises:
        ConfigError: For a ``cfg`` that is not a dict, an unknown config key or caller, or neither ``env``
            nor ``env_id``.
        TypeError: For a PettingZoo env, which ``PettingZooEnv`` wraps.
    """

    # _step_fields converts a Discrete action given as a Python int to the same numpy scalar as a 0-d array:
    # env hosts hand such envs their stacked actions' tolist() (hosted_env.takes_int_actions).
    _steps_int_actions: ClassVar[bool] = True
    config: ClassVar[dict] = dict(WRAPPER_CONFIG)  # the keys and what each does: see WRAPPER_CONFIG

    def __init__(
        self,
        env: Any = None,
        cfg: dict | None = None,
        seed_api: bool = True,
        caller: str = "collector",
        is_gymnasium: bool | None = None,
    ) -> None:
        if env is not None and is_pettingzoo_env(env):
            raise TypeError(
                f"DingEnvWrapper wraps single-agent Gymnasium envs, and {type(env).__name__} is a PettingZoo "
                "multi-agent env: wrap it with ding_env.PettingZooEnv(env) (observations with agent_state, "
                "global_state and action_mask; one action and one reward per agent)"
            )
        if env is not None and not (callable(getattr(env, "reset", None)) and callable(getattr(env, "step", None))):
            # Checked here: the env is otherwise first used at launch, in a worker, with a less telling error.
            hint = f"; to make it by id, pass cfg=dict(env_id={env!r})" if isinstance(env, str) else ""
            raise TypeError(
                "DingEnvWrapper env: expected a Gymnasium (or gym) env with reset() and step(), or None to make "
                f"one from cfg.env_id, got {describe_typed(env)}{hint}"
            )
        check_config_dict(cfg, "DingEnvWrapper cfg")
        cfg = dict(cfg or {})
        self._user_cfg = dict(cfg)  # for clone(), before the caller's is_train is filled in
        check_env_keys(
            cfg,
            self.config,
            "DingEnvWrapper config",
            f". {MAKE_KWARGS_HINT}",
        )
        check_caller(caller, "DingEnvWrapper")
        if not isinstance(seed_api, bool):
            raise ConfigError(f"DingEnvWrapper seed_api: expected True or False, got {seed_api!r:.100}")
        cfg.setdefault("is_train", caller == "collector")
        if check_batch(cfg, "DingEnvWrapper config") is not None:
            raise ConfigError(
                f"DingEnvWrapper config 'batch'={cfg['batch']} describes a batch env: "
                f"{type(self).__name__}.batch_env(cfg) builds it (get_vec_env_setting does for an env section)"
            )
        super().__init__(cfg)
        named = f"{type(self).__name__}({self._cfg.env_id})" if self._cfg.get("env_id") else type(self).__name__
        check_wrapper_config(self._cfg, named)
        self._seed_api = seed_api
        if is_gymnasium not in (None, True, False):
            raise ConfigError(f"DingEnvWrapper is_gymnasium: expected True, False or None, got {is_gymnasium!r:.100}")
        self._is_gymnasium = is_gymnasium
        if env is None and not self._cfg.env_id:
            raise ConfigError("DingEnvWrapper needs an env instance or cfg.env_id, got neither")
        self._user_env = env
        self._replay_path: str | None = self._cfg.get("replay_path")
        self._env: gym.Env | None = None
        self._observation_space: gym.spaces.Space | None = None
        self._action_space: gym.spaces.Space | None = None
        self._reward_space = gym.spaces.Box(low=-np.inf, high=np.inf, shape=(1,), dtype=np.float32)
        self._eval_episode_return = 0.0
        self._needs_reset = True
        self._closed = False  # close() called since the last reset: what a step in between is told
        self._rew_clip = bool(self._cfg.rew_clip)

    # ---- construction --------------------------------------------------

    @property
    def env(self) -> gym.Env:
        """The wrapped Gymnasium env (created on first use)."""
        if self._env is None:
            self._env = self._build_env()
            check_array_spaces(repr(self), self._env.observation_space)
            check_array_spaces(repr(self), self._env.action_space, "action_space")
            self._observation_space = convention_space(self._env.observation_space)
            raw_actions = self._env.action_space
            unused = [key for key in ("act_scale", "action_clip") if self._cfg[key]]
            if unused and not has_box(raw_actions):  # as the Atari keys off the preset: said
                verb, pronoun = ("applies", "it") if len(unused) == 1 else ("apply", "them")
                warnings.warn(
                    f"{self!r}: {' and '.join(unused)} {verb} to Box actions (and the Box parts of Dict and Tuple "
                    f"ones) only; {raw_actions} ignores {pronoun}",
                    stacklevel=2,
                )
            self._action_space = scaled_action_space(raw_actions) if self._cfg.act_scale else raw_actions
            self._make_converters()
            self._init_flag = True
        return self._env

    def _make_converters(self) -> None:
        # Closures over the spaces: not pickled (__getstate__), made again from the env after unpickling.
        self._convert_obs = obs_converter(self._observation_space, owner=repr(self))
        self._adopt_obs = obs_converter(self._observation_space, copy=False, owner=repr(self))  # _step_fields
        self._convert_action = action_converter(
            self._env.action_space, bool(self._cfg.act_scale), repr(self), bool(self._cfg.action_clip)
        )

    def __getstate__(self) -> dict:
        return {key: value for key, value in self.__dict__.items() if key not in _CONVERTERS}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if self._env is not None:  # a closed env makes its converters when it builds its env again
            self._make_converters()

    def _build_env(self) -> gym.Env:
        agent_step_limit = None  # an Atari make_kwargs time limit, applied outside the preset
        if self._user_env is not None:
            env = self._user_env
            if is_legacy_env(env):
                env = LegacyGymEnv(env)
            family = family_of_env(env)
            check_given_env(env, self._cfg.env_wrapper, family, repr(self))
        elif self._is_gymnasium is False:
            env = self._made_by_legacy_gym()
            family = family_of_env(env)
        else:
            try:
                env, family = self._make_from_id()
                agent_step_limit = atari_step_limit(self._cfg, family)
            except (gym.error.UnregisteredEnv, gym.error.DeprecatedEnv) as error:  # NameNotFound, VersionNotFound
                if self._is_gymnasium is None and legacy_gym_has(self._cfg.env_id):
                    warnings.warn(
                        f"{self!r}: Gymnasium has no env_id {self._cfg.env_id!r} ({str(error)[:200]}); it is made "
                        "with legacy gym, as DI-engine makes it (is_gymnasium=True refuses it instead)",
                        stacklevel=2,
                    )
                    env = self._made_by_legacy_gym()
                    family = family_of_env(env)
                else:
                    raise ConfigError(
                        f"{self!r}: env_id {self._cfg.env_id!r} is not available in Gymnasium: {error}"
                    ) from error
        if self._replay_path is not None:
            env = EpisodeVideoWrapper(env, self._replay_path, replay_prefix(repr(self)))
        warn_unused_atari_keys(self._cfg, type(self).config, family, repr(self))
        env = apply_wrappers(env, wrapper_specs(self._cfg.env_wrapper, family, self._cfg))
        return env if agent_step_limit is None else TimeLimitWrapper(env, agent_step_limit)

    def _made_by_legacy_gym(self) -> LegacyGymEnv:
        # Made to render one frame per call when its episodes are recorded.
        replay = replay_make_kwargs() if self._replay_path is not None else {}
        return LegacyGymEnv(
            make_legacy_gym_env(self._cfg.env_id, {**replay, **(self._cfg.make_kwargs or {})}, repr(self))
        )

    def _make_from_id(self) -> tuple[gym.Env, str]:
        # A hook: a subclass may prepare its id's package first (dizoo's MiniGrid env does).
        return make_by_env_id(self._cfg, self._replay_path is not None, repr(self))

    # How an env section becomes envs of this class: see section_configs.
    batch_env = classmethod(section_configs.batch_env)
    create_collector_env_cfg = staticmethod(section_configs.create_collector_env_cfg)
    create_evaluator_env_cfg = staticmethod(section_configs.create_evaluator_env_cfg)

    def clone(self, caller: str = "collector") -> DingEnvWrapper:
        """A new ``DingEnvWrapper`` with the same settings, for one more env of a manager (DI-engine's).

        An env built from ``cfg.env_id`` is built anew; an env instance given to the constructor
        is deep-copied, so the clones never share a simulator. A subclass built from its config (an env type
        such as ``cartpole``) clones as itself. ``caller`` picks the preprocessing as in the constructor
        (unless the config sets ``is_train``).

        Raises:
            TypeError: When that env instance cannot be deep-copied.
        """
        return wrapper_clone.clone(self, caller)

    def enable_save_replay(self, replay_path: str) -> None:
        """Record every episode from the next reset on as an MP4 under ``replay_path``.

        File names carry the env id, the process id, a random token and the
        episode number, so many envs can record into one folder.
        """
        self._replay_path = str(replay_path)
        if self._env is not None:  # rebuild with rendering on at the next reset
            self._env.close()
            self._env = None
            self._needs_reset = True

    # ---- BaseEnv -------------------------------------------------------

    def reset(self, options: dict | None = None, **more_options: Any) -> Any:
        """Start an episode, seeding the env only when a new seed is due.

        Args:
            options: The Gymnasium env's reset options (``env.reset(options=...)``).
            **more_options: More options, merged into ``options``: a manager's ``reset_param`` for this env
                (``{'low': -0.01}``, say) reaches the Gymnasium env this way.

        Raises:
            TypeError: For a ``seed`` option: seeds are set with ``seed()`` (an option would be ignored).
        """
        if "seed" in more_options:
            raise TypeError(
                f"{self!r}.reset(seed={more_options['seed']!r}): seed with seed() before the reset instead "
                "(env.seed(s), manager.seed(s) or manager.seed({env_id: s}), dynamic_seed=False to replay it); "
                "reset's keyword arguments are the Gymnasium env's reset options, and CartPole-like envs ignore them"
            )
        env = self.env
        kwargs = {}
        episode_seed = self._next_episode_seed()
        if episode_seed is not None and self._seed_api:
            kwargs["seed"] = episode_seed
        if options or more_options:
            kwargs["options"] = {**(options or {}), **more_options}
        obs, _ = env.reset(**kwargs)
        self._eval_episode_return = 0.0
        self._needs_reset = self._closed = False
        return self._convert_obs(obs)

    def step(self, action: Any) -> BaseEnvTimestep:
        """Apply ``action`` (converted to the action space's form) and return the timestep."""
        obs, reward, done, _, info = self._step_fields(action)
        return BaseEnvTimestep(self._convert_obs(obs), as_reward(reward), done, info)  # an array of its own

    def _step_fields(self, action: Any) -> StepFields:
        # The step as plain fields (a float reward): the managers' fast path (see hosted_env.stepper_of).
        # The observation may be the env's own array: a host copies it into its rows at once.
        if self._needs_reset:
            if self._closed:
                raise EnvStateError(f"{self!r}: step() called after close()")
            raise EnvStateError(f"{self!r}: step() called before reset() or after the episode ended")
        # Not self.env: after a reset the env exists, and the property costs on every step.
        obs, reward, terminated, truncated, info = self._env.step(self._convert_action(action))
        reward = float(reward)
        self._eval_episode_return += reward
        if self._rew_clip:
            reward = max(reward, REW_CLIP_FLOOR)
        obs = self._adopt_obs(obs)
        # numpy scalars become Python scalars: same values, ten times cheaper to send between processes.
        if info:
            info = {key: value.item() if isinstance(value, np.generic) else value for key, value in info.items()}
        else:
            info = {}  # never the env's own dict, which it may reuse
        if terminated or truncated:
            self._needs_reset = True
            # An inner EvalEpisodeReturnWrapper reports the raw game return (before clipping, across lives).
            episode_return = info.pop("eval_episode_return", self._eval_episode_return)
            # A terminal state reached at the time limit is a termination: nothing to bootstrap from.
            truncated = bool(truncated) and not terminated
            return (obs, reward, True, truncated, final_info(info, episode_return, truncated))
        return (obs, reward, False, False, info)

    def random_action(self) -> Any:
        """A random action in DI-engine's forms: a ``(1,)`` int64 array for ``Discrete``, arrays in dicts."""
        return di_engine_action(super().random_action())

    def close(self) -> None:
        """Close the Gymnasium env if it was built on (a given env never used is the caller's); safe to call twice."""
        if self._env is not None:
            self._env.close()
            self._env = None
        self._needs_reset = True
        self._closed = True

    def render(self) -> Any:
        """The Gymnasium env's ``render()``: a frame for an env made with ``render_mode='rgb_array'``.

        Raises:
            EnvStateError: When the env was made without a render mode.
        """
        env = self.env
        if env.render_mode is None:
            raise EnvStateError(
                f"{self!r}.render(): the env was made without a render mode; "
                "give cfg make_kwargs=dict(render_mode='rgb_array') (or build the env with it)"
            )
        return env.render()

    def __repr__(self) -> str:
        # A Gymnasium env made by id: named by it, as by a config (the base env's spec: a wrapper's copies it).
        spec = getattr(getattr(self._user_env, "unwrapped", None), "spec", None)
        name = (
            self._cfg.env_id
            or getattr(spec, "id", None)
            or type(getattr(self._user_env, "unwrapped", self._user_env)).__name__
        )
        return f"DingEnvWrapper({name})"

    @property
    def observation_space(self) -> gym.spaces.Space:
        """The env's observation space, in the dtype convention."""
        if self._observation_space is None:  # known once the env was built, also after close()
            self.env  # noqa: B018 - builds the env and its spaces
        return self._observation_space

    @property
    def action_space(self) -> gym.spaces.Space:
        """The env's action space; with ``act_scale`` each Box (also in a Dict or Tuple) is a ``Box(-1, 1)``."""
        if self._action_space is None:  # known once the env was built, also after close()
            self.env  # noqa: B018 - builds the env and its spaces
        return self._action_space

    @property
    def reward_space(self) -> gym.spaces.Space:
        """``Box(-inf, inf, (1,), float32)`` (``Box(-10, inf)`` with ``rew_clip``)."""
        if self._cfg.rew_clip:
            return gym.spaces.Box(low=REW_CLIP_FLOOR, high=np.inf, shape=(1,), dtype=np.float32)
        return self._reward_space

"""Wrapper presets: what ``env_wrapper='default'`` (and the named presets) apply per env family.

* classic control, toy text: nothing beyond ``DingEnvWrapper``'s own dtype conversion;
* Box2D: the same, and for BipedalWalker a new Box2D world per episode, so a seed replays its episode
  (``env_wrappers.box2d``);
* MuJoCo (``'mujoco_default'``): nothing either: float32 observations, ``act_scale`` and
  truncation at the time limit come from ``DingEnvWrapper`` itself;
* Atari (``'atari_default'``): DeepMind's preprocessing (see :func:`atari_default`);
* MiniGrid (``'minigrid_default'``): the image and the one-hot encoded mission as one float32
  vector (``FlatObsWrapper``, DI-engine's ``flat_obs``), since a mission string has no array form;
* Gym-Hybrid (``'gym_hybrid_default'``): its ``Tuple`` action as DI-engine's hybrid ``Dict`` action.

:func:`get_default_wrappers` gives DI-engine's own lists of wrapper specs for code that builds
its wrapper chain itself.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
from easydict import EasyDict

from ding_env.config import check_caller
from ding_env.env_wrappers import family as families
from ding_env.errors import ConfigError

PRESET_NAMES = (
    "default",
    "atari_default",
    "mujoco_default",
    "minigrid_default",
    "gym_hybrid_default",
    "reward_in_obs",
)


def atari_default(cfg: dict) -> list[Callable[[gym.Env], gym.Env]]:
    """DeepMind's Atari preprocessing, on a base env made with ``frameskip=1``.

    In order: the raw game return into ``info`` (innermost, before any clipping);
    Gymnasium's ``AtariPreprocessing`` (``noop_max`` no-ops on reset, max-and-skip
    ``frame_skip``, ``screen_size`` grayscale, optional scaling); episodic life
    (collector only); FIRE on reset when the game has that action; reward
    clipping to the sign (collector only); a stack of ``frame_stack`` frames, so
    observations are channel-first ``uint8`` ``(4, 84, 84)``.
    """
    from ding_env.env_wrappers.atari import EpisodicLifeWrapper, FireResetWrapper, has_fire_action
    from ding_env.env_wrappers.observation import FrameStackWrapper
    from ding_env.env_wrappers.reward import ClipRewardWrapper, EvalEpisodeReturnWrapper

    is_train = bool(cfg.get("is_train", True))

    def preprocess(env: gym.Env) -> gym.Env:
        return gym.wrappers.AtariPreprocessing(
            env,
            noop_max=cfg["noop_max"],
            frame_skip=cfg["frame_skip"],
            screen_size=cfg["screen_size"],
            terminal_on_life_loss=False,
            grayscale_obs=True,
            scale_obs=bool(cfg["scale_obs"]),
        )

    chain: list[Callable[[gym.Env], gym.Env]] = [EvalEpisodeReturnWrapper, preprocess]
    if is_train:
        chain.append(EpisodicLifeWrapper)
    chain.append(lambda env: FireResetWrapper(env) if has_fire_action(env) else env)
    if is_train:
        chain.append(ClipRewardWrapper)
    chain.append(lambda env: FrameStackWrapper(env, cfg["frame_stack"]))
    return chain


def _empty(cfg: dict) -> list:
    return []


def gym_hybrid_default(cfg: dict) -> list[Callable[[gym.Env], gym.Env]]:
    """Gym-Hybrid's ``Tuple(Discrete, Box)`` action as a ``Dict`` of ``type``, ``mask`` and ``args``."""
    from ding_env.env_wrappers.action import GymHybridDictActionWrapper

    return [GymHybridDictActionWrapper]


def minigrid_default(cfg: dict) -> list[Callable[[gym.Env], gym.Env]]:
    """MiniGrid's ``{'image', 'direction', 'mission'}`` as one float32 vector: image, then the encoded mission."""
    from ding_env.env_wrappers.observation import FlatObsWrapper

    return [FlatObsWrapper]


_PRESETS: dict[str, Callable[[dict], list]] = {
    "atari_default": atari_default,
    "mujoco_default": _empty,
    "minigrid_default": minigrid_default,
    "gym_hybrid_default": gym_hybrid_default,
}


def box2d_default(cfg: dict) -> list[Callable[[gym.Env], gym.Env]]:
    """A new Box2D world per episode for BipedalWalker (nothing for the other Box2D envs)."""
    from ding_env.env_wrappers.box2d import fresh_world_for_bipedal_walker

    return [fresh_world_for_bipedal_walker]


_FAMILY_DEFAULTS: dict[str, Callable[[dict], list]] = {
    families.ATARI: atari_default,
    families.BOX2D: box2d_default,
    families.MINIGRID: minigrid_default,
}


def reward_in_obs(family: str, cfg: dict) -> list[Callable[[gym.Env], gym.Env]]:
    """The family's default chain, then observations as ``{'obs': obs, 'reward': last reward}`` (DI-engine's)."""
    from ding_env.env_wrappers.reward_in_obs import RewardInObsWrapper

    return [*_FAMILY_DEFAULTS.get(family, _empty)(cfg), RewardInObsWrapper]


def wrapper_specs(env_wrapper: Any, family: str, cfg: dict) -> Sequence[Any]:
    """The wrapper specs to apply for ``env_wrapper`` on an env of ``family``.

    Raises:
        ConfigError: For an unknown preset name or a value of the wrong kind.
    """
    if env_wrapper is None:
        return []
    if isinstance(env_wrapper, str):
        if env_wrapper == "default":
            return _FAMILY_DEFAULTS.get(family, _empty)(cfg)
        if env_wrapper == "reward_in_obs":
            return reward_in_obs(family, cfg)
        if env_wrapper not in _PRESETS:
            raise ConfigError(f"unknown env_wrapper preset {env_wrapper!r}; presets: {', '.join(PRESET_NAMES)}")
        return _PRESETS[env_wrapper](cfg)
    if isinstance(env_wrapper, (list, tuple)):
        return list(env_wrapper)
    raise ConfigError(f"env_wrapper must be a preset name or a list of wrapper specs, got {env_wrapper!r}")


# The config keys only the Atari preset reads.
ATARI_KEYS = ("frame_stack", "noop_max", "frame_skip", "screen_size", "scale_obs", "repeat_action_probability")


def atari_make_kwargs(cfg: Any, family: str, owner: str) -> dict:
    """``cfg.make_kwargs`` for ``gym.make``, with what the Atari preset needs of its base env.

    Raises:
        ConfigError: For ``'atari_default'`` on an env of another family, or ``make_kwargs`` the preset
            contradicts (``frameskip`` other than 1, RAM observations), naming the key and what to set instead.
    """
    kwargs = dict(cfg.make_kwargs or {})
    if cfg.env_wrapper == "atari_default" and family != families.ATARI:
        raise ConfigError(
            f"{owner}: env_wrapper='atari_default' is the preset of ALE (Atari) envs, and {cfg.env_id!r} is a "
            f"{family} env: use 'default' (its family's preset) or a list of wrappers"
        )
    if not uses_atari_preset(cfg.env_wrapper, family):
        return kwargs
    if kwargs.get("frameskip", 1) != 1:
        raise ConfigError(
            f"{owner}: make_kwargs frameskip={kwargs['frameskip']!r}, and the Atari preset skips frames itself: "
            f"set frame_skip (now {cfg.frame_skip}) instead, or env_wrapper=[] for the env's own frame skipping"
        )
    if kwargs.get("obs_type") == "ram":
        raise ConfigError(
            f"{owner}: make_kwargs obs_type='ram', and the Atari preset works on screen frames: give "
            "env_wrapper=['ram'] for RAM observations (the console's 128 bytes) instead"
        )
    kwargs["frameskip"] = 1
    kwargs.pop("max_episode_steps", None)  # frames, with frameskip=1: atari_step_limit applies it in agent steps
    if cfg.repeat_action_probability is not None:
        kwargs.setdefault("repeat_action_probability", cfg.repeat_action_probability)
    return kwargs


def atari_step_limit(cfg: Any, family: str) -> int | None:
    """``make_kwargs['max_episode_steps']`` of an env under the Atari preset, to count in agent steps.

    The preset makes its base env with ``frameskip=1``, so ``gym.make``'s time limit would count raw frames
    (reset no-ops included) and end episodes several times early. ``DingEnvWrapper`` applies it outside
    the preset instead, counting the agent's steps as Gymnasium's ``ALE/...-v5`` ids do.
    """
    if not uses_atari_preset(cfg.env_wrapper, family):
        return None
    return (cfg.make_kwargs or {}).get("max_episode_steps")


def warn_unused_atari_keys(cfg: Any, defaults: dict, family: str, owner: str) -> None:
    """Warn about Atari keys set away from their defaults on an env that does not use the Atari preset."""
    if uses_atari_preset(cfg.env_wrapper, family):
        return
    changed = [key for key in ATARI_KEYS if cfg.get(key) != defaults.get(key)]
    if changed:
        warnings.warn(
            f"{owner}: {', '.join(f'{key}={cfg[key]!r}' for key in changed)} "
            f"{'takes' if len(changed) == 1 else 'take'} effect only with the Atari "
            "preset (env_wrapper='default' on an ALE env, or 'atari_default'), which this env does not use",
            stacklevel=4,
        )


def uses_atari_preset(env_wrapper: Any, family: str) -> bool:
    """True when the Atari preset will be applied (its base env needs ``frameskip=1``)."""
    if env_wrapper == "atari_default":
        return True
    return env_wrapper in ("default", "reward_in_obs") and family == families.ATARI  # both build on it there


def check_given_env(env: gym.Env, env_wrapper: Any, family: str, owner: str) -> None:
    """Refuse an env given to ``DingEnvWrapper`` that its family's preset cannot take.

    The Atari preset skips frames and preprocesses the game's screen itself; MiniGrid's flattens a
    ``Dict`` observation of ``image`` and ``mission``. An env that does either already (an env wrapped
    before it was given) failed deep inside the preset's wrappers.

    Raises:
        ConfigError: Naming what the given env does, and what to give or set instead.
    """
    if uses_atari_preset(env_wrapper, family):
        frameskip = getattr(env.unwrapped, "_frameskip", 1)
        if frameskip != 1:
            raise ConfigError(
                f"{owner}: the Atari preset skips frames itself, and the given env skips {frameskip}: make "
                "it with frameskip=1, give cfg env_id instead of an env (the wrapper then makes it so), or "
                "set env_wrapper=[] for no preprocessing"
            )
        ale = getattr(env.unwrapped, "ale", None)
        screen = tuple(ale.getScreenDims()) if ale is not None else None
        if screen is not None and env.observation_space.shape not in (screen, (*screen, 3)):
            raise ConfigError(
                f"{owner}: the Atari preset preprocesses the game's {screen[0]}x{screen[1]} screen, and the given "
                f"env's observations are {env.observation_space} (preprocessed already, or RAM): give the raw env, "
                "or set env_wrapper=['ram'] (RAM observations) or [] (no preset)"
            )
    uses_minigrid_preset = env_wrapper == "minigrid_default" or (
        env_wrapper in ("default", "reward_in_obs") and family == families.MINIGRID
    )
    space = env.observation_space
    if uses_minigrid_preset and not (isinstance(space, gym.spaces.Dict) and {"image", "mission"} <= set(space.spaces)):
        raise ConfigError(
            f"{owner}: the MiniGrid preset flattens a Dict observation of 'image' and 'mission', and the given "
            f"env's observations are {space} (flattened already?): give the raw env, or set env_wrapper=[] to apply "
            "no preset"
        )


# Atari games that DI-engine's list presses FIRE in on reset.
_FIRE_RESET_GAMES = ("Pong", "Qbert", "SpaceInvader", "Montezuma")


def get_default_wrappers(env_wrapper_name: str, env_id: str | None = None, caller: str = "collector") -> list[EasyDict]:
    """DI-engine's wrapper list for a preset, as ``dict(type=..., kwargs=...)`` specs of ``ENV_WRAPPER_REGISTRY``.

    For code that builds its own chain with ``create_env_wrapper``; ``DingEnvWrapper``'s
    ``env_wrapper`` presets are this module's (Atari's takes Gymnasium's ``AtariPreprocessing``
    and keeps the raw game return innermost).

    Args:
        env_wrapper_name: 'default', 'mujoco_default', 'atari_default' or 'gym_hybrid_default'.
        env_id: The env id; Atari games that need FIRE on reset get ``fire_reset``.
        caller: 'collector' or 'evaluator' (the evaluator's Atari list does not clip rewards).

    Raises:
        ConfigError: For another name or caller.
    """
    check_caller(caller, "get_default_wrappers")
    if env_wrapper_name in ("default", "mujoco_default"):
        return [EasyDict(type="eval_episode_return")]
    if env_wrapper_name == "gym_hybrid_default":
        return [EasyDict(type="gym_hybrid_dict_action"), EasyDict(type="eval_episode_return")]
    if env_wrapper_name != "atari_default":
        names = "'default', 'mujoco_default', 'atari_default', 'gym_hybrid_default'"
        raise ConfigError(f"get_default_wrappers: env_wrapper_name must be one of {names}, got {env_wrapper_name!r}")
    specs = [
        EasyDict(type="noop_reset", kwargs=dict(noop_max=30)),
        EasyDict(type="max_and_skip", kwargs=dict(skip=4)),
        EasyDict(type="episodic_life"),
    ]
    if env_id is not None and any(game in env_id for game in _FIRE_RESET_GAMES):
        specs.append(EasyDict(type="fire_reset"))
    specs += [EasyDict(type="warp_frame"), EasyDict(type="scaled_float_frame")]
    if caller == "collector":
        specs.append(EasyDict(type="clip_reward"))
    specs += [EasyDict(type="frame_stack", kwargs=dict(n_frames=4)), EasyDict(type="eval_episode_return")]
    return specs

"""Wrapper presets: what ``env_wrapper='default'`` (and the named presets) apply per env family.

* classic control, Box2D, toy text: nothing beyond ``DingEnvWrapper``'s own dtype conversion;
* MuJoCo (``'mujoco_default'``): nothing either: float32 observations, ``act_scale`` and
  truncation at the time limit come from ``DingEnvWrapper`` itself;
* Atari (``'atari_default'``): DeepMind's preprocessing (see :func:`atari_default`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

from ding_env.errors import ConfigError
from ding_env.wrappers import family as families

PRESET_NAMES = ("default", "atari_default", "mujoco_default")


def atari_default(cfg: dict) -> list[Callable[[gym.Env], gym.Env]]:
    """DeepMind's Atari preprocessing, on a base env made with ``frameskip=1``.

    In order: the raw game return into ``info`` (innermost, before any clipping);
    Gymnasium's ``AtariPreprocessing`` (``noop_max`` no-ops on reset, max-and-skip
    ``frame_skip``, ``screen_size`` grayscale, optional scaling); episodic life
    (collector only); FIRE on reset when the game has that action; reward
    clipping to the sign (collector only); a stack of ``frame_stack`` frames, so
    observations are channel-first ``uint8`` ``(4, 84, 84)``.
    """
    from ding_env.wrappers.atari import EpisodicLifeWrapper, FireResetWrapper, has_fire_action
    from ding_env.wrappers.observation import FrameStackWrapper
    from ding_env.wrappers.reward import ClipRewardWrapper, EvalEpisodeReturnWrapper

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


_PRESETS: dict[str, Callable[[dict], list]] = {
    "atari_default": atari_default,
    "mujoco_default": _empty,
}
_FAMILY_DEFAULTS: dict[str, Callable[[dict], list]] = {families.ATARI: atari_default}


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
        if env_wrapper not in _PRESETS:
            raise ConfigError(f"unknown env_wrapper preset {env_wrapper!r}; presets: {', '.join(PRESET_NAMES)}")
        return _PRESETS[env_wrapper](cfg)
    if isinstance(env_wrapper, (list, tuple)):
        return list(env_wrapper)
    raise ConfigError(f"env_wrapper must be a preset name or a list of wrapper specs, got {env_wrapper!r}")


def uses_atari_preset(env_wrapper: Any, family: str) -> bool:
    """True when the Atari preset will be applied (its base env needs ``frameskip=1``)."""
    return env_wrapper == "atari_default" or (env_wrapper == "default" and family == families.ATARI)

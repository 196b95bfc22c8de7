"""``WRAPPER_REGISTRY``: Gymnasium wrappers that configs can name.

A wrapper spec in ``env_wrapper`` is one of:

* a callable ``env -> wrapped_env`` (e.g. ``lambda env: TimeLimit(env, 100)``);
* a registered name (``'flatten_observation'``);
* ``dict(name='time_limit', kwargs=dict(max_episode_steps=100))``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

from ding_env.config import unknown_key_message
from ding_env.errors import ConfigError
from ding_env.registry import Registry

WRAPPER_REGISTRY = Registry("wrapper")
for _name, _path in {
    "time_limit": "gymnasium.wrappers:TimeLimit",
    "clip_reward": "gymnasium.wrappers:ClipReward",
    "clip_action": "gymnasium.wrappers:ClipAction",
    "rescale_action": "gymnasium.wrappers:RescaleAction",
    "flatten_observation": "gymnasium.wrappers:FlattenObservation",
    "normalize_observation": "gymnasium.wrappers:NormalizeObservation",
    "normalize_reward": "gymnasium.wrappers:NormalizeReward",
    "frame_stack": "gymnasium.wrappers:FrameStackObservation",
    "grayscale": "gymnasium.wrappers:GrayscaleObservation",
    "resize": "gymnasium.wrappers:ResizeObservation",
    # DI-engine's names (ding_env.wrappers.*) and ALF's / TF-Agents' additions.
    "noop_reset": "ding_env.wrappers.atari:NoopResetWrapper",
    "max_and_skip": "ding_env.wrappers.atari:MaxAndSkipWrapper",
    "warp_frame": "ding_env.wrappers.atari:WarpFrameWrapper",
    "ram": "ding_env.wrappers.atari:RamWrapper",
    "episodic_life": "ding_env.wrappers.atari:EpisodicLifeWrapper",
    "fire_reset": "ding_env.wrappers.atari:FireResetWrapper",
    "scaled_float_frame": "ding_env.wrappers.observation:ScaledFloatFrameWrapper",
    "frame_stack_wrapper": "ding_env.wrappers.observation:FrameStackWrapper",
    "obs_transpose": "ding_env.wrappers.observation:ObsTransposeWrapper",
    "obs_norm": "ding_env.wrappers.observation:ObsNormWrapper",
    "observation_clip": "ding_env.wrappers.observation:ObservationClipWrapper",
    "clip_reward_sign": "ding_env.wrappers.reward:ClipRewardWrapper",
    "reward_norm": "ding_env.wrappers.reward:RewardNormWrapper",
    "sparse_reward": "ding_env.wrappers.reward:SparseRewardWrapper",
    "eval_episode_return": "ding_env.wrappers.reward:EvalEpisodeReturnWrapper",
    "action_repeat": "ding_env.wrappers.action:ActionRepeatWrapper",
    "action_discretize": "ding_env.wrappers.action:ActionDiscretizeWrapper",
    "time_limit_wrapper": "ding_env.wrappers.time_limit:TimeLimitWrapper",
}.items():
    WRAPPER_REGISTRY.register(_name, _path)

_SPEC_KEYS = ("name", "kwargs")


def resolve_wrapper(spec: Any) -> Callable[[gym.Env], gym.Env]:
    """Turn one wrapper spec into a callable ``env -> wrapped_env``.

    Raises:
        ConfigError: For a spec of an unknown form, an unknown key or an unknown name.
    """
    if isinstance(spec, str):
        name, kwargs = spec, {}
    elif isinstance(spec, dict):
        for key in spec:
            if key not in _SPEC_KEYS:
                raise ConfigError(unknown_key_message("an env_wrapper spec", key, _SPEC_KEYS))
        if "name" not in spec:
            raise ConfigError(f"env_wrapper spec {spec!r} has no 'name'")
        name, kwargs = spec["name"], dict(spec.get("kwargs") or {})
    elif callable(spec):
        return spec
    else:
        raise ConfigError(
            f"env_wrapper entries must be a callable, a wrapper name or dict(name=..., kwargs=...); got {spec!r}"
        )
    if name not in WRAPPER_REGISTRY:
        raise ConfigError(f"unknown wrapper {name!r}; registered wrappers: {', '.join(WRAPPER_REGISTRY.names())}")
    wrapper_cls = WRAPPER_REGISTRY.get(name)

    def apply(env: gym.Env) -> gym.Env:
        try:
            return wrapper_cls(env, **kwargs)
        except TypeError as error:
            raise ConfigError(f"wrapper {name!r} rejected kwargs {kwargs!r}: {error}") from error

    return apply


def apply_wrappers(env: gym.Env, specs: Sequence[Any]) -> gym.Env:
    """Apply each spec in order (the first wraps innermost)."""
    for spec in specs:
        env = resolve_wrapper(spec)(env)
    return env

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

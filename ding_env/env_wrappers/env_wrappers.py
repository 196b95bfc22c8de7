"""``WRAPPER_REGISTRY``: Gymnasium wrappers that configs can name; ``ENV_WRAPPER_REGISTRY``: DI-engine's names.

A wrapper spec in ``env_wrapper`` is one of:

* a callable ``env -> wrapped_env`` (e.g. ``lambda env: TimeLimit(env, 100)``);
* a name in ``WRAPPER_REGISTRY`` (``'flatten_observation'``);
* ``dict(name='time_limit', kwargs=dict(max_episode_steps=100))``, a name in ``WRAPPER_REGISTRY``;
* DI-engine's form ``dict(type='clip_reward', kwargs=..., import_names=[...])``, a name in
  ``ENV_WRAPPER_REGISTRY`` (after importing the modules of ``import_names``, which may register more).

The two registries differ where DI-engine's names do: its ``clip_reward`` clips to the sign
(ours is Gymnasium's ``ClipReward``), its ``frame_stack`` is ``FrameStackWrapper(n_frames)``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

from ding_env.config import unknown_key_message
from ding_env.env_wrappers.legacy_gym import LegacyGymEnv, is_legacy_env

# DI-engine's code imports AllinObsWrapper from this module (ding.envs.env_wrappers.env_wrappers).
from ding_env.env_wrappers.reward_in_obs import AllinObsWrapper  # noqa: F401
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
    # DI-engine's names (ding_env.env_wrappers.*) and ALF's / TF-Agents' additions.
    "noop_reset": "ding_env.env_wrappers.atari:NoopResetWrapper",
    "max_and_skip": "ding_env.env_wrappers.atari:MaxAndSkipWrapper",
    "warp_frame": "ding_env.env_wrappers.atari:WarpFrameWrapper",
    "ram": "ding_env.env_wrappers.atari:RamWrapper",
    "episodic_life": "ding_env.env_wrappers.atari:EpisodicLifeWrapper",
    "fire_reset": "ding_env.env_wrappers.atari:FireResetWrapper",
    "scaled_float_frame": "ding_env.env_wrappers.observation:ScaledFloatFrameWrapper",
    "frame_stack_wrapper": "ding_env.env_wrappers.observation:FrameStackWrapper",
    "obs_transpose": "ding_env.env_wrappers.observation:ObsTransposeWrapper",
    "obs_norm": "ding_env.env_wrappers.observation:ObsNormWrapper",
    "observation_clip": "ding_env.env_wrappers.observation:ObservationClipWrapper",
    "clip_reward_sign": "ding_env.env_wrappers.reward:ClipRewardWrapper",
    "reward_norm": "ding_env.env_wrappers.reward:RewardNormWrapper",
    "sparse_reward": "ding_env.env_wrappers.reward:SparseRewardWrapper",
    "eval_episode_return": "ding_env.env_wrappers.reward:EvalEpisodeReturnWrapper",
    "action_repeat": "ding_env.env_wrappers.action:ActionRepeatWrapper",
    "action_discretize": "ding_env.env_wrappers.action:ActionDiscretizeWrapper",
    "time_limit_wrapper": "ding_env.env_wrappers.time_limit:TimeLimitWrapper",
    "delay_reward": "ding_env.env_wrappers.reward:DelayRewardWrapper",
    "static_obs_norm": "ding_env.env_wrappers.observation:StaticObsNormWrapper",
    "flat_obs": "ding_env.env_wrappers.observation:FlatObsWrapper",
    "gym_hybrid_dict_action": "ding_env.env_wrappers.action:GymHybridDictActionWrapper",
    "obs_plus_prev_action_reward": "ding_env.env_wrappers.observation:ObsPlusPrevActRewWrapper",
}.items():
    WRAPPER_REGISTRY.register(_name, _path)

# DI-engine's ENV_WRAPPER_REGISTRY, by its names (its 'reward_in_obs', AllinObsWrapper, wraps a BaseEnv, not a
# Gymnasium env, so it is not here: see ding_env.env_wrappers.reward_in_obs).
ENV_WRAPPER_REGISTRY = Registry("DI-engine wrapper")
for _name in (
    "noop_reset",
    "max_and_skip",
    "warp_frame",
    "scaled_float_frame",
    "action_repeat",
    "delay_reward",
    "eval_episode_return",
    "obs_transpose",
    "obs_norm",
    "static_obs_norm",
    "reward_norm",
    "ram",
    "episodic_life",
    "fire_reset",
    "gym_hybrid_dict_action",
    "obs_plus_prev_action_reward",
):
    ENV_WRAPPER_REGISTRY.register(_name, WRAPPER_REGISTRY.source(_name))
# Where DI-engine's names mean other wrappers than ours.
ENV_WRAPPER_REGISTRY.register("clip_reward", WRAPPER_REGISTRY.source("clip_reward_sign"))
ENV_WRAPPER_REGISTRY.register("frame_stack", WRAPPER_REGISTRY.source("frame_stack_wrapper"))

_SPEC_KEYS = ("name", "kwargs")
_DI_ENGINE_SPEC_KEYS = ("type", "kwargs", "import_names")


def resolve_wrapper(spec: Any) -> Callable[[gym.Env], gym.Env]:
    """Turn one wrapper spec into a callable ``env -> wrapped_env``.

    Raises:
        ConfigError: For a spec of an unknown form, an unknown key or an unknown name.
    """
    registry = WRAPPER_REGISTRY
    if isinstance(spec, str):
        name, kwargs = spec, {}
    elif isinstance(spec, dict) and "type" in spec:  # DI-engine's form
        _check_keys(spec, _DI_ENGINE_SPEC_KEYS)
        for module in _as_list(spec.get("import_names")):
            try:
                importlib.import_module(module)
            except ImportError as error:
                raise ConfigError(
                    f"cannot import {module!r} listed in the env_wrapper spec's import_names: {error}"
                ) from error
        registry, name, kwargs = ENV_WRAPPER_REGISTRY, spec["type"], dict(spec.get("kwargs") or {})
    elif isinstance(spec, dict):
        _check_keys(spec, _SPEC_KEYS)
        if "name" not in spec:
            raise ConfigError(f"env_wrapper spec {spec!r} has no 'name' (nor DI-engine's 'type')")
        name, kwargs = spec["name"], dict(spec.get("kwargs") or {})
    elif callable(spec):
        return spec
    else:
        raise ConfigError(
            f"env_wrapper entries must be a callable, a wrapper name or dict(name=..., kwargs=...); got {spec!r}"
        )
    if name not in registry:
        known = ", ".join(registry.names())
        raise ConfigError(f"unknown {registry.kind} {name!r}; registered {registry.kind}s: {known}")
    wrapper_cls = registry.get(name)

    def apply(env: gym.Env) -> gym.Env:
        try:
            return wrapper_cls(env, **kwargs)
        except TypeError as error:
            raise ConfigError(f"wrapper {name!r} rejected kwargs {kwargs!r}: {error}") from error

    return apply


def apply_wrappers(env: gym.Env, specs: Sequence[Any]) -> gym.Env:
    """Apply each spec in order (the first wraps innermost).

    A wrapper that presents the legacy gym API (DI-engine's ``GymToGymnasiumWrapper``, say) is
    turned back into a Gymnasium env, so the next wrapper and ``DingEnvWrapper`` can step it.
    """
    for spec in specs:
        env = resolve_wrapper(spec)(env)
        if is_legacy_env(env):
            env = LegacyGymEnv(env)
    return env


def create_env_wrapper(env: gym.Env, env_wrapper_cfg: dict) -> gym.Env:
    """DI-engine's ``create_env_wrapper``: wrap ``env`` as ``dict(type=..., kwargs=..., import_names=...)`` says.

    Raises:
        ConfigError: For an unknown key or wrapper name, or kwargs the wrapper rejects.
    """
    if not isinstance(env_wrapper_cfg, dict) or "type" not in env_wrapper_cfg:
        raise ConfigError(f"create_env_wrapper needs dict(type=..., kwargs=...), got {env_wrapper_cfg!r}")
    return resolve_wrapper(env_wrapper_cfg)(env)


def _check_keys(spec: dict, valid: tuple[str, ...]) -> None:
    for key in spec:
        if key not in valid:
            raise ConfigError(unknown_key_message("an env_wrapper spec", key, valid))


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)

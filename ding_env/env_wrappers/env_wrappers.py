"""``ENV_WRAPPER_REGISTRY``: every wrapper a config can name, and how wrapper specs resolve.

This is DI-engine's ``ding.envs.env_wrappers.env_wrappers``: its registry and ``create_env_wrapper``
(and ``AllinObsWrapper``, which DI-engine's code imports from here). A name means what it means
in DI-engine wherever DI-engine registers it (``clip_reward`` clips to the reward's sign,
``frame_stack`` is ``FrameStackWrapper``);
Gymnasium's wrappers of those kinds are ``clip_reward_range`` and ``frame_stack_observation``.

A wrapper spec in ``env_wrapper`` is one of:

* a callable ``env -> wrapped_env`` (e.g. ``lambda env: TimeLimit(env, 100)``);
* a registered name (``'flatten_observation'``);
* ``dict(name='time_limit', kwargs=dict(max_episode_steps=100))``;
* DI-engine's form ``dict(type='clip_reward', kwargs=..., import_names=[...])`` (after importing
  the modules of ``import_names``, which may register more).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

from ding_env.config import unknown_key_message
from ding_env.env_wrappers.legacy_gym import LegacyGymEnv, is_legacy_env

# DI-engine's code imports AllinObsWrapper from this module. It wraps a BaseEnv, not a Gymnasium
# env, so it is not registered: env_wrapper='reward_in_obs' (a preset) applies it.
from ding_env.env_wrappers.reward_in_obs import AllinObsWrapper  # noqa: F401
from ding_env.errors import ConfigError
from ding_env.registry import Registry

# Entries are import paths, resolved on first use.
ENV_WRAPPER_REGISTRY = Registry("wrapper")
for _name, _path in {
    # DI-engine's names, with DI-engine's meanings.
    "noop_reset": "ding_env.env_wrappers.atari:NoopResetWrapper",
    "max_and_skip": "ding_env.env_wrappers.atari:MaxAndSkipWrapper",
    "warp_frame": "ding_env.env_wrappers.atari:WarpFrameWrapper",
    "scaled_float_frame": "ding_env.env_wrappers.observation:ScaledFloatFrameWrapper",
    "clip_reward": "ding_env.env_wrappers.reward:ClipRewardWrapper",
    "action_repeat": "ding_env.env_wrappers.action:ActionRepeatWrapper",
    "delay_reward": "ding_env.env_wrappers.reward:DelayRewardWrapper",
    "eval_episode_return": "ding_env.env_wrappers.reward:EvalEpisodeReturnWrapper",
    "frame_stack": "ding_env.env_wrappers.observation:FrameStackWrapper",
    "obs_transpose": "ding_env.env_wrappers.observation:ObsTransposeWrapper",
    "obs_norm": "ding_env.env_wrappers.observation:ObsNormWrapper",
    "static_obs_norm": "ding_env.env_wrappers.observation:StaticObsNormWrapper",
    "reward_norm": "ding_env.env_wrappers.reward:RewardNormWrapper",
    "ram": "ding_env.env_wrappers.atari:RamWrapper",
    "episodic_life": "ding_env.env_wrappers.atari:EpisodicLifeWrapper",
    "fire_reset": "ding_env.env_wrappers.atari:FireResetWrapper",
    "gym_hybrid_dict_action": "ding_env.env_wrappers.action:GymHybridDictActionWrapper",
    "obs_plus_prev_action_reward": "ding_env.env_wrappers.observation:ObsPlusPrevActRewWrapper",
    # ding-env's wrappers that DI-engine does not register, and ALF's / TF-Agents' additions.
    "observation_clip": "ding_env.env_wrappers.observation:ObservationClipWrapper",
    "sparse_reward": "ding_env.env_wrappers.reward:SparseRewardWrapper",
    "action_discretize": "ding_env.env_wrappers.action:ActionDiscretizeWrapper",
    "time_limit_wrapper": "ding_env.env_wrappers.time_limit:TimeLimitWrapper",
    "flat_obs": "ding_env.env_wrappers.observation:FlatObsWrapper",
    # Gymnasium's wrappers.
    "time_limit": "gymnasium.wrappers:TimeLimit",
    "clip_reward_range": "gymnasium.wrappers:ClipReward",
    "clip_action": "gymnasium.wrappers:ClipAction",
    "rescale_action": "gymnasium.wrappers:RescaleAction",
    "flatten_observation": "gymnasium.wrappers:FlattenObservation",
    "normalize_observation": "gymnasium.wrappers:NormalizeObservation",
    "normalize_reward": "gymnasium.wrappers:NormalizeReward",
    "frame_stack_observation": "gymnasium.wrappers:FrameStackObservation",
    "grayscale": "gymnasium.wrappers:GrayscaleObservation",
    "resize": "gymnasium.wrappers:ResizeObservation",
}.items():
    ENV_WRAPPER_REGISTRY.register(_name, _path)

_SPEC_KEYS = ("name", "kwargs")
_DI_ENGINE_SPEC_KEYS = ("type", "kwargs", "import_names")


def resolve_wrapper(spec: Any) -> Callable[[gym.Env], gym.Env]:
    """Turn one wrapper spec into a callable ``env -> wrapped_env``.

    Raises:
        ConfigError: For a spec of an unknown form, an unknown key or an unknown name.
    """
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
        name, kwargs = spec["type"], dict(spec.get("kwargs") or {})
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
    if name not in ENV_WRAPPER_REGISTRY:
        known = ", ".join(ENV_WRAPPER_REGISTRY.names())
        raise ConfigError(f"unknown wrapper {name!r}; registered wrappers: {known}")
    wrapper_cls = ENV_WRAPPER_REGISTRY.get(name)

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

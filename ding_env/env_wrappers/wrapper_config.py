"""``DingEnvWrapper``'s own config keys: their defaults, and the checks run when a wrapper is built."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from ding_env.env_wrappers.presets import PRESET_NAMES
from ding_env.errors import ConfigError

# rew_clip's floor: DI-engine's DingEnvWrapper and its Box2D envs take max(-10, reward).
REW_CLIP_FLOOR = -10.0

# DingEnvWrapper.config: each key's default, and what it does.
WRAPPER_CONFIG: dict[str, Any] = dict(
    # Gymnasium id passed to gymnasium.make when no env instance is given.
    env_id=None,
    # Extra kwargs for gymnasium.make (e.g. render_mode, max_episode_steps).
    make_kwargs={},
    # 'default': the env family's standard preprocessing; or a list of
    # wrapper specs (callables, registered names, dict(name=, kwargs=)).
    env_wrapper="default",
    # Box actions are given in [-1, 1] (and action_space says so) and mapped
    # linearly to the env's bounds.
    act_scale=False,
    # Box actions outside [-1, 1] (with act_scale) or the bounds are clipped into them (DI-engine's MuJoCo
    # action_clip); the managers reject such actions before any env sees them.
    action_clip=False,
    # Floor the reward seen by the learner at REW_CLIP_FLOOR, as DI-engine's rew_clip does (BipedalWalker's
    # fall of -100 becomes -10); the eval_episode_return still sums the raw rewards.
    rew_clip=False,
    # Atari preset ('default' on an ALE env, or 'atari_default'):
    # frames stacked into one observation,
    frame_stack=4,
    # at most this many no-ops on reset,
    noop_max=30,
    # actions repeated (and the last two frames max-pooled) this many times,
    frame_skip=4,
    # frames resized to screen_size x screen_size grayscale,
    screen_size=84,
    # uint8 frames (False) or float32 in [0, 1] (True),
    scale_obs=False,
    # and sticky actions with this probability (None: the env id's own, 0.25 for ALE/...-v5 ids,
    # 0 for the legacy ...NoFrameskip-v4 ones).
    repeat_action_probability=None,
    # Sub-envs per batch env: the config then describes a batch env (DingEnvWrapper.batch_env builds it,
    # get_vec_env_setting does so for an env section); None: one env.
    batch=None,
    # What steps a batch env: 'gym_vector' (a Gymnasium vector env of env_id) or 'envpool' (env_id an
    # EnvPool task id, such as 'Pong-v5').
    batch_source="gym_vector",
)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _int_at_least(low: int) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, int) and not isinstance(value, bool) and value >= low


def _is_probability(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1)


# key -> (test, what the key expects). Booleans take only True/False: the string 'no' is true in Python.
WRAPPER_KEY_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "env_id": (lambda value: value is None or (isinstance(value, str) and bool(value)), "a Gymnasium env id (str)"),
    "make_kwargs": (lambda value: value is None or isinstance(value, Mapping), "a dict of gymnasium.make kwargs"),
    "env_wrapper": (
        lambda value: value in PRESET_NAMES or isinstance(value, (list, tuple)),
        f"a preset name ({', '.join(map(repr, PRESET_NAMES))}) or a list of wrapper specs",
    ),
    "act_scale": (_is_bool, "True or False"),
    "action_clip": (_is_bool, "True or False"),
    "rew_clip": (_is_bool, "True or False"),
    "scale_obs": (_is_bool, "True or False"),
    "is_train": (_is_bool, "True or False"),
    "frame_stack": (_int_at_least(1), "an int >= 1"),
    "noop_max": (_int_at_least(0), "an int >= 0"),
    "frame_skip": (_int_at_least(1), "an int >= 1"),
    "screen_size": (_int_at_least(1), "an int >= 1"),
    "repeat_action_probability": (_is_probability, "None or a probability in [0, 1]"),
    "replay_path": (lambda value: value is None or isinstance(value, (str, os.PathLike)), "None or a folder path"),
}


def check_wrapper_config(cfg: Mapping, owner: str) -> None:
    """Check the keys of ``cfg`` that ``WRAPPER_KEY_CHECKS`` knows (subclasses' own keys are theirs).

    Raises:
        ConfigError: Naming the key, what was expected and what arrived.
    """
    for key, (is_valid, expected) in WRAPPER_KEY_CHECKS.items():
        if key in cfg and not is_valid(cfg[key]):
            raise ConfigError(f"{owner} config {key!r}: expected {expected}, got {cfg[key]!r:.100}")

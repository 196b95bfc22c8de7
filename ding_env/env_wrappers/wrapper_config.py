"""Checks of ``DingEnvWrapper``'s own config keys, run when the wrapper is built (not at its first reset)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from ding_env.errors import ConfigError


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
        lambda value: isinstance(value, (str, list, tuple)),
        "'default', a preset name or a list of wrapper specs",
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

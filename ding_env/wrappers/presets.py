"""Wrapper presets: what ``env_wrapper='default'`` (and named presets) apply per family.

Classic control and Box2D need nothing beyond ``DingEnvWrapper``'s own dtype
conversion, so their default chain is empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ding_env.errors import ConfigError
from ding_env.wrappers import family as families

_FAMILY_DEFAULTS: dict[str, list] = {
    families.CLASSIC_CONTROL: [],
    families.BOX2D: [],
    families.TOY_TEXT: [],
    families.OTHER: [],
}

PRESET_NAMES = ("default",)


def wrapper_specs(env_wrapper: Any, family: str, cfg: dict) -> Sequence[Any]:
    """The wrapper specs to apply for ``env_wrapper`` on an env of ``family``.

    Raises:
        ConfigError: For an unknown preset name or a value of the wrong kind.
    """
    if env_wrapper is None:
        return []
    if isinstance(env_wrapper, str):
        if env_wrapper != "default":
            raise ConfigError(f"unknown env_wrapper preset {env_wrapper!r}; presets: {', '.join(PRESET_NAMES)}")
        return list(_FAMILY_DEFAULTS.get(family, []))
    if isinstance(env_wrapper, (list, tuple)):
        return list(env_wrapper)
    raise ConfigError(f"env_wrapper must be a preset name or a list of wrapper specs, got {env_wrapper!r}")

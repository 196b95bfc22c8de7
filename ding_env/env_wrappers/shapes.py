"""DI-engine's ``update_shape``: the shapes after a list of wrappers, by their class names."""

from __future__ import annotations

from typing import Any


def update_shape(obs_shape: Any, act_shape: Any, rew_shape: Any, wrapper_names: list[str]) -> tuple[Any, Any, Any]:
    """Apply ``new_shape(obs_shape, act_shape, rew_shape)`` of each named wrapper class that defines it.

    Our wrappers declare their shapes through their Gymnasium spaces and define no ``new_shape``
    (nor did DI-engine 0.5.3's), so the shapes change only for a wrapper class of
    ``ding_env.env_wrappers`` that defines one.

    Raises:
        ValueError: For a name that is not a wrapper class of ``ding_env.env_wrappers``.
    """
    import ding_env.env_wrappers as wrappers

    for name in filter(None, wrapper_names):
        wrapper = getattr(wrappers, name, None)
        if not isinstance(wrapper, type):
            raise ValueError(f"update_shape: {name!r} is not a wrapper class of ding_env.env_wrappers")
        if hasattr(wrapper, "new_shape"):
            obs_shape, act_shape, rew_shape = wrapper.new_shape(obs_shape, act_shape, rew_shape)
    return obs_shape, act_shape, rew_shape

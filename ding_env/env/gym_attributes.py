"""The Gymnasium env's own attributes, read and set through the ``BaseEnv`` that wraps it.

``DingEnvWrapper`` (and so every Gymnasium env a manager hosts) answers a public name it lacks with
the Gymnasium env's, found through its wrappers as ``SyncVectorEnv.get_attr`` and SB3's
``DummyVecEnv.get_attr`` find it (``spec``, ``render_mode``, ``gravity``, a method), and
``set_wrapper_attr`` sets a name where those read it, so ``manager.set_env_attr('gravity', 20.0)``
changes the physics, as ``DummyVecEnv.set_attr`` does.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym


class GymAttributes:
    """Mixin for a ``BaseEnv`` holding a Gymnasium env in ``_env`` (built) or ``_user_env`` (given)."""

    def __getattr__(self, name: str) -> Any:
        """A public attribute this object lacks: the Gymnasium env's, found through its wrappers."""
        if name.startswith("_") or self._owns(name):
            # Own state (looked up before it is set when unpickling), or an own property failing: raise
            # its error, never the Gymnasium env's attribute of that name.
            return object.__getattribute__(self, name)
        env = self._gymnasium_env(name)
        if not hasattr(env, "get_wrapper_attr"):  # a legacy gym env as given, not built yet
            return getattr(env, name)
        try:
            return env.get_wrapper_attr(name)
        except AttributeError:
            legacy = _legacy_env_of(env)
            if legacy is None:
                raise
            return getattr(legacy, name)  # legacy gym's wrappers pass attribute reads on themselves

    def set_wrapper_attr(self, name: str, value: Any) -> None:
        """Set ``name`` where ``getattr`` reads it: here when this object has it, else on the Gymnasium env.

        There it goes where its wrappers hold it (on the outermost wrapper when none does), as Gymnasium's
        ``set_wrapper_attr`` sets it.
        """
        if self._owns(name):
            setattr(self, name, value)
            return
        env = self._gymnasium_env(name)
        legacy = _legacy_env_of(env) if hasattr(env, "get_wrapper_attr") else env
        if legacy is not None and not _found(env, name) and hasattr(legacy, name):
            _set_where_held(legacy, name, value)  # the legacy env's own attribute (gravity), not a new one above it
        elif hasattr(env, "set_wrapper_attr"):
            env.set_wrapper_attr(name, value)
        else:  # a legacy gym env as given, with no such attribute yet
            setattr(env, name, value)

    def wrapper_class_names(self) -> list[str]:
        """The dotted names of the Gymnasium wrappers around the env, with their base classes, outermost first.

        ``ding_env.sb3.ManagerVecEnv.env_is_wrapped`` reads them: names reach the caller from every manager's
        envs, where the classes themselves would not travel from a remote server.
        """
        env = self._gymnasium_env("wrapper_class_names")
        names: list[str] = []
        while isinstance(env, gym.Wrapper):
            names += [f"{cls.__module__}.{cls.__qualname__}" for cls in type(env).__mro__ if cls is not object]
            env = env.env
        return list(dict.fromkeys(names))

    def _owns(self, name: str) -> bool:
        return _holds(self, name)

    def _gymnasium_env(self, name: str) -> Any:
        """The Gymnasium env (as built, else as given), read without ``__getattr__``."""
        env = self.__dict__.get("_env") or self.__dict__.get("_user_env")
        if env is None:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r} (its Gymnasium env is made at the "
                "first reset; read the env's attributes after it)"
            )
        return env


def _legacy_env_of(env: Any) -> Any:
    """The legacy gym env under ``env``'s Gymnasium wrappers (``LegacyGymEnv`` holds it), or None."""
    from ding_env.env_wrappers.legacy_gym import LegacyGymEnv

    inner = env.unwrapped
    return inner.legacy_env if isinstance(inner, LegacyGymEnv) else None


def _found(env: Any, name: str) -> bool:
    """Whether Gymnasium's lookup finds ``name`` on ``env`` or a wrapper of it."""
    try:
        env.get_wrapper_attr(name)
    except AttributeError:
        return False
    return True


def _set_where_held(env: Any, name: str, value: Any) -> None:
    """Set ``name`` on the first of ``env``'s legacy wrappers (or the env under them) holding it itself."""
    held = env
    while held is not None:
        if _holds(held, name):
            setattr(held, name, value)
            return
        held = vars(held).get("env")
    setattr(env, name, value)


def _holds(obj: Any, name: str) -> bool:
    """Whether ``obj`` itself (its instance dict or its class) has ``name``, not through ``__getattr__``."""
    return name in vars(obj) or any(name in vars(cls) for cls in type(obj).__mro__)

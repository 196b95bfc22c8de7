"""The Gymnasium env's own attributes, read and set through the ``BaseEnv`` that wraps it.

``DingEnvWrapper`` (and so every Gymnasium env a manager hosts) answers a public name it lacks with
the Gymnasium env's, found through its wrappers as ``SyncVectorEnv.get_attr`` and SB3's
``DummyVecEnv.get_attr`` find it (``spec``, ``render_mode``, ``gravity``, a method), and
``set_wrapper_attr`` sets a name where those read it, so ``manager.set_env_attr('gravity', 20.0)``
changes the physics, as ``DummyVecEnv.set_attr`` does.
"""

from __future__ import annotations

from typing import Any


class GymAttributes:
    """Mixin for a ``BaseEnv`` holding a Gymnasium env in ``_env`` (built) or ``_user_env`` (given)."""

    def __getattr__(self, name: str) -> Any:
        """A public attribute this object lacks: the Gymnasium env's, found through its wrappers."""
        if name.startswith("_") or self._owns(name):
            # Own state (looked up before it is set when unpickling), or an own property failing: raise
            # its error, never the Gymnasium env's attribute of that name.
            return object.__getattribute__(self, name)
        env = self._gymnasium_env(name)
        return env.get_wrapper_attr(name) if hasattr(env, "get_wrapper_attr") else getattr(env, name)

    def set_wrapper_attr(self, name: str, value: Any) -> None:
        """Set ``name`` where ``getattr`` reads it: here when this object has it, else on the Gymnasium env.

        There it goes where its wrappers hold it (on the innermost env when none does), as Gymnasium's
        ``set_wrapper_attr`` sets it.
        """
        if self._owns(name):
            setattr(self, name, value)
        elif hasattr(env := self._gymnasium_env(name), "set_wrapper_attr"):
            env.set_wrapper_attr(name, value)
        else:  # an env without Gymnasium's wrapper lookup (legacy gym): a plain attribute
            setattr(env, name, value)

    def _owns(self, name: str) -> bool:
        return name in self.__dict__ or any(name in vars(cls) for cls in type(self).__mro__)

    def _gymnasium_env(self, name: str) -> Any:
        """The Gymnasium env (as built, else as given), read without ``__getattr__``."""
        env = self.__dict__.get("_env") or self.__dict__.get("_user_env")
        if env is None:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r} (its Gymnasium env is made at the "
                "first reset; read the env's attributes after it)"
            )
        return env

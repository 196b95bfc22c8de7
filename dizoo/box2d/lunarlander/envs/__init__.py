"""The lunarlander env type."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)  # see dizoo/__init__.py

from dizoo.box2d.lunarlander.envs.lunarlander_env import LunarLanderEnv  # noqa: E402

__all__ = ["LunarLanderEnv"]

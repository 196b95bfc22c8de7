"""The minigrid env type."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)  # see dizoo/__init__.py

from dizoo.minigrid.envs.minigrid_env import MiniGridEnv  # noqa: E402

__all__ = ["MiniGridEnv"]

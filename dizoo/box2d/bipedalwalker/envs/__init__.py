"""The bipedalwalker env type."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)  # see dizoo/__init__.py

from dizoo.box2d.bipedalwalker.envs.bipedalwalker_env import BipedalWalkerEnv  # noqa: E402

__all__ = ["BipedalWalkerEnv"]

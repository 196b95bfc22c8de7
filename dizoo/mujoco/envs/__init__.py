"""The mujoco env type."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)  # see dizoo/__init__.py

from dizoo.mujoco.envs.mujoco_env import MujocoEnv

__all__ = ["MujocoEnv"]

"""The mujoco env type."""

from dizoo.mujoco.envs.mujoco_env import MujocoEnv

__all__ = ["MujocoEnv"]

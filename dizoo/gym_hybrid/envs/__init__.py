"""The gym_hybrid env type."""

from dizoo.gym_hybrid.envs.moving_env import GymHybridEnv, MovingEnv

__all__ = ["GymHybridEnv", "MovingEnv"]

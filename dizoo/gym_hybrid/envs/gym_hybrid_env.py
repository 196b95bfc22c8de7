"""DI-engine's module of the gym_hybrid env type, which its configs list in ``import_names``."""

from dizoo.gym_hybrid.envs.moving_env import GymHybridEnv

__all__ = ["GymHybridEnv"]

"""The cartpole env type."""

from dizoo.classic_control.cartpole.envs.cartpole_env import CartPoleEnv

__all__ = ["CartPoleEnv"]

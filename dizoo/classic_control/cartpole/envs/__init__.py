"""The cartpole env type."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)  # see dizoo/__init__.py

from dizoo.classic_control.cartpole.envs.cartpole_batch_env import CartPoleBatchEnv
from dizoo.classic_control.cartpole.envs.cartpole_env import CartPoleEnv

__all__ = ["CartPoleBatchEnv", "CartPoleEnv"]

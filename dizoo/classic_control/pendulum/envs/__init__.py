"""The pendulum env type."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)  # see dizoo/__init__.py

from dizoo.classic_control.pendulum.envs.pendulum_env import PendulumEnv

__all__ = ["PendulumEnv"]

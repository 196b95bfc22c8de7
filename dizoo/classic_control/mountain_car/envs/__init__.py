"""The mountain_car env type."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)  # see dizoo/__init__.py

from dizoo.classic_control.mountain_car.envs.mountain_car_env import MountainCarEnv

__all__ = ["MountainCarEnv"]

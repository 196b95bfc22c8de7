"""The acrobot env type."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)  # see dizoo/__init__.py

from dizoo.classic_control.acrobot.envs.acrobot_env import AcrobotEnv

__all__ = ["AcrobotEnv"]

"""The CartPole-v1 env: module, registered type and config."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)  # see dizoo/__init__.py

"""DI-engine's ``ding.envs.common.env_element_runner``: an ``EnvElement`` that reads its value from an env.

Env code written against DI-engine's older element API describes an observation part by an
``EnvElementRunner``: it wraps an ``EnvElement`` (its ``_core``, which gives ``info`` and ``repr``)
and reads the part's current value from the env with ``get(engine)``.
"""

from __future__ import annotations

import abc
from typing import Any

from ding_env.common.env_element import EnvElement, EnvElementInfo, IEnvElement


class IEnvElementRunner(IEnvElement):
    """What every element runner has besides ``info``: ``get`` a value from an env and ``reset``."""

    @abc.abstractmethod
    def get(self, engine: Any) -> Any:
        """The element's current value, read from ``engine`` (the env)."""

    @abc.abstractmethod
    def reset(self, *args: Any, **kwargs: Any) -> None:
        """Forget what the runner kept from the last episode."""


class EnvElementRunner(IEnvElementRunner):
    """An element runner around an ``EnvElement``: a subclass sets ``self._core`` in ``_init``.

    Raises:
        AssertionError: From the constructor, when ``_init`` left ``_core`` unset or set it to
            something that is not an ``EnvElement`` (as DI-engine's did).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._init(*args, **kwargs)
        self._check()

    @abc.abstractmethod
    def _init(self, *args: Any, **kwargs: Any) -> None:
        """Set ``self._core`` (an ``EnvElement``) and whatever state ``get`` needs."""

    def _check(self) -> None:
        core = getattr(self, "_core", None)
        assert isinstance(core, EnvElement), (
            f"{type(self).__name__}._init must set self._core to an EnvElement, got {type(core).__name__}"
        )

    def __repr__(self) -> str:
        return repr(self._core)

    @property
    def info(self) -> EnvElementInfo:
        """The core element's ``EnvElementInfo(shape, value)``."""
        return self._core.info

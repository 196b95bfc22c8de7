"""DI-engine's older env-info API: ``EnvElement``, ``EnvElementInfo`` and ``BaseEnvInfo``.

Envs written before DI-engine moved to gym spaces describe their observation, action and reward
with these records (``ding.envs.common.env_element`` and ``ding.envs.BaseEnvInfo``); they port by
renaming ``ding.envs`` to ``ding_env``. The managers read spaces, not these records: an env that
only has an info record still declares its three spaces for them.
"""

from __future__ import annotations

import abc
import dataclasses
from collections import namedtuple
from collections.abc import Iterator
from typing import Any

# shape: the element's shape (or a dict of them); value: its bounds and dtype ({'min', 'max', 'dtype'}).
EnvElementInfo = namedtuple("EnvElementInfo", ["shape", "value"])


class IEnvElement(abc.ABC):
    """What every env element has: a description and an ``info`` record."""

    @abc.abstractmethod
    def __repr__(self) -> str:
        """The element's name and details."""

    @property
    @abc.abstractmethod
    def info(self) -> Any:
        """The element's description."""


class EnvElement(IEnvElement):
    """One part of an env (its observation, action or reward), described by ``_shape`` and ``_value``.

    A subclass sets ``self._shape`` and ``self._value`` in ``_init`` (called with the constructor's
    arguments) and describes itself in ``_details``.

    Raises:
        AssertionError: From the constructor, when ``_init`` left ``_shape`` or ``_value`` unset
            (as DI-engine's did).
    """

    _instance = None
    _name = "EnvElement"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._init(*args, **kwargs)
        self._check()

    @abc.abstractmethod
    def _init(self, *args: Any, **kwargs: Any) -> None:
        """Set ``self._shape`` and ``self._value``."""

    @abc.abstractmethod
    def _details(self) -> str:
        """What ``repr`` shows after the element's name."""

    def __repr__(self) -> str:
        return f"{self._name}: {self._details()}"

    def _check(self) -> None:
        missing = [name for name in ("_shape", "_value") if not hasattr(self, name)]
        assert not missing, f"{type(self).__name__}._init must set {' and '.join(missing)} (an EnvElement needs both)"

    @property
    def info(self) -> EnvElementInfo:
        """``EnvElementInfo(shape, value)``."""
        return EnvElementInfo(shape=self._shape, value=self._value)


@dataclasses.dataclass
class BaseEnvInfo:
    """An env described in DI-engine's older way: a mutable record with named fields.

    Attributes:
        agent_num: Number of agents.
        obs_space: The observation's ``EnvElementInfo`` (or space).
        act_space: The action's ``EnvElementInfo`` (or space).
        rew_space: The reward's ``EnvElementInfo`` (or space).
        use_wrappers: The wrappers the env applies, or None.
    """

    agent_num: Any
    obs_space: Any
    act_space: Any
    rew_space: Any
    use_wrappers: Any

    def __iter__(self) -> Iterator[Any]:
        """The fields in order, so ``agent_num, obs, act, rew, wrappers = info`` works as with DI-engine's."""
        return (getattr(self, field.name) for field in dataclasses.fields(self))

    def __getitem__(self, index: int) -> Any:
        return list(self)[index]

    def __len__(self) -> int:
        return len(dataclasses.fields(self))

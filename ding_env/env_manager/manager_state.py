"""The env manager's state, read by its users: counts, statuses, config, spaces and worker processes.

Mixed into ``EnvManager``, whose ``__init__`` and ``launch`` set what it reads: ``_ledger``, ``_env_num``,
``_layout``, ``_cfg``, ``_env_fn``, ``_spaces`` (None until read or launched), ``_shares``, ``_closed``,
and ``_launched``; the checks of those every call makes are here too.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import gymnasium as gym
from easydict import EasyDict

from ding_env.env.base_env import BaseEnv
from ding_env.env_manager.backends.base import WorkerView
from ding_env.env_manager.backends.hosted_env import spaces_of_fn
from ding_env.env_manager.status import EnvStatus
from ding_env.errors import ClosedEnvError, EnvStateError


class ManagerState:
    """The read-only properties of an ``EnvManager``."""

    @property
    def done(self) -> bool:
        """True once every env has run ``episode_num`` episodes."""
        return self._ledger.done

    @property
    def env_num(self) -> int:
        """Number of envs."""
        return self._env_num

    @property
    def lockstep(self) -> bool:
        """True when some env ids are a lockstep batch env (a Gymnasium vector env): a step names all or none."""
        return bool(self._layout.lockstep)

    @property
    def closed(self) -> bool:
        """True until ``launch()`` and after ``close()`` (DI-engine runs ``if manager.closed: manager.launch()``)."""
        return self._closed or not self._launched

    @property
    def env_status(self) -> dict[int, EnvStatus]:
        """``{env_id: EnvStatus}`` (DI-engine's ``EnvState`` of each env is ``env_states``)."""
        return {env_id: EnvStatus(status) for env_id, status in enumerate(self._ledger.status)}

    env_state = env_status  # its earlier name, kept for code written against it

    @property
    def workers(self) -> list[WorkerView]:
        """Diagnostic (pin, kill or watch a worker): the worker processes hosting envs (none for in-process envs)."""
        if self.closed:
            return []
        return [worker for backend in self._shares.backends for worker in backend.worker_views()]

    @property
    def config(self) -> EasyDict:
        """A copy of the manager's config (its defaults merged with the given keys)."""
        return copy.deepcopy(self._cfg)

    @property
    def env_fn(self) -> list[Callable[[], BaseEnv]]:
        """The env constructors, one per env id."""
        return list(self._env_fn)

    @property
    def observation_space(self) -> gym.spaces.Space:
        """The envs' observation space."""
        return self._env_spaces()[0]

    @property
    def action_space(self) -> gym.spaces.Space:
        """The envs' action space."""
        return self._env_spaces()[1]

    @property
    def reward_space(self) -> gym.spaces.Space:
        """The envs' reward space."""
        return self._env_spaces()[2]

    def _env_spaces(self) -> tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space]:
        self._check_open()
        if self._spaces is None:  # before launch: read from a throwaway env
            self._spaces = spaces_of_fn(self._env_fn[0])
        return self._spaces

    # ---- checks --------------------------------------------------------

    @property
    def _name(self) -> str:
        return f"{type(self).__name__}(env_num={self._env_num})"

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedEnvError(f"{self._name} is closed")

    def _check_running(self) -> None:
        self._check_open()
        if not self._launched:
            raise EnvStateError(f"{self._name} is not launched; call launch() first")

"""DI-engine's view of a manager's envs: ``EnvState``, ``env_states``, ``env_state_done``, ``env_ref``, ``config``.

DI-engine code and tests import ``EnvState`` from ``ding.envs.env_manager.base_env_manager`` and
compare an env's state with ``EnvState.RUN`` or ``EnvState.DONE``; ding_env's own statuses
(``EnvStatus``) map onto them here.
"""

from __future__ import annotations

import copy
import enum
from typing import Any

from easydict import EasyDict

from ding_env.env_manager.status import EnvStatus


class EnvState(enum.IntEnum):
    """DI-engine's env states, with its values."""

    VOID = 0  # not launched, or closed
    INIT = 1
    RUN = 2  # in an episode: ready for an action, or stepping
    RESET = 3
    DONE = 4  # ran episode_num episodes
    ERROR = 5
    NEED_RESET = 6  # its episode ended and it waits for reset() (auto_reset=False), or not reset yet


STATE_OF_STATUS = {
    EnvStatus.NEEDS_RESET: EnvState.NEED_RESET,
    EnvStatus.READY: EnvState.RUN,
    EnvStatus.STEPPING: EnvState.RUN,
    EnvStatus.FINISHED: EnvState.DONE,
}


class DIEngineState:
    """Mixed into ``BaseEnvManager``: DI-engine's names for the envs' states, a reference env and the config."""

    @property
    def env_states(self) -> dict[int, EnvState]:
        """``{env_id: EnvState}``: ``VOID`` for every env before ``launch()`` and after ``close()``."""
        if self.closed:
            return dict.fromkeys(range(self.env_num), EnvState.VOID)
        return {env_id: STATE_OF_STATUS[status] for env_id, status in self.env_state.items()}

    def env_state_done(self, env_id: int) -> bool:
        """True once env ``env_id`` has run ``episode_num`` episodes (its state is ``EnvState.DONE``)."""
        return self.env_state[self._check_env_id(env_id)] == EnvStatus.FINISHED

    @property
    def env_ref(self) -> Any:
        """An env built from the first env function and never reset, to read attributes common to every env."""
        if self.__dict__.get("_env_ref") is None:
            self._env_ref = self._env_fn[0]()
        return self._env_ref

    @property
    def config(self) -> EasyDict:
        """A copy of the manager's config (its defaults merged with the given keys)."""
        return copy.deepcopy(self._cfg)

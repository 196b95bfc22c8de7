"""DI-engine's view of a manager: ``EnvState``, ``active_env`` and the per-env calls its collectors and evaluators make.

DI-engine code and tests import ``EnvState`` from ``ding.envs.env_manager.base_env_manager`` and
compare an env's state with ``EnvState.RUN`` or ``EnvState.DONE``; ding_env's own statuses
(``EnvStatus``) map onto them here. Everything here is built on the manager's public API.
"""

from __future__ import annotations

import enum
from typing import Any

from ding_env.env_manager import validation
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


class DIEngineCalls:
    """DI-engine's names for the envs' states, a reference env, and calls that go to one env (or the ready ones)."""

    @property
    def active_env(self) -> list[int]:
        """Ids of the envs in an episode: ready for an action, or stepping (async)."""
        return [env_id for env_id, status in self.env_status.items() if status in (EnvStatus.READY, EnvStatus.STEPPING)]

    @property
    def env_states(self) -> dict[int, EnvState]:
        """``{env_id: EnvState}``: ``VOID`` for every env before ``launch()`` and after ``close()``."""
        if self.closed:
            return dict.fromkeys(range(self.env_num), EnvState.VOID)
        return {env_id: STATE_OF_STATUS[status] for env_id, status in self.env_status.items()}

    def env_state_done(self, env_id: int) -> bool:
        """True once env ``env_id`` has run ``episode_num`` episodes (its state is ``EnvState.DONE``)."""
        env_id = validation.check_env_id(f"{type(self).__name__}(env_num={self.env_num})", self.env_num, env_id)
        return self.env_status[env_id] == EnvStatus.FINISHED

    @property
    def env_ref(self) -> Any:
        """An env built from the first env function and never reset, to read attributes common to every env."""
        if self.__dict__.get("_env_ref") is None:
            self._env_ref = self.env_fn[0]()
        return self._env_ref

    @property
    def method_name_list(self) -> list[str]:
        """Env methods that may be called on every env through the manager."""
        return ["reset", "step", "seed", "close", "enable_save_replay", "random_action"]

    @property
    def ready_imgs(self) -> dict[int, Any]:
        """``{env_id: frame}``: ``env.render()`` of every ready env (DI-engine's evaluators log them as video)."""
        env_ids = self.ready_obs_id
        return dict(zip(env_ids, self.call_env_method("render", env_ids=env_ids), strict=True))

    def reward_shaping(self, env_id: int, transitions: list[dict]) -> list[dict]:
        """``env.reward_shaping(transitions)`` of env ``env_id``: its shaped transitions."""
        return self.call_env_method("reward_shaping", transitions, env_ids=[env_id])[0]

    def enable_save_figure(self, env_id: int, figure_path: str) -> None:
        """``env.enable_save_figure(figure_path)`` of env ``env_id``."""
        self.call_env_method("enable_save_figure", figure_path, env_ids=[env_id])

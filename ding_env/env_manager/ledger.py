"""``EnvLedger``: where each env of a manager stands, and how a step's results move it on.

The manager is the only writer; its backends reach the ledger only through the two calls of
``backends.base.Ledger`` (``claim_idle``, ``lose``), for envs they lost with a worker.
"""

from __future__ import annotations

import numpy as np

from ding_env.env_manager.failures import is_reset_error
from ding_env.env_manager.outcome import TimestepBatch
from ding_env.env_manager.status import FINISHED, NEEDS_RESET, READY, STEPPING, EnvStatus
from ding_env.errors import EnvNotReadyError


class EnvLedger:
    """The status and episode count of every env, and the auto-reset rule.

    Args:
        env_num: How many envs.
        auto_reset: Whether an env restarts at once when its episode ends.
        episode_num: Episodes each env runs before it is finished (``inf``: never).
        step_error: 'raise' (a failed step does not end an episode) or 'abnormal' (it does).
    """

    def __init__(self, env_num: int, auto_reset: bool, episode_num: float, step_error: str) -> None:
        self.env_num = env_num
        self.auto_reset = bool(auto_reset)
        self.episode_num = episode_num
        self.raise_step_errors = step_error == "raise"
        self.status = np.full(env_num, NEEDS_RESET, dtype=np.int8)
        self.episode_count = np.zeros(env_num, dtype=np.int64)
        self.every_id = np.arange(env_num, dtype=np.int64)
        self.every_id.setflags(write=False)
        self._all_ready = np.full(env_num, READY, dtype=np.int8).tobytes()
        self._all_finished = np.full(env_num, FINISHED, dtype=np.int8).tobytes()
        self._always = np.ones(env_num, dtype=bool)
        self._always.setflags(write=False)
        # Episodes restart on done and never run out: settling a step then only counts episodes.
        self.endless = self.auto_reset and self.episode_num == float("inf")

    # ---- reading -------------------------------------------------------

    def all_ready(self) -> bool:
        """Whether every env can take an action now (one byte comparison)."""
        return self.status.tobytes() == self._all_ready

    def ready_ids(self) -> np.ndarray:
        """The ids of the envs that can take an action now, increasing (a read-only array)."""
        if self.all_ready():
            return self.every_id
        env_ids = np.flatnonzero(self.status == READY)
        env_ids.setflags(write=False)
        return env_ids

    @property
    def done(self) -> bool:
        """Whether every env has run ``episode_num`` episodes."""
        return self.status.tobytes() == self._all_finished

    def count(self, status: int) -> int:
        """How many envs have ``status``."""
        return int(np.count_nonzero(self.status == status))

    def check_ready(self, owner: str, env_ids: np.ndarray) -> None:
        """Raise ``EnvNotReadyError`` naming the first of ``env_ids`` that cannot take an action now."""
        if self.all_ready():
            return
        not_ready = env_ids[self.status[env_ids] != READY]
        if len(not_ready):
            env_id = int(not_ready[0])
            status = EnvStatus(self.status[env_id])
            raise EnvNotReadyError(
                f"{owner}: env {env_id} is not ready for an action (status {status.name}); "
                f"ready envs: {self.ready_ids().tolist()}{_HOW_TO_READY.get(status, '')}",
                env_id,
            )

    def reset_flags(self, env_ids: np.ndarray) -> np.ndarray:
        """Whether each of ``env_ids`` restarts at once if its episode ends now."""
        if self.endless:
            return self._always[: len(env_ids)]
        return self.auto_reset & (self.episode_count[env_ids] + 1 < self.episode_num)

    # ---- writing -------------------------------------------------------

    def mark(self, env_ids: np.ndarray | list[int], status: int) -> None:
        """Set the status of ``env_ids`` (distinct ids: as many as envs means every env)."""
        if len(env_ids) == self.env_num:
            self.status.fill(status)  # cheaper than indexing, on the common step of every env
        else:
            self.status[env_ids] = status

    def start_over(self) -> None:
        """Forget every env's episode count (a full ``reset()``)."""
        self.episode_count[:] = 0

    def apply(self, outcome: TimestepBatch) -> None:
        """Move the envs of a step's ``outcome`` on: ready, needing a reset, or finished.

        A failed step with ``step_error='raise'`` does not end an episode; a failed auto-reset
        follows an episode that did end. Both leave the env needing a reset. With ``'abnormal'``,
        a failed step is a done step like any other (its env renewed, and reset when due).
        """
        env_ids = outcome.env_id
        if not outcome.errors:
            if self.endless:  # every ended episode restarted at once: the envs stay ready
                if np.count_nonzero(outcome.done):
                    self.episode_count[env_ids] += outcome.done
                self.mark(env_ids, READY)
                return
            ended = outcome.done
            if not ended.any():  # no episode ended: every env stepped is ready again
                self.mark(env_ids, READY)
                return
            needs_reset = np.zeros(len(env_ids), dtype=bool)
        else:
            ended = outcome.done.copy()
            needs_reset = np.zeros(len(env_ids), dtype=bool)
            for row, error in outcome.errors.items():
                if is_reset_error(error):
                    needs_reset[row] = True
                elif self.raise_step_errors:
                    ended[row], needs_reset[row] = False, True
        self.episode_count[env_ids[ended]] += 1
        status = np.where(ended & ~outcome.reset_on_done, NEEDS_RESET, READY).astype(np.int8)
        status[ended & (self.episode_count[env_ids] >= self.episode_num)] = FINISHED
        status[needs_reset] = NEEDS_RESET
        self.status[env_ids] = status

    # ---- what backends report (backends.base.Ledger) -------------------

    def claim_idle(self, env_ids: list[int]) -> dict[int, bool]:
        """The ready envs among ``env_ids``, now stepping, with their auto-reset flags."""
        idle = [env_id for env_id in env_ids if self.status[env_id] == READY]
        if not idle:
            return {}
        self.status[idle] = STEPPING
        return dict(zip(idle, self.reset_flags(np.array(idle, dtype=np.int64)).tolist(), strict=True))

    def lose(self, env_ids: list[int]) -> None:
        """Ready envs among ``env_ids`` need a reset; finished and stepping ones stay as they are."""
        status = self.status[env_ids]
        self.status[env_ids] = np.where(status == READY, NEEDS_RESET, status)


# What makes an env that cannot take an action ready again, said with the error.
_HOW_TO_READY = {
    EnvStatus.NEEDS_RESET: (
        " (its episode ended without auto-reset, or its step, reset or worker failed: reset() or "
        "reset({env_id: {}}) restarts it)"
    ),
    EnvStatus.FINISHED: " (it ran episode_num episodes: reset() starts counting again)",
}

"""``SeedsAtFullReset``: the seeding of batch envs whose simulator takes seeds only for all its envs at once.

EnvPool seeds its envs when the pool is made; a Gymnasium vector env seeds sub-env ``i`` with
``seed + i`` when every sub-env is reset. For both, ``seed()`` takes effect at the next reset of
every sub-env together, and with dynamic seeds each sub-env's later episodes follow from its seed.
Static seeds are replayed at each reset of every sub-env; a sub-env reset alone again would not
replay its seed, so that is refused.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ding_env.env.batch_env import BaseBatchEnv
from ding_env.errors import EnvStateError


class SeedsAtFullReset(BaseBatchEnv):
    """A ``BaseBatchEnv`` whose seeds reach its simulator only at a reset of every sub-env.

    Subclasses call :meth:`_seeding_due` at the top of ``_reset``, apply the seeds when it says so
    (then call :meth:`_seeds_applied`), and call :meth:`_started_episodes` with the sub-envs reset.
    """

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg)
        self._reseed = False  # seed() was called since the seeds were last applied
        self._started = np.zeros(self._num_envs, dtype=bool)  # given a first observation since then

    def seed(self, seed: int | Sequence[int], dynamic_seed: bool = True) -> None:
        """Set each sub-env's seed; it takes effect at the next ``reset()`` of every sub-env (see the module doc)."""
        super().seed(seed, dynamic_seed)
        self._reseed = True

    def _seeding_due(self, ids: np.ndarray, every: bool) -> bool:
        """Whether this reset of ``ids`` (``every`` sub-env, or not) must apply the seeds.

        Raises:
            EnvStateError: When only some sub-envs are reset and the seeds would have to be applied.
        """
        static = self.seeds is not None and not self.dynamic_seed
        if every:
            return self._reseed or static
        if self._reseed:
            raise EnvStateError(
                f"{self!r}: seeds set by seed() take effect at a reset of every sub-env (reset() with no env_ids), "
                f"since the simulator takes seeds only for all its envs at once; got env_ids {ids.tolist()}"
            )
        if static and self._started[ids].any():
            raise EnvStateError(
                f"{self!r}: sub-envs {ids[self._started[ids]].tolist()} have static seeds, which the simulator "
                "replays only when every sub-env is reset together: reset() with no env_ids, or use dynamic seeds"
            )
        return False

    def _seeds_applied(self) -> None:
        """Note that the simulator now runs on the current seeds, no sub-env started yet."""
        self._reseed = False
        self._started[:] = False

    def _started_episodes(self, ids: np.ndarray | slice) -> None:
        """Note that ``ids`` got their first observation."""
        self._started[ids] = True

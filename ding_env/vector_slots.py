"""How ``ManagerVectorEnv`` hosts the Gymnasium envs its factories make.

Each is put in a ``DingEnvWrapper`` seeded as ``SyncVectorEnv`` seeds its envs; before any is launched, what
the vector env needs (``metadata``, ``render_mode``) is read from an env of a factory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ding_env.env.base_env import BaseEnv
from ding_env.env.ding_env_wrapper import DingEnvWrapper
from ding_env.env_manager.backends.hosted_env import build_env, close_throwaway, is_gym_env


class GymnasiumVectorSlot(DingEnvWrapper):
    """A Gymnasium env in ``DingEnvWrapper`` (no preprocessing), seeded as ``SyncVectorEnv`` seeds its envs.

    ``seed(s)`` seeds the next reset only; the resets after it pass no seed, so the env's own
    generator continues, as after ``SyncVectorEnv.reset(seed=...)``.

    Args:
        env: The Gymnasium (or legacy gym) env.
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env, {"env_wrapper": []})
        self._pending_seed: int | None = None

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        """Seed the next reset with ``seed`` (``dynamic_seed`` is ignored: later resets continue the env's RNG)."""
        super().seed(seed, dynamic_seed)
        self._pending_seed = seed

    def _next_episode_seed(self) -> int | None:
        seed, self._pending_seed = self._pending_seed, None
        return seed

    def close(self) -> None:
        """Close the env, also one never reset: a factory made it for this slot alone."""
        if self._env is None and self._user_env is not None:
            self._user_env.close()
        super().close()


def read_from_env(env_fn: Callable[[], BaseEnv], name: str, default: Any) -> Any:
    """Attribute ``name`` of an env ``env_fn`` makes, never reset: a Gymnasium env's (closed again), or a ``BaseEnv``'s.

    A ``BaseEnv`` is left as built: its ``close`` is its author's code, which might hang or fail on an env never
    reset, here as the vector env is built (a manager leaves it so too).
    """
    env = build_env(0, env_fn)
    value = getattr(env, name, default)
    if isinstance(env, GymnasiumVectorSlot):
        close_throwaway(env, f"after its {name} was read")
    return value


def as_base_env(env_fn: Callable[[], Any]) -> BaseEnv:
    """``env_fn()``, a Gymnasium (or legacy gym) env put in a :class:`GymnasiumVectorSlot`, a ``BaseEnv`` as it is."""
    env = env_fn()
    return GymnasiumVectorSlot(env) if is_gym_env(env) else env

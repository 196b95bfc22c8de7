"""Per-episode seeds drawn from an instance-owned generator.

Static seeding replays the same episode start on every reset (evaluation);
dynamic seeding gives each episode a fresh seed, drawn reproducibly from the
seed passed to ``seed()`` (collection). Global RNG state is never touched.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ding_env.summary import describe_typed

_EPISODE_SEED_BOUND = 2**31 - 1


class EpisodeSeeder:
    """Decides the seed of each episode.

    Args:
        seed: The base seed, or None for an unseeded env (every episode then
            draws from fresh OS entropy, and no seed is passed on).
        dynamic: Draw a new seed per episode from ``seed`` instead of
            replaying ``seed`` on every reset.
    """

    def __init__(self, seed: int | None = None, dynamic: bool = True) -> None:
        if seed is not None:
            seed = checked_seed(seed)
        self.seed = seed
        self.dynamic = dynamic
        self._generator = np.random.default_rng(seed) if seed is not None else None

    def next_episode_seed(self) -> int | None:
        """The seed for the episode about to start, or None when unseeded."""
        if self._generator is None:
            return None
        if not self.dynamic:
            return self.seed
        return int(self._generator.integers(0, _EPISODE_SEED_BOUND))


def derive_seeds(base_seed: int, count: int) -> list[int]:
    """Distinct seeds for ``count`` envs: ``base_seed + i``, as DI-engine does.

    Each env turns its seed into a stream with ``np.random.default_rng``, whose
    SeedSequence hashing makes neighbouring seeds independent.
    """
    base_seed = checked_seed(base_seed)
    return [base_seed + i for i in range(count)]


def checked_seed(seed: object, what: str = "seed") -> int:
    """``seed`` as an int >= 0.

    Raises:
        TypeError: For a bool, a float, a string or anything else that is not an int.
        ValueError: For a negative int.
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{what} must be an int >= 0, got {describe_typed(seed)}")
    if seed < 0:
        raise ValueError(f"{what} must be an int >= 0, got {seed}")
    return int(seed)


SEED_SIGNATURE_HINT = (
    "seed() must take dynamic_seed, which the managers pass (True for collector envs, False for evaluator "
    "envs): def seed(self, seed, dynamic_seed=True), passing it on with super().seed(seed, dynamic_seed)"
)


def takes_dynamic_seed(env: Any, seed: Any, dynamic_seed: bool | None) -> bool:
    """Whether ``env.seed(seed, dynamic_seed=...)`` fits the signature of the env's ``seed`` (True when it has none)."""
    try:
        inspect.signature(env.seed).bind(seed, dynamic_seed=dynamic_seed)
    except TypeError:
        return False
    except ValueError:  # a seed without a signature (a builtin)
        return True
    return True


def seed_as_managers_do(env: Any, seed: Any, dynamic_seed: bool | None) -> None:
    """``env.seed(seed, dynamic_seed=dynamic_seed)`` (``env.seed(seed)`` when None), as every manager seeds an env.

    Raises:
        TypeError: When the env's ``seed()`` takes no ``dynamic_seed``, saying how to declare it.
    """
    if dynamic_seed is None:
        env.seed(seed)
        return
    try:
        env.seed(seed, dynamic_seed=dynamic_seed)
    except TypeError as error:
        if takes_dynamic_seed(env, seed, dynamic_seed):
            raise  # the env's own TypeError
        raise TypeError(f"{type(env).__name__}.seed() takes no dynamic_seed: {SEED_SIGNATURE_HINT}") from error


@contextmanager
def global_rngs_kept() -> Iterator[None]:
    """Give the caller's global random states (Python's and numpy's) back after the block.

    For code that draws from them, or that runs envs that may (Ray's start and stop; the checkers, whose envs
    under test may seed them).
    """
    states = random.getstate(), np.random.get_state()
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])

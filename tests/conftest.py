"""Shared fixtures and small envs for the test suite."""

from __future__ import annotations

import numpy as np
import pytest

from tests.envs import cartpole_fn


def balance_action(obs: np.ndarray) -> int:
    """A controller that keeps CartPole's pole up for the full 500 steps."""
    x, x_dot, theta, theta_dot = obs
    return int(theta + 0.5 * theta_dot + 0.01 * x + 0.1 * x_dot > 0)


@pytest.fixture
def cartpole_fns():
    return [cartpole_fn] * 4

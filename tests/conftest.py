"""Shared fixtures and small envs for the test suite."""

from __future__ import annotations

import numpy as np
import pytest

from tests.envs import cartpole_fn


def balance_action(obs: np.ndarray) -> int:
    """A controller that keeps CartPole's pole up for the full 500 steps."""
    x, x_dot, theta, theta_dot = obs
    return int(theta + 0.5 * theta_dot + 0.01 * x + 0.1 * x_dot > 0)


def manager_cfg(manager_type: str, **cfg) -> dict:
    """A manager config for ``manager_type`` in which the async manager waits for every env in flight.

    With the default ``step_wait_timeout`` (10 ms), a loaded machine makes the async manager
    return only the envs that finished in time, so its batches would no longer line up with
    the serial manager's. Tests of that timeout set it themselves. ``'subprocess+caller'`` (and
    the async one) is that manager with the calling process hosting a share of the envs.
    """
    if manager_type.endswith("+caller"):  # the calling process hosts a share beside one worker
        manager_type = manager_type.removesuffix("+caller")
        cfg = {"caller_share": True, "num_workers": 1, **cfg}
    cfg = dict(cfg, type=manager_type)
    if manager_type == "async_subprocess":
        cfg.setdefault("step_wait_timeout", 60.0)
    return cfg


@pytest.fixture
def cartpole_fns():
    return [cartpole_fn] * 4


# Every manager type, the V2 ones included: what the adapters over the managers' public API run on.
ALL_MANAGER_TYPES = ["base", "subprocess", "async_subprocess", "base_v2", "subprocess_v2"]


@pytest.fixture(params=ALL_MANAGER_TYPES)
def make_adapted(request):
    """``make(adapter, env_fns, **cfg)``: ``adapter`` over a manager of each type; all closed after the test."""
    from ding_env import create_env_manager

    made = []

    def make(adapter, env_fns, **cfg):
        adapted = adapter(create_env_manager(manager_cfg(request.param, **cfg), env_fns))
        made.append(adapted)
        return adapted

    yield make
    for adapted in made:
        adapted.close()

"""Manager fixtures: every semantic test runs against each manager type."""

from __future__ import annotations

import pytest

from ding_env import create_env_manager
from tests.conftest import manager_cfg
from tests.support import as_batch_envs

MANAGER_TYPES = ["base", "subprocess", "async_subprocess"]
# Managers as made by ``make_manager``: every type, and the subprocess ones with the caller hosting a share.
MANAGER_SETUPS = [*MANAGER_TYPES, "subprocess+caller", "async_subprocess+caller"]


@pytest.fixture(params=MANAGER_TYPES)
def manager_type(request):
    return request.param


@pytest.fixture(params=["envs", "batch_envs"])
def hosted(request):
    """``hosted(env_fns)``: the env_fns as a test gives them, then the same envs hosted as batch envs.

    A guarantee that holds for an env holds for a batch env's sub-env (``as_batch_envs``); a test of
    one requests this fixture and passes its env_fns through it.
    """
    return as_batch_envs if request.param == "batch_envs" else list


@pytest.fixture(params=MANAGER_SETUPS)
def make_manager(request):
    managers = []
    manager_type = request.param

    def make(env_fn, **cfg):
        manager = create_env_manager(manager_cfg(manager_type, **cfg), env_fn)
        managers.append(manager)
        return manager

    yield make
    for manager in managers:
        manager.close()

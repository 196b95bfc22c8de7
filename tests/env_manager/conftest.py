"""Manager fixtures: every semantic test runs against each manager type."""

from __future__ import annotations

import pytest

from ding_env import create_env_manager
from tests.conftest import manager_cfg

MANAGER_TYPES = ["base", "subprocess", "async_subprocess"]
# Managers as made by ``make_manager``: every type, and the subprocess ones with the caller hosting a share.
MANAGER_SETUPS = [*MANAGER_TYPES, "subprocess+caller", "async_subprocess+caller"]


@pytest.fixture(params=MANAGER_TYPES)
def manager_type(request):
    return request.param


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

"""Manager fixtures: every semantic test runs against each manager type."""

from __future__ import annotations

import pytest

from ding_env import create_env_manager
from tests.conftest import manager_cfg

MANAGER_TYPES = ["base", "subprocess", "async_subprocess"]


@pytest.fixture(params=MANAGER_TYPES)
def manager_type(request):
    return request.param


@pytest.fixture
def make_manager(manager_type):
    managers = []

    def make(env_fn, **cfg):
        manager = create_env_manager(manager_cfg(manager_type, **cfg), env_fn)
        managers.append(manager)
        return manager

    yield make
    for manager in managers:
        manager.close()

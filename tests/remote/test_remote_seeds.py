"""Seeds of any size a local manager takes reach remote envs; a seed that cannot travel gives the server back."""

from __future__ import annotations

import pytest

from ding_env import create_env_manager
from ding_env.checker.target import resolve_target
from ding_env.errors import ConfigError
from ding_env.remote.served_envs import env_fns_for
from tests.remote.serving import CARTPOLE, serving
from tests.support import assert_same, trajectory


@pytest.fixture(scope="module")
def server():
    with serving(CARTPOLE, 2) as (address, _):
        yield address


@pytest.mark.parametrize("seed", [2**64 - 1, 2**64, 2**200 + 7])
def test_a_seed_beyond_msgpacks_integers_gives_the_local_managers_trajectory(seed, server):
    fns = env_fns_for(*resolve_target(CARTPOLE), 2)
    remote = trajectory("remote", fns, steps=20, seed=seed, servers=[server])
    assert_same(remote, trajectory("base", fns, steps=20, seed=seed))


def test_a_seed_too_long_to_send_is_refused_and_the_server_serves_the_next_manager_at_once(server):
    fns = env_fns_for(*resolve_target(CARTPOLE), 2)
    with create_env_manager({"type": "remote", "servers": [server]}, fns) as manager:
        manager.seed(10**5000)  # more digits than Python turns into a str by default
        with pytest.raises(ConfigError, match="env 0's seed has more than 4000 digits, where a remote env's seed"):
            manager.launch()
    with create_env_manager({"type": "remote", "servers": [server], "connect_timeout": 5}, fns) as manager:
        manager.seed(0)
        manager.launch()  # not refused as busy for the lease timeout
        assert sorted(manager.ready_obs) == [0, 1]

"""Seeds of any size a local manager takes reach remote envs; a seed that cannot travel gives the server back."""

from __future__ import annotations

import numpy as np
import pytest

from ding_env import create_env_manager
from ding_env.checker.target import resolve_target
from ding_env.errors import ConfigError, EnvCrashedError, EnvError
from ding_env.remote.served_envs import env_fns_for
from tests.remote.serving import CARTPOLE, free_port, serving
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


def test_a_seed_too_long_after_launch_is_refused_and_a_restarted_server_gets_the_seed_before_it():
    refused = (10**5000, ConfigError, "env 0's seed has more than 4000 digits")
    obs = first_obs_after_restart(CARTPOLE, None, refused=refused)
    np.testing.assert_array_equal(obs, local_first_obs(CARTPOLE, 0))  # seed 0 still, not the refused one


def test_a_seed_the_env_refuses_on_a_restarted_server_is_reported_and_the_next_seed_and_reset_serve_again():
    fns = env_fns_for(*resolve_target("tests.remote.envs:UnluckySeedEnv"), 2)
    port = free_port()
    target = "tests.remote.envs:UnluckySeedEnv"
    with serving(target, 2, bind=f"tcp://127.0.0.1:{port}") as (address, server):
        with create_env_manager({"type": "remote", "servers": [address], "connect_timeout": 5}, fns) as manager:
            manager.seed(0)
            manager.launch()
            server.kill()
            server.wait()
            with pytest.raises(EnvCrashedError, match="was lost during step"):
                manager.step_batch(np.arange(2), np.zeros(2, dtype=np.int64))
            manager.seed({0: 13})  # kept for when the server is back
            with serving(target, 2, bind=address):
                with pytest.raises(EnvError, match="env 0 failed in seed: ValueError: seed 13 is refused"):
                    manager.reset()
                manager.seed({0: 5})
                manager.reset()
                assert manager.ready_obs_id == [0, 1]
                obs = manager.ready_obs_batch.obs
    with create_env_manager({"type": "base"}, fns) as manager:
        manager.seed({0: 5, 1: 1})
        manager.launch()
        np.testing.assert_array_equal(obs, manager.ready_obs_batch.obs)


def first_obs_after_restart(target, seeds, refused=None):
    """The ready observations after the server restarts: seeded 0 at launch, then ``seeds`` while it was down.

    ``refused``: ``(seed, error type, message)`` of a seed given while the server is up, and refused.
    """
    fns = env_fns_for(*resolve_target(target), 2)
    port = free_port()
    with serving(target, 2, bind=f"tcp://127.0.0.1:{port}") as (address, server):
        with create_env_manager({"type": "remote", "servers": [address], "connect_timeout": 5}, fns) as manager:
            manager.seed(0)
            manager.launch()
            if refused is not None:
                seed, error, message = refused
                with pytest.raises(error, match=message):
                    manager.seed(seed)  # the server is up: refused there, or before it is sent
            server.kill()
            server.wait()
            if seeds is not None:
                manager.seed(seeds)  # not yet known lost: kept for the reconnect, not raised
            with pytest.raises(EnvCrashedError, match="was lost"):
                manager.step_batch(np.arange(2), np.zeros(2, dtype=np.int64))
            with serving(target, 2, bind=address):
                manager.reset()
                return manager.ready_obs_batch.obs


def local_first_obs(target, seeds):
    with create_env_manager({"type": "base"}, env_fns_for(*resolve_target(target), 2)) as manager:
        manager.seed(seeds)
        manager.launch()
        return manager.ready_obs_batch.obs


def test_seeds_given_while_the_server_is_down_reach_every_env_at_the_reconnect():
    obs = first_obs_after_restart(CARTPOLE, 100)
    np.testing.assert_array_equal(obs, local_first_obs(CARTPOLE, 100))  # env 1 seeded 101, as env 0 100


def test_a_seed_the_env_refuses_is_not_kept_and_the_seeds_before_it_are():
    target = "tests.remote.envs:UnluckySeedEnv"
    refused = ({0: 12, 1: 13}, EnvError, "env 1 failed in seed: ValueError: seed 13 is refused")
    obs = first_obs_after_restart(target, None, refused=refused)
    np.testing.assert_array_equal(obs, local_first_obs(target, {0: 12, 1: 1}))  # env 1 keeps its seed 0 + 1

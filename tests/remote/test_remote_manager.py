"""The 'remote' manager over real `ding-env serve` processes on loopback: the local managers' semantics."""

import os
import re
import signal
import time
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from ding_env import DingEnvWrapper, create_env_manager
from ding_env.checker.target import resolve_target
from ding_env.cli import main
from ding_env.errors import ConfigError, EnvCrashedError, EnvError, EnvTimeoutError
from ding_env.remote.errors import ServerError, ServerLostError
from ding_env.remote.served_envs import env_fns_for
from tests.remote.serving import CARTPOLE, child_pids, free_port, serving
from tests.support import arrays_of, assert_same, trajectory

NESTED = "main_config = dict(env=dict(nested=True))\n"  # Dict and Tuple observations, episodes of 3-7 steps


def with_infos(batch):
    return (*arrays_of(batch), batch.info)


def assert_same_with_infos(trace_a, trace_b):
    assert_same([step[:-1] for step in trace_a], [step[:-1] for step in trace_b])
    assert [step[-1] for step in trace_a] == [step[-1] for step in trace_b]


@pytest.fixture(scope="module")
def nested_config(tmp_path_factory):
    path = tmp_path_factory.mktemp("remote") / "nested.py"
    path.write_text(NESTED)
    return str(path)


@pytest.mark.parametrize("shares", [(4,), (2, 2)], ids=["one server of 4", "two servers of 2"])
@pytest.mark.parametrize("local", ["base", "subprocess"])
def test_same_seeds_and_actions_give_the_local_managers_trajectories_bit_for_bit(shares, local, nested_config):
    target = ("tests.envs:CountingEnv", "--config", nested_config)
    fns = env_fns_for(*resolve_target(target[0], nested_config), sum(shares))
    with serving(target[0], shares[0], *target[1:]) as (first, _):
        servers = [first]
        if len(shares) > 1:
            with serving(target[0], shares[1], *target[1:]) as (second, _):
                servers.append(second)
                remote = trajectory("remote", fns, steps=40, record=with_infos, actions=3, servers=servers)
        else:
            remote = trajectory("remote", fns, steps=40, record=with_infos, actions=3, servers=servers)
    assert_same_with_infos(remote, trajectory(local, fns, steps=40, record=with_infos, actions=3))


def test_the_dict_api_env_calls_and_episode_num_work_as_locally():
    fns = env_fns_for(*resolve_target("tests.envs:CountingEnv"), 2)
    results = {}
    with serving("tests.envs:CountingEnv", 2) as (address, _):
        for manager_type, extra in (("base", {}), ("remote", {"servers": [address]})):
            with create_env_manager({"type": manager_type, "episode_num": 2, **extra}, fns) as manager:
                manager.seed(7, dynamic_seed=False)
                manager.launch()
                trace, t = [], 0
                while not manager.done:
                    actions = {env_id: (env_id + t) % 3 for env_id in manager.ready_obs}
                    trace.append(
                        {i: (ts.obs.tolist(), ts.reward.tolist(), ts.done) for i, ts in manager.step(actions).items()}
                    )
                    t += 1
                manager.reset({1: {"offset": 10.0}})
                attributes = (manager.episode_length, manager.current_step(), manager.ready_obs[1][0])
                manager.set_env_attr("marker", ["a", "b"])
                calls = (manager.call_env_method("imported", "zmq", env_ids=[0]), manager.marker)
                results[manager_type] = (trace, attributes, calls, sorted(manager.random_action()))
    assert results["remote"] == results["base"]
    assert results["base"][1][2] == 10.0  # the reset param reached the env


def test_a_registered_type_is_served_with_no_config():
    fns = env_fns_for(*resolve_target("cartpole"), 2)
    with serving("cartpole", 2) as (address, _):
        remote = trajectory("remote", fns, steps=30, servers=[address])
    assert_same(remote, trajectory("base", fns, steps=30))


def test_an_empty_step_steps_no_env_and_returns_nothing():
    fns = env_fns_for(*resolve_target("tests.envs:CountingEnv"), 2)
    with serving("tests.envs:CountingEnv", 2) as (address, _):
        for manager_type in ("remote", "async_remote"):
            with create_env_manager({"type": manager_type, "servers": [address]}, fns) as manager:
                manager.seed(0)
                manager.launch()
                assert manager.step({}) == {}
                assert manager.step_batch([], np.zeros(0, dtype=np.int64)).env_id.tolist() == []
                assert manager.step_batch([0, 1], np.zeros(2, dtype=np.int64)).obs[:, 0].tolist() == [1, 1]


@pytest.mark.parametrize("manager_type", ["remote", "async_remote"])
def test_a_server_must_host_exactly_its_share_and_a_refused_launch_gives_it_back(manager_type):
    fns = env_fns_for(*resolve_target(CARTPOLE), 4)
    with serving(CARTPOLE, 3) as (address, _):
        manager = create_env_manager({"type": manager_type, "servers": [address]}, fns)
        with pytest.raises(ConfigError, match=re.escape(f"server {address} hosts 3 envs") + ".*--envs 4"):
            manager.launch()
        manager.close()
        # The config fixed, at once: the server was held for the failed launch until its lease timeout (Busy).
        with create_env_manager({"type": manager_type, "servers": [address]}, fns[:3]) as manager:
            manager.launch()
            assert sorted(manager.ready_obs) == [0, 1, 2]


@pytest.mark.parametrize(
    "cfg, message",
    [
        ({"type": "remote"}, "servers"),
        ({"type": "remote", "servers": "tcp://127.0.0.1:5555"}, "servers"),
        ({"type": "remote", "servers": ["tcp://127.0.0.1:1"] * 3}, "at most env_num=2"),
        ({"type": "remote", "servers": ["tcp://127.0.0.1:1"], "heartbeat_timeout": 0}, "heartbeat_timeout"),
        (
            {"type": "async_remote", "servers": ["tcp://127.0.0.1:1", "127.0.0.1:5555"]},
            r"'servers': expected endpoints .* such as 'tcp://host:port'.*, got '127\.0\.0\.1:5555'",
        ),
        ({"type": "remote", "servers": ["tcp://127.0.0.1"]}, r"such as 'tcp://host:port'.*, got 'tcp://127\.0\.0\.1'"),
        # As `ding-env serve --bind` refuses them: ports ZeroMQ would wrap or cannot use, and no other process's.
        *[
            ({"type": "remote", "servers": [server]}, rf"a port from 1 to 65535\) or 'ipc://path', got '{server}'")
            for server in ("tcp://127.0.0.1:99999", "tcp://127.0.0.1:0", "inproc://envs")
        ],
        (  # one server serves one client: a second share of the manager there would be refused as busy
            {"type": "remote", "servers": ["tcp://127.0.0.1:1", "tcp://127.0.0.1:1"]},
            r"'servers': expected each endpoint once",
        ),
    ],
)
def test_remote_settings_are_checked(cfg, message):
    with pytest.raises(ConfigError, match=message):
        create_env_manager(cfg, env_fns_for(*resolve_target(CARTPOLE), 2))


def test_a_server_host_name_that_does_not_resolve_is_named_as_such():
    # It said "nothing listens there (connection refused)", as for a port nothing listens on.
    fns = env_fns_for(*resolve_target(CARTPOLE), 2)
    manager = create_env_manager(
        {"type": "remote", "servers": ["tcp://nosuchhost.invalid:5640"], "connect_timeout": 1.0}, fns
    )
    with pytest.raises(ServerLostError, match=r"the host 'nosuchhost\.invalid' does not resolve .*check the host name"):
        manager.launch()
    manager.close()


# A frozen server (SIGSTOP) is noticed only at the heartbeat timeout; the async manager returns the other
# servers' envs before that (its step_wait_timeout), so it meets the frozen one at a later step.
@pytest.mark.parametrize(
    ("stop", "manager_type"),
    [
        ("SIGKILL", "remote"),
        ("SIGINT", "remote"),
        ("SIGSTOP", "remote"),
        ("SIGKILL", "async_remote"),
        ("SIGINT", "async_remote"),
    ],
)
def test_a_lost_server_is_reported_naming_it_the_others_keep_their_results_and_a_restart_serves_again(
    stop, manager_type
):
    fns = env_fns_for(*resolve_target(CARTPOLE), 4)
    port = free_port()
    with serving(CARTPOLE, 2) as (first, _), serving(CARTPOLE, 2, bind=f"tcp://127.0.0.1:{port}") as (second, server):
        manager = create_env_manager({"type": manager_type, "servers": [first, second]}, fns)
        try:
            manager.seed(0)
            manager.launch()
            manager.step_batch(np.arange(4), np.zeros(4, dtype=np.int64))
            os.kill(server.pid, getattr(signal, stop))  # killed, stopped with Ctrl-C, or frozen
            start = time.monotonic()
            with pytest.raises(EnvCrashedError, match=f"server {re.escape(second)} hosting envs \\[2, 3\\]") as error:
                manager.step_batch(np.arange(4), np.zeros(4, dtype=np.int64))
            assert time.monotonic() - start < 4  # within the heartbeat timeout (1.5 s), not a hang
            assert error.value.results.done.tolist() == [False, False, True, True]  # envs 0, 1 stepped normally
            assert sorted(error.value.errors) == [2, 3]
            # Lost during the step (their auto-resets with it): they need a reset, which connects again.
            assert all("was lost during step: " in str(lost) for lost in error.value.errors.values())
            assert manager.ready_obs_id == [0, 1]
            server.kill()
            server.wait()
            with serving(CARTPOLE, 2, bind=second):  # the server comes back on its address
                manager.reset()
                assert manager.ready_obs_id == [0, 1, 2, 3]
                assert manager.step_batch(np.arange(4), np.ones(4, dtype=np.int64)).env_id.tolist() == [0, 1, 2, 3]
                manager.close()  # while the restarted server runs: every env closes cleanly
        finally:
            manager.close()


@pytest.mark.parametrize("manager_type", ["remote", "async_remote"])
def test_a_server_that_froze_and_came_back_serves_the_same_manager_at_its_next_reset(manager_type):
    fns = env_fns_for(*resolve_target(CARTPOLE), 2)
    with serving(CARTPOLE, 2) as (address, server):
        with create_env_manager({"type": manager_type, "servers": [address]}, fns) as manager:
            manager.seed(0)
            manager.launch()
            os.kill(server.pid, signal.SIGSTOP)
            try:
                deadline = time.monotonic() + 10
                with pytest.raises(EnvCrashedError, match=f"server {re.escape(address)} .* was lost during step"):
                    while time.monotonic() < deadline:  # the async manager returns before it notices
                        ready = manager.ready_obs_batch.env_id
                        manager.step_batch(ready, np.zeros(len(ready), dtype=np.int64))
            finally:
                os.kill(server.pid, signal.SIGCONT)
            start = time.monotonic()
            manager.reset()  # the server still holds this manager's lease (for 10 s): it takes it back at once
            assert time.monotonic() - start < 2
            assert manager.step_batch(np.arange(2), np.zeros(2, dtype=np.int64)).env_id.tolist() == [0, 1]


@pytest.mark.parametrize("manager_type", ["remote", "async_remote"])
def test_close_after_a_server_died_unnoticed_is_quiet_but_an_env_failing_to_close_still_raises(manager_type, tmp_path):
    config = tmp_path / "faults.py"
    config.write_text("main_config = dict(env=dict(fail_close=True))\n")
    served = ("tests.envs:FaultEnv", 1, "--config", str(config))
    fns = env_fns_for(*resolve_target("tests.envs:FaultEnv", str(config)), 2)
    with serving(CARTPOLE, 2) as (address, server):
        manager = create_env_manager(
            {"type": manager_type, "servers": [address]}, env_fns_for(*resolve_target(CARTPOLE), 2)
        )
        manager.launch()
        server.kill()  # no step notices: close() does
        server.wait()
        manager.close()  # the server's envs went with it, as a dead worker's do
        assert manager.closed
    with serving(*served) as (dead, server), serving(*served) as (live, _):
        manager = create_env_manager({"type": manager_type, "servers": [dead, live]}, fns)
        manager.launch()
        server.kill()
        server.wait()
        with pytest.raises(EnvError, match=r"^env 1 failed in close: OSError: injected close failure") as raised:
            manager.close()
        assert "also" not in str(raised.value)  # env 0 was lost with its server, not a failed close
        assert manager.closed


def test_ding_env_run_collects_and_evaluates_on_servers_with_no_code(capsys):
    with serving(CARTPOLE, 2) as (collector, _), serving(CARTPOLE, 1) as (evaluator, _):
        code = main(
            [
                "run", CARTPOLE, "--steps", "200", "--eval-episodes", "2", "--manager", "remote",
                "--set", "env.collector_env_num=2", "--set", "env.evaluator_env_num=1",
                "--set", f"env.manager.servers=['{collector}']",
                "--set", f"env.evaluator_manager.servers=['{evaluator}']",
            ]
        )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "RemoteEnvManager" in out and re.search(r"eval episodes\s+2", out)


def test_the_async_remote_manager_waiting_for_every_env_gives_the_same_trajectories(nested_config):
    fns = env_fns_for(*resolve_target("tests.envs:CountingEnv", nested_config), 4)
    with serving("tests.envs:CountingEnv", 2, "--config", nested_config) as (first, _):
        with serving("tests.envs:CountingEnv", 2, "--config", nested_config) as (second, _):
            remote = trajectory(
                "async_remote",
                fns,
                steps=30,
                record=with_infos,
                actions=3,
                servers=[first, second],
                step_wait_timeout=60,
            )
    assert_same_with_infos(remote, trajectory("base", fns, steps=30, record=with_infos, actions=3))


def test_the_async_remote_manager_returns_the_fast_servers_envs_first(tmp_path):
    slow = tmp_path / "slow.py"
    slow.write_text("main_config = dict(env=dict(step_sleep=1.5))\n")
    fns = env_fns_for(*resolve_target("tests.envs:CountingEnv"), 4)
    with (
        serving("tests.envs:CountingEnv", 2) as (fast, _),
        serving("tests.envs:CountingEnv", 2, "--config", str(slow)) as (
            slow_server,
            _,
        ),
    ):
        cfg = {"type": "async_remote", "servers": [fast, slow_server], "wait_num": 2, "step_wait_timeout": None}
        with create_env_manager(cfg, fns) as manager:
            manager.seed(0)
            manager.launch()
            start = time.monotonic()
            first = manager.step({env_id: 1 for env_id in range(4)})
            assert (
                sorted(first) == [0, 1] and time.monotonic() - start < 1.0
            )  # the fast server's envs, not the 1.5 s ones
            assert manager.ready_obs_id == [0, 1]
            arrived = set(manager.step({0: 1, 1: 1}))  # envs 0, 1 step again while 2, 3 are still stepping
            while not {2, 3} <= arrived:
                arrived |= set(manager.step({}))  # just collects
            assert time.monotonic() - start < 5
            manager.step({env_id: 1 for env_id in manager.ready_obs_id})
            manager.reset()  # with steps in flight: they finish first, then every env starts over
            assert manager.ready_obs_id == [0, 1, 2, 3]


def test_the_async_remote_manager_gets_a_servers_first_envs_while_the_server_steps_the_rest(tmp_path):
    slow = tmp_path / "slow.py"
    slow.write_text("main_config = dict(env=dict(step_sleep=0.2))\n")
    fns = env_fns_for(*resolve_target("tests.envs:CountingEnv", str(slow)), 4)
    with serving("tests.envs:CountingEnv", 4, "--config", str(slow), "--workers", "0") as (address, _):
        cfg = {"type": "async_remote", "servers": [address], "wait_num": 2, "step_wait_timeout": None}
        with create_env_manager(cfg, fns) as manager:
            manager.seed(0)
            manager.launch()
            first = manager.step({env_id: 1 for env_id in range(4)})
            assert sorted(first) == [0, 2]  # the server answered for envs 0, 2 before stepping 1, 3
            assert sorted(manager.step({0: 1, 2: 1})) == [1, 3]  # envs 0, 2 step again meanwhile
            assert sorted(manager.step({1: 1, 3: 1})) == [0, 2]
            rewards = [timestep.reward.item() for timestep in manager.step({}).values()]
            assert rewards == [3.0, 3.0]  # envs 1, 3: their second steps (reward = action + step count)


@pytest.mark.parametrize("connect_timeout", [0.5, None], ids=["connect_timeout=0.5", "default"])
def test_launch_against_no_server_fails_soon_naming_the_address_and_what_to_check(connect_timeout):
    address = f"tcp://127.0.0.1:{free_port()}"
    cfg = {"type": "remote", "servers": [address]}
    if connect_timeout is not None:
        cfg["connect_timeout"] = connect_timeout
    manager = create_env_manager(cfg, [lambda: None])
    start = time.monotonic()
    with pytest.raises(ServerLostError) as raised:
        manager.launch()
    elapsed = time.monotonic() - start
    manager.close()
    # Nothing listens: a few seconds (the default connect_timeout, 60 s, is for a server that answers), or less.
    assert elapsed < (2 if connect_timeout else 10), elapsed
    message = str(raised.value)
    assert message.startswith(f"server {address} did not answer hello: nothing listens there"), message
    assert f"ding-env serve TARGET --envs N --bind {address}" in message and "`servers`" in message


def test_run_refuses_an_evaluator_on_the_collectors_server_naming_the_key_to_set(capsys):
    with serving(CARTPOLE, 2) as (collector, _):
        code = main(
            [
                "run", CARTPOLE, "--steps", "50", "--eval-episodes", "1", "--manager", "remote",
                "--set", "env.collector_env_num=2", "--set", "env.evaluator_env_num=2",
                "--set", f"env.manager.servers=['{collector}']",
            ]
        )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "env.evaluator_manager.servers: the evaluator needs env servers of its own" in err
    # Without --evaluator, as it said, the server's envs are collector envs (Atari's end at each life lost).
    assert f"['{collector}']" in err and "ding-env serve TARGET --envs 2 --evaluator: evaluator envs" in err


BATCHES = "main_config = dict(env=dict(num_envs=3, env_cfg=dict(limit=4)))\n"  # CountingBatchEnvs of 3 sub-envs


@pytest.mark.parametrize("manager_type", ["remote", "async_remote"])
def test_servers_host_batch_envs_with_the_local_managers_trajectories(tmp_path, manager_type):
    """Two servers of one batch env of 3 each: env ids 0..5, seeds, auto-reset and infos as in the base manager."""
    config = tmp_path / "batches.py"
    config.write_text(BATCHES)
    fns = env_fns_for(*resolve_target("tests.envs:CountingBatchEnv", str(config), batch_envs=True), 2)
    extra = {"step_wait_timeout": 60} if manager_type == "async_remote" else {}
    with (
        serving("tests.envs:CountingBatchEnv", 1, "--config", str(config)) as (first, _),
        serving("tests.envs:CountingBatchEnv", 1, "--config", str(config)) as (second, _),
    ):
        remote = trajectory(manager_type, fns, steps=20, record=with_infos, actions=3, servers=[first, second], **extra)
    local = trajectory("base", fns, steps=20, record=with_infos, actions=3)
    assert len(local[0][0]) == 6  # both batch envs' sub-envs stepped
    assert any(step[4].any() for step in local)  # episodes reached their limit
    assert_same_with_infos(remote, local)


def test_a_server_too_small_for_its_batch_envs_is_named_with_the_envs_to_serve(tmp_path):
    config = tmp_path / "batches.py"
    config.write_text(BATCHES)
    fns = env_fns_for(*resolve_target("tests.envs:CountingBatchEnv", str(config), batch_envs=True), 2)
    with serving("tests.envs:CountingBatchEnv", 1, "--config", str(config)) as (address, _):
        manager = create_env_manager({"type": "remote", "servers": [address]}, fns)
        with pytest.raises(ConfigError, match=r"hosts 3 envs, .* envs 0\.\.5 \(6\): start it with --envs 2"):
            manager.launch()
        manager.close()


def test_a_server_whose_batch_envs_have_another_size_is_named_with_both_envs(tmp_path):
    """The server runs with the right --envs but batch envs of 2: the count differs, and --envs is not the fix."""
    config = tmp_path / "batches.py"
    config.write_text(BATCHES)
    served = tmp_path / "pairs.py"
    served.write_text("main_config = dict(env=dict(num_envs=2, env_cfg=dict(limit=4)))\n")
    fns = env_fns_for(*resolve_target("tests.envs:CountingBatchEnv", str(config), batch_envs=True), 2)
    with serving("tests.envs:CountingBatchEnv", 2, "--config", str(served)) as (address, _):
        manager = create_env_manager({"type": "remote", "servers": [address]}, fns)
        expected = (
            r"hosts 4 envs \(CountingBatchEnv\(num_envs=2\); this manager builds CountingBatchEnv\(num_envs=3\)\), "
            r"but .* envs 0\.\.5 \(6\): start it with --envs 2 and this env config"
        )
        with pytest.raises(ConfigError, match=expected):
            manager.launch()
        manager.close()


def test_more_servers_than_batch_envs_is_refused_at_launch(tmp_path):
    config = tmp_path / "batches.py"
    config.write_text(BATCHES)
    fns = env_fns_for(*resolve_target("tests.envs:CountingBatchEnv", str(config), batch_envs=True), 1)
    manager = create_env_manager({"type": "remote", "servers": ["tcp://127.0.0.1:1", "tcp://127.0.0.1:2"]}, fns)
    with pytest.raises(ConfigError, match=r"2 servers, but the envs split into 1 runs of whole batch envs"):
        manager.launch()
    manager.close()


def test_a_wrapper_config_with_batch_serves_its_batch_env(tmp_path):
    """`ding-env serve gym:CartPole-v1 --config` with ``batch=4``: one Gymnasium vector env of 4, as locally."""
    config = tmp_path / "batch.py"
    config.write_text("main_config = dict(env=dict(batch=4))\n")
    fns = env_fns_for(*resolve_target("gym:CartPole-v1", str(config), batch_envs=True), 1)
    with serving("gym:CartPole-v1", 1, "--config", str(config)) as (address, _):
        remote = trajectory("remote", fns, steps=30, servers=[address])
    assert_same(remote, trajectory("base", fns, steps=30))
    assert len(remote[0][0]) == 4


def test_abnormal_results_name_their_envs_by_the_managers_ids_as_locally(tmp_path):
    config = tmp_path / "failing.py"
    config.write_text("main_config = dict(env=dict(fail_step_at=2))\n")  # every episode's third step raises
    fns = env_fns_for(*resolve_target("tests.envs:CountingEnv", str(config)), 4)
    with (
        serving("tests.envs:CountingEnv", 2, "--config", str(config)) as (first, _),
        serving("tests.envs:CountingEnv", 2, "--config", str(config)) as (second, _),
    ):
        remote = trajectory("remote", fns, steps=8, record=with_infos, step_error="abnormal", servers=[first, second])
    local = trajectory("base", fns, steps=8, record=with_infos, step_error="abnormal")
    assert any(info.get("abnormal") for step in local for info in step[-1])
    assert_same_with_infos(remote, local)


@pytest.mark.parametrize("manager_type", ["remote", "async_remote"])
def test_a_server_hosting_another_env_than_the_managers_is_warned_about(manager_type):
    # A wrong address in servers ran the server's CartPole under a Pendulum config without a word.
    pendulum = env_fns_for(*resolve_target("gym:Pendulum-v1"), 2)
    with serving(CARTPOLE, 2) as (address, _):
        with create_env_manager({"type": manager_type, "servers": [address]}, pendulum) as manager:
            with pytest.warns(
                UserWarning, match=r"hosts DingEnvWrapper\(CartPole-v1\), and this manager's env_fn"
            ) as caught:
                manager.launch()
        # The caller's line, not ding-env's (other warnings, a socket of an earlier test collected now, say, aside).
        named = [warning.filename for warning in caught if "env_fn builds" in str(warning.message)]
        assert named == [__file__]
        # The same env, by the config's id or as a Gymnasium env made by it.
        for cartpole in (
            env_fns_for(*resolve_target(CARTPOLE), 2),
            [lambda: DingEnvWrapper(gym.make("CartPole-v1"))] * 2,
        ):
            with create_env_manager({"type": manager_type, "servers": [address]}, cartpole) as manager:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    manager.launch()
            assert not [warning for warning in caught if "env_fn builds" in str(warning.message)]


@pytest.mark.parametrize("manager_type", ["remote", "async_remote"])
def test_a_step_the_server_cannot_reply_to_leaves_its_envs_needing_a_reset_not_stepping(manager_type):
    fns = env_fns_for(*resolve_target("tests.remote.envs:SetInfoEnv"), 2)
    with serving("tests.remote.envs:SetInfoEnv", 2) as (address, _):
        cfg = {"type": manager_type, "servers": [address], "step_wait_timeout": None}
        with create_env_manager(cfg, fns) as manager:
            manager.seed(0)
            manager.launch()
            # Env 1's info holds a set, which has no wire form; env 0's is its first score (a new info schema).
            with pytest.raises(ServerError, match=r"info\[1\]\['visited'\]") as error:
                manager.step_batch(np.arange(2), np.array([1, 2]))
            assert "envs [0, 1] need a reset" in str(error.value.__notes__)
            assert sorted(error.value.errors) == [0, 1]
            assert error.value.results.done.tolist() == [False, False]  # no episode counted as ended
            assert manager.ready_obs_id == []  # neither is left stepping, nor handed out as ready
            with pytest.raises(ValueError, match="env 0 is not ready for an action \\(status NEEDS_RESET\\)"):
                manager.step_batch(np.arange(2), np.zeros(2, dtype=np.int64))
            manager.reset()
            batch = manager.step_batch(np.arange(2), np.ones(2, dtype=np.int64))
            assert batch.env_id.tolist() == [0, 1]
            assert [info.get("score") for info in batch.info] == [1.5, 1.5]  # the schema announced again


@pytest.mark.parametrize("order", [[0, 2], [2, 0]])
def test_a_lost_workers_idle_envs_come_after_the_envs_asked_for_in_the_order_asked(order):
    fns = env_fns_for(*resolve_target("tests.envs:CountingEnv"), 4)
    with serving("tests.envs:CountingEnv", 4, "--workers", "2") as (address, server):
        cfg = {"type": "remote", "servers": [address], "step_error": "abnormal"}
        with create_env_manager(cfg, fns) as manager:
            manager.seed(0)
            manager.launch()
            children = child_pids(server.pid)
            workers = [pid for pid in children if b"resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_bytes()]
            os.kill(min(workers), signal.SIGKILL)  # the first worker: envs 0 and 1
            batch = manager.step_batch(np.array(order), np.zeros(2, dtype=np.int64))  # step_error='abnormal'
            assert batch.env_id.tolist() == [*order, 1]  # env 1 was idle on the lost worker
            lost = [info.get("abnormal", False) for info in batch.info]
            assert lost == [env_id in (0, 1) for env_id in batch.env_id.tolist()]  # each row its env's


@pytest.mark.parametrize("workers", [(), ("--workers", "1")], ids=["envs in the server", "server's workers"])
def test_an_auto_reset_cut_at_reset_timeout_is_an_env_timeout_error_as_locally(tmp_path, workers):
    # Cut by the server's worker, it came back as an EnvError quoting the timeout, not as the error it was.
    config = tmp_path / "slow_reset.py"
    config.write_text("main_config = dict(env=dict(limit=1, hang_reset_at=2))\n")  # one-step episodes
    with serving("tests.envs:FaultEnv", 1, "--config", str(config), *workers) as (address, _):
        fns = env_fns_for(*resolve_target("tests.envs:FaultEnv", str(config)), 1)
        with create_env_manager({"type": "remote", "servers": [address], "reset_timeout": 0.5}, fns) as manager:
            manager.launch()
            with pytest.raises(EnvTimeoutError, match=r"envs \[0\] did not finish reset within 0.5 s"):
                manager.step({0: 0})


@pytest.mark.parametrize("workers", [(), ("--workers", "1")], ids=["envs in the server", "server's workers"])
def test_an_env_whose_seed_raises_is_an_env_error_naming_it_as_locally(tmp_path, workers):
    # With the envs in the server's process it was a ServerError ("server refused seed") with no env id.
    config = tmp_path / "bad_seed.py"
    config.write_text("main_config = dict(env=dict(fail_seed=True))\n")
    with serving("tests.envs:FaultEnv", 1, "--config", str(config), *workers) as (address, _):
        fns = env_fns_for(*resolve_target("tests.envs:FaultEnv", str(config)), 1)
        with create_env_manager({"type": "remote", "servers": [address]}, fns) as manager:
            manager.launch()
            with pytest.raises(EnvError, match="env 0 failed in seed: ValueError: injected seed failure"):
                manager.seed(0)
                manager.reset()


def _interrupt(*_):
    raise KeyboardInterrupt


@pytest.mark.parametrize("manager_type", ["remote", "async_remote"])
def test_a_ctrl_c_while_several_servers_step_is_raised_at_once_and_a_reset_goes_on(manager_type):
    # With two servers the sync manager waited for every other server's reply before raising the Ctrl-C: for
    # ever when they all hung with no step_timeout.
    fns = env_fns_for(*resolve_target("tests.remote.envs:SlowStepEnv"), 2)
    with (
        serving("tests.remote.envs:SlowStepEnv", 1) as (first, _),
        serving("tests.remote.envs:SlowStepEnv", 1) as (second, _),
    ):
        with create_env_manager({"type": manager_type, "servers": [first, second]}, fns) as manager:
            manager.seed(0)
            manager.launch()
            previous = signal.signal(signal.SIGALRM, _interrupt)
            try:
                signal.setitimer(signal.ITIMER_REAL, 0.2)
                started = time.monotonic()
                with pytest.raises(KeyboardInterrupt):
                    manager.step({0: 0, 1: 0})  # each server's step takes 1.5 s
                assert time.monotonic() - started < 1.4  # the step's reply would come after 1.5 s
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
            manager.reset()  # waits for the steps in flight, whose replies are not taken for the reset's
            timesteps = manager.step({0: 0, 1: 0})  # the async manager may return one env
            assert timesteps and all(timestep.obs[0] == 1 for timestep in timesteps.values())


def test_close_after_another_client_took_the_server_returns_quietly():
    # The envs are the other client's once this manager's lease lapsed: close() raised an EnvError per env (Busy).
    fns = env_fns_for(*resolve_target("tests.envs:CountingEnv"), 1)
    with serving("tests.envs:CountingEnv", 1, "--lease-timeout", "0.5") as (address, _):
        first = create_env_manager({"type": "remote", "servers": [address]}, fns)
        first.launch()
        time.sleep(0.7)
        with create_env_manager({"type": "remote", "servers": [address]}, fns) as second:
            second.launch()
            with pytest.raises(ServerError, match="serving another client"):
                first.step({0: 0})
            first.close()
            assert first.closed
            assert second.step({0: 0})[0].obs[0] == 1  # the other client's envs were not closed


def test_an_env_error_from_a_server_names_the_server():
    fns = [
        *env_fns_for(*resolve_target("tests.envs:CountingEnv"), 1),
        *env_fns_for(*resolve_target("tests.remote.envs:FailingStepEnv"), 1),
    ]
    with (
        serving("tests.envs:CountingEnv", 1) as (first, _),
        serving("tests.remote.envs:FailingStepEnv", 1) as (second, _),
        create_env_manager({"type": "remote", "servers": [first, second]}, fns) as manager,
    ):
        manager.launch()
        manager.step({0: 0, 1: 0})
        with pytest.raises(EnvError, match="env 1 failed in step: ValueError: step failure") as raised:
            manager.step({0: 0, 1: 0})
    assert raised.value.__notes__ == [f"(on server {second})"]  # it named no server: which one to look at?

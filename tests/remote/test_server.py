"""`ding-env serve` as a user runs it: envs served over loopback, bad messages answered, Ctrl-C closes all.

Every server here is a real `ding-env serve` process bound to 127.0.0.1 on a port the system picks.
"""

import os
import re
import signal
import time

import msgspec
import numpy as np
import pytest
import zmq

from ding_env import SyncSubprocessEnvManager
from ding_env.checker.target import resolve_target
from ding_env.cli import main
from ding_env.errors import EnvCrashedError, EnvError
from ding_env.remote.client import ServerConnection
from ding_env.remote.errors import ServerError, ServerLostError, WireError
from ding_env.remote.info_wire import InfoReceiver
from ding_env.remote.messages import read_reply, request_frames
from ding_env.remote.protocol import PROTOCOL, PROTOCOL_VERSION
from ding_env.remote.served_envs import env_fns_for
from ding_env.remote.server import is_loopback
from ding_env.remote.wire import Encoder
from tests.remote.serving import CARTPOLE, assert_ended, child_pids, mapped_segments, serving


@pytest.fixture(scope="module")
def cartpole_server():
    with serving(CARTPOLE, 4) as (address, _):
        yield address


@pytest.fixture
def raw_socket(cartpole_server):
    """A DEALER socket to the server, for messages no client would send."""
    socket = zmq.Context.instance().socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(cartpole_server)
    yield socket
    socket.close()


def ask(socket, frames):
    """Send ``frames`` and return the reply's error (None for an ok reply)."""
    socket.send_multipart(frames)
    assert socket.poll(10_000), "the server did not answer"
    reply = socket.recv_multipart()
    _, _, error = read_reply(reply[1:] if reply[0] == b"" else reply)  # a REQ-style delimiter comes back
    return error


def launched(connection, seed=0):
    """Launch, seed and reset every env of ``connection``; the ids as an int64 array."""
    connection.request("launch", settings={})
    for env_id in range(connection.env_num):
        connection.request("seed", env_id=env_id, seed=seed + env_id, dynamic_seed=True)
    reply = connection.request("reset", env_ids=list(range(connection.env_num)))
    assert (reply["ready"], reply["errors"], reply["lost"]) == (list(range(connection.env_num)), [], [])
    return np.arange(connection.env_num, dtype=np.int64)


@pytest.mark.parametrize(
    ("stop", "code", "said"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 0, "stopped by SIGTERM")]
)
def test_serve_hosts_envs_until_ctrl_c_or_sigterm_then_closes_every_env_and_worker(stop, code, said):
    with serving(CARTPOLE, 2, "--workers", "2") as (address, server):
        assert address.startswith("tcp://127.0.0.1:")
        with ServerConnection(address) as connection:
            env_ids = launched(connection)
            reply = connection.request(
                "step", env_ids=env_ids, actions=np.array([0, 1]), reset_on_done=np.ones(2, dtype=bool)
            )
            assert reply["obs"].shape == (2, 4) and reply["obs"].dtype == np.float32
            workers = child_pids(server.pid)
            assert workers  # the envs run in worker processes
            segments = mapped_segments({server.pid, *workers})
            assert segments  # their results travel through shared memory
        server.send_signal(stop)
        assert server.wait(timeout=30) == code
        said_all = server.stderr.read() + server.stdout.read()
    assert f"ding-env serve: {said}" in said_all and "Traceback" not in said_all and "leaked" not in said_all
    # multiprocessing's resource tracker, a child too, ends once it reads the server's exit.
    assert_ended(workers)
    assert not any(os.path.exists(segment) for segment in segments)


def test_a_request_queued_behind_others_gets_its_timeout_from_when_they_are_answered(tmp_path):
    # Counted from its sending, the third of three steps sent at once ran out of time waiting for the first
    # two, and a server that answered every one was declared lost.
    config = tmp_path / "slow.py"
    config.write_text("main_config = dict(env=dict(step_sleep=0.4))\n")
    with (
        serving("tests.remote.envs:SlowStepEnv", 1, "--config", str(config)) as (address, _),
        ServerConnection(address) as connection,
    ):
        env_ids = launched(connection)
        step = {"env_ids": env_ids, "actions": np.zeros(1, np.int64), "reset_on_done": np.ones(1, dtype=bool)}
        tickets = [connection.send("step", **step) for _ in range(3)]  # answered at about 0.4, 0.8 and 1.2 s
        replies = [connection.receive(ticket, timeout=0.7) for ticket in tickets]
    assert [reply["obs"][0][0] for reply in replies] == [1, 2, 3]


def test_a_server_on_an_ipc_endpoint_removes_its_socket_file_when_stopped(tmp_path):
    # ZeroMQ left the file behind: the next server on that path found it there.
    path = tmp_path / "envs.sock"
    with serving(CARTPOLE, 1, bind=f"ipc://{path}") as (address, server):
        with ServerConnection(address) as connection:
            launched(connection)
        assert path.exists()
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
    assert not path.exists()


def test_sigterm_stops_a_server_whose_workers_env_is_stuck_with_no_worker_traceback(tmp_path):
    # A forked worker inherited the server's SIGTERM handler: stopped by the server, it printed a traceback
    # ending in ding_env.cli.commands.Terminated.
    config = tmp_path / "stuck.py"
    config.write_text("config = dict(env=dict(hang_reset_at=1))\n")
    with serving("tests.envs:FaultEnv", 1, "--config", str(config), "--workers", "1") as (address, server):
        with ServerConnection(address) as connection:
            connection.request("launch", settings={})
            with pytest.raises(ServerLostError, match="no reply within 1.0 s"):
                connection.request("reset", 1.0, env_ids=[0])  # the env's first reset sleeps an hour
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
        stderr = server.stderr.read()
        assert "Traceback" not in stderr and "Terminated" not in stderr, stderr


def test_sigterm_stops_a_server_whose_env_is_stuck_in_a_reset(tmp_path):
    # With the envs in the server's process, a call that never returns kept the serve loop from seeing SIGTERM.
    config = tmp_path / "stuck.py"
    config.write_text("config = dict(env=dict(hang_reset_at=1))\n")
    with serving("tests.envs:FaultEnv", 1, "--config", str(config)) as (address, server):
        with ServerConnection(address) as connection:
            connection.request("launch", settings={})
            # Not the advice for a server that never answered (check that one listens there, and its keys).
            stuck = r"no reply within 1.0 s from a server that answered before: an env of its is stuck"
            with pytest.raises(ServerLostError, match=stuck):
                connection.request("reset", 1.0, env_ids=[0])  # the env's first reset sleeps an hour
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
        assert "ding-env serve: stopped by SIGTERM; every env closed" in server.stdout.read()


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ((), "the envs step in this process; --workers N steps them in N processes"),
        (("--workers", "2"), "in 2 worker processes"),
    ],
)
def test_serve_says_where_the_envs_step_and_keeps_the_address_line_as_scripts_read_it(extra, expected):
    startup = []
    with serving(CARTPOLE, 2, *extra, startup=startup) as (address, _):
        pass
    assert startup[0].endswith(f" at {address}")  # scripts take the address from the end of this line
    assert any(expected in line for line in startup), startup


def test_remote_steps_match_a_local_manager_bit_for_bit(cartpole_server):
    steps, env_num = 60, 4
    local_fns = env_fns_for(*resolve_target(CARTPOLE), env_num)
    with SyncSubprocessEnvManager(local_fns, {}) as local, ServerConnection(cartpole_server) as remote:
        local.seed(0, dynamic_seed=True)
        local.launch()
        env_ids = launched(remote)
        infos = InfoReceiver(env_num)  # step replies carry infos as a table
        np.testing.assert_array_equal(remote.request("ready_obs", env_ids=env_ids)["obs"], local.ready_obs_batch.obs)
        for t in range(steps):
            actions = (env_ids + t // 3) % 2
            expected = local.step_batch(env_ids, actions)
            got = remote.request("step", env_ids=env_ids, actions=actions, reset_on_done=np.ones(4, dtype=bool))
            for field in ("obs", "reward", "done", "truncated"):
                np.testing.assert_array_equal(got[field], getattr(expected, field))
                assert got[field].dtype == getattr(expected, field).dtype
            assert infos.infos(got["env_id"], got) == expected.info
            np.testing.assert_array_equal(
                remote.request("ready_obs", env_ids=env_ids)["obs"], local.ready_obs_batch.obs
            )
        assert remote.request("close") == {"failures": []}


def test_env_errors_travel_by_their_fields(cartpole_server):
    with ServerConnection(cartpole_server) as connection:
        launched(connection)
        with pytest.raises(EnvError) as error:
            connection.request("call", env_ids=[2], name="seed", args=["not a seed"], kwargs={})
        assert error.value.env_id == 2 and error.value.command == "seed" and error.value.remote_traceback
        values = connection.request("get_attr", env_ids=[0, 3], name="observation_space")["values"]
        assert [space.shape for space in values] == [(4,), (4,)]
        connection.request("close")


def test_a_second_client_is_refused_while_the_first_holds_the_envs(cartpole_server):
    with ServerConnection(cartpole_server) as first:
        with pytest.raises(ServerError, match="serving another client .*give each manager servers of its own"):
            ServerConnection(cartpole_server)
        first.request("close")
    with ServerConnection(cartpole_server) as second:  # free again after close
        second.request("close")


def test_a_new_connection_of_the_lease_holders_client_takes_the_lease_at_once(cartpole_server):
    with ServerConnection(cartpole_server) as first:
        launched(first)
        with pytest.raises(ServerError, match="serving another client .*frees the envs after 10 s of silence"):
            ServerConnection(cartpole_server)  # another client waits for the lease to end
        # The same client on a new connection (it gave up the first, as a frozen server's) is served at once.
        with ServerConnection(cartpole_server, client_id=first.client_id) as again:
            assert again.request("launch", settings={})["spaces"][1].n == 2
            with pytest.raises(ServerError, match="serving another client"):
                first.request("ready_obs", env_ids=np.arange(1))  # the old connection lost the lease
            again.request("close")


def valid_step(**changes):
    body = {"env_ids": np.arange(2), "actions": np.zeros(2, dtype=np.int64), "reset_on_done": np.ones(2, dtype=bool)}
    return request_frames("step", 1, {**body, **changes})


def raw(kind, *buffers, protocol=PROTOCOL, version=PROTOCOL_VERSION, **fields):
    """A request header as no client would write it."""
    header = {"protocol": protocol, "version": version, "kind": kind, "seq": 1}
    return [msgspec.msgpack.encode({**header, **fields}), *buffers]


def raw_step(**changes):
    """A step request with fields no client would send (arrays as the wire's array references)."""
    encoder = Encoder()
    fields = {"env_ids": [0, 1], "actions": np.zeros(2, dtype=np.int64), "reset_on_done": [True, True], **changes}
    fields = {name: encoder.array(value) if type(value) is np.ndarray else value for name, value in fields.items()}
    return raw("step", *encoder.frames, **fields)


MALFORMED = {
    "nothing after a REQ delimiter": [b""],
    "not msgpack": [b"\xc1{not json"],
    "header not a map": [msgspec.msgpack.encode([])],
    "unknown request": raw("unpickle"),
    "other protocol version": raw("hello", version=PROTOCOL_VERSION + 7),
    "not the ding-env protocol": raw("hello", protocol="http"),
    "unknown field": raw("hello", pickle=b"gASV"),
    "a client id longer than 64": raw("hello", client_id="x" * 65),
    "missing field": raw("seed", env_id=0),
    "field of the wrong type": raw("seed", env_id="0", seed=1, dynamic_seed=None),
    "ids and flags of different lengths": raw_step(reset_on_done=[True, True, True]),
    "float env ids": raw_step(env_ids=[0.0, 1.0]),
    "an env id beyond int64": raw_step(env_ids=[0, 2**63]),
    "2-d flags": raw_step(reset_on_done=[[True], [True]]),
    "int flags": raw_step(reset_on_done=[1, 1]),
    "ids as an array (protocol 8)": raw_step(env_ids=np.arange(2)),
    "a private attribute": raw("get_attr", env_ids=[0], name="__class__"),
    "a dunder method": raw("call", env_ids=[0], name="__reduce__", args=[], kwargs={"$": "dict", "items": []}),
    "call kwargs not a dict": raw("call", env_ids=[0], name="seed", args=[], kwargs=[1]),
    "reset params of other envs": raw("reset", env_ids=[0], params={"$": "dict", "items": [[1, {"$": "dict"}]]}),
    "array frame missing": raw_step(actions=np.zeros((2, 64), dtype=np.int64))[:1],
    "array of the wrong size": [*raw_step(actions=np.zeros((2, 64), dtype=np.int64))[:1], b"\x00" * 3],
}


# What the error reply says, for some of them.
MALFORMED_SAYS = {
    "ids and flags of different lengths": "2 env ids and 3 reset_on_done flags",
    "float env ids": "Expected `int`, got `float` - at `$.env_ids[0]`",
    "an env id beyond int64": "Expected `int` <= 9223372036854775807 - at `$.env_ids[1]`",
    "2-d flags": "Expected `bool`, got `array` - at `$.reset_on_done[0]`",
    "int flags": "Expected `bool`, got `int` - at `$.reset_on_done[0]`",
    "ids as an array (protocol 8)": "Expected `array`, got `object` - at `$.env_ids`",
}


@pytest.mark.parametrize("name", MALFORMED)
def test_a_malformed_message_gets_an_error_reply_and_the_server_keeps_serving(raw_socket, cartpole_server, name):
    error = ask(raw_socket, MALFORMED[name])
    assert isinstance(error, ServerError), error
    assert MALFORMED_SAYS.get(name, "") in error.message
    if name == "other protocol version":
        assert f"version {PROTOCOL_VERSION + 7}" in error.message and "same ding-env version" in error.message
    with ServerConnection(cartpole_server) as connection:  # still serving
        launched(connection)
        connection.request("close")


def test_a_request_naming_an_env_twice_is_refused(cartpole_server):
    with ServerConnection(cartpole_server) as connection:
        launched(connection)
        for kind, body in (("reset", {"env_ids": [0, 0]}), ("get_attr", {"env_ids": [1, 1], "name": "spec"})):
            with pytest.raises(
                ServerError, match=re.escape(f"env ids [{body['env_ids'][0]}] are named more than once")
            ):
                connection.request(kind, **body)
        assert connection.request("reset", env_ids=[0, 1])["ready"] == [0, 1]
        connection.request("close")


@pytest.mark.parametrize("workers", ["0", "2"], ids=["envs in the server", "2 workers"])
def test_a_step_with_other_than_one_action_per_env_id_is_refused_and_no_env_is_touched(workers):
    with serving(CARTPOLE, 2, "--workers", workers) as (address, _), ServerConnection(address) as connection:
        env_ids = launched(connection)
        flags = np.ones(2, dtype=bool)
        for shape in ((3,), (1,), ()):
            actions = np.zeros(shape, dtype=np.int64)
            expected = f"request 'step': 2 env ids [0, 1] need one action each, got actions of shape {shape}"
            with pytest.raises(ServerError, match=re.escape(expected)):
                connection.request("step", env_ids=env_ids, actions=actions, reset_on_done=flags)
        reply = connection.request("step", env_ids=env_ids, actions=np.zeros(2, dtype=np.int64), reset_on_done=flags)
        assert reply["env_id"].tolist() == [0, 1] and reply["errors"] == {}  # both envs still ready: no reset needed
        connection.request("close")


@pytest.mark.parametrize("workers", ["0", "2"], ids=["envs in the server", "2 workers"])
def test_actions_outside_the_action_space_are_refused_and_no_env_is_touched(workers):
    # A client that is not a ding-env manager reached the envs with them: CartPole asserted, and needed a reset.
    with serving(CARTPOLE, 2, "--workers", workers) as (address, _), ServerConnection(address) as connection:
        env_ids = launched(connection)
        flags = np.ones(2, dtype=bool)
        refused = {
            "is out of range": np.array([0, 5]),
            "is not a whole number": np.array([0.0, 0.7]),
            "has dtype bool": np.array([True, False]),
        }
        for problem, actions in refused.items():
            with pytest.raises(ServerError, match=rf"served envs \(2\): action for env \d {problem}"):
                connection.request("step", env_ids=env_ids, actions=actions, reset_on_done=flags)
        reply = connection.request("step", env_ids=env_ids, actions=np.zeros(2, dtype=np.int64), reset_on_done=flags)
        assert reply["env_id"].tolist() == [0, 1] and reply["errors"] == {}  # both envs still ready: no reset needed
        connection.request("close")


def test_random_bytes_never_crash_the_server(raw_socket, cartpole_server):
    rng = np.random.default_rng(0)
    step = valid_step(actions=np.zeros((2, 64), dtype=np.int64))  # a header and an array frame
    for _ in range(300):
        frames = [rng.bytes(int(rng.integers(0, 64))) for _ in range(int(rng.integers(1, 4)))]
        draw = rng.random()
        if draw < 1 / 3:  # a real header with garbage after it
            frames = [*valid_step()[:1], *frames]
        elif draw < 2 / 3:  # a real message with a few bytes of its header changed
            head = bytearray(step[0])
            for position in rng.integers(0, len(head), int(rng.integers(1, 4))):
                head[position] = int(rng.integers(0, 256))
            frames = [bytes(head), *step[1:]]
        raw_socket.send_multipart(frames)
    answered = 0
    while raw_socket.poll(2_000):
        raw_socket.recv_multipart()
        answered += 1
    assert answered == 300
    with ServerConnection(cartpole_server) as connection:
        launched(connection)
        connection.request("close")


def test_an_info_without_wire_encoding_is_an_error_naming_env_and_key():
    with serving("tests.remote.envs:SetInfoEnv", 2) as (address, _), ServerConnection(address) as connection:
        env_ids = launched(connection)
        with pytest.raises(ServerError) as error:
            connection.request("step", env_ids=env_ids, actions=np.array([0, 2]), reset_on_done=np.ones(2, dtype=bool))
        assert "info[1]['visited']" in error.value.message and "set" in error.value.message
        reply = connection.request("step", env_ids=env_ids, actions=np.array([1, 1]), reset_on_done=np.ones(2, bool))
        assert reply["env_id"].tolist() == [0, 1]  # the server serves on
        connection.request("close")


@pytest.mark.parametrize(
    "address, loopback",
    [
        ("tcp://127.0.0.1:5555", True),
        ("tcp://127.0.0.2:*", True),
        ("tcp://localhost:5555", True),
        ("tcp://[::1]:5555", True),
        ("ipc:///tmp/envs", True),
        ("tcp://0.0.0.0:5555", False),
        ("tcp://*:5555", False),
        ("tcp://eth0:5555", False),
        ("tcp://10.0.0.5:5555", False),
    ],
)
def test_only_loopback_endpoints_count_as_local(address, loopback):
    assert is_loopback(address) is loopback


def test_a_public_bind_is_refused_without_insecure(capsys):
    assert main(["serve", CARTPOLE, "--envs", "1", "--bind", "tcp://0.0.0.0:5555"]) == 2
    assert "refusing to bind 'tcp://0.0.0.0:5555'" in capsys.readouterr().err


def test_envs_that_cannot_be_built_are_named_before_the_server_says_ready(capsys, tmp_path, monkeypatch):
    assert main(["serve", "gym:NoSuch-v0", "--envs", "2", "--bind", "tcp://127.0.0.1:*"]) == 2
    captured = capsys.readouterr()
    assert "gym:NoSuch-v0: Gymnasium has no such env id" in captured.err and "ready" not in captured.out
    (tmp_path / "unbuildable.py").write_text(
        "from tests.checker.broken_envs import GoodEnv\n\n\n"
        "class Unbuildable(GoodEnv):\n"
        "    def __init__(self, cfg=None):\n"
        "        raise RuntimeError('no simulator here')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["serve", "unbuildable:Unbuildable", "--envs", "2", "--bind", "tcp://127.0.0.1:*"]) == 1
    captured = capsys.readouterr()
    assert "ding-env serve failed: RuntimeError: no simulator here" in captured.err
    assert f"(at {tmp_path / 'unbuildable.py'}:6)" in captured.err and "ready" not in captured.out


def test_a_value_without_encoding_is_refused_before_it_leaves_the_client(cartpole_server):
    with ServerConnection(cartpole_server) as connection:
        with pytest.raises(WireError, match=r"set_attr values\[0\]: a set"):
            connection.request("set_attr", env_ids=[0], name="x", values=[{1}])
        connection.request("close")


@pytest.mark.parametrize("fault", ["SIGKILL", "SIGSTOP"])
def test_a_dead_or_frozen_server_is_reported_within_the_heartbeat_timeout(fault):
    with serving(CARTPOLE, 2) as (address, server), ServerConnection(address, timeout=60) as connection:
        env_ids = launched(connection)
        workers = child_pids(server.pid)
        os.kill(server.pid, getattr(signal, fault))
        start = time.monotonic()
        # What it may be: the client cannot tell a dead server from a frozen one.
        says = f"server {address} did not answer step: the connection dropped .*stopped answering ZeroMQ's heartbeats"
        with pytest.raises(ServerLostError, match=f"{says} for 1.5 s as a frozen or stopped process does"):
            connection.request("step", env_ids=env_ids, actions=np.zeros(2, dtype=np.int64), reset_on_done=env_ids > 0)
        assert time.monotonic() - start < 4  # the default heartbeat timeout is 1.5 s; the request's is 60 s
        server.kill()
        assert_ended(workers)  # workers end when their server dies


def test_requests_sent_to_several_servers_before_any_reply_run_in_parallel(tmp_path):
    config = tmp_path / "slow.py"
    config.write_text("main_config = dict(env=dict(step_sleep=1.0))\n")
    slow = ("tests.envs:CountingEnv", 1, "--config", str(config))
    with serving(*slow) as (first, _), serving(*slow) as (second, _):
        with ServerConnection(first) as one, ServerConnection(second) as two:
            env_ids = launched(one)
            launched(two)
            step = dict(env_ids=env_ids, actions=np.ones(1, dtype=np.int64), reset_on_done=np.ones(1, dtype=bool))
            start = time.monotonic()
            tickets = [one.send("step", **step), two.send("step", **step)]
            replies = [one.receive(tickets[0]), two.receive(tickets[1])]
            assert time.monotonic() - start < 1.7  # one 1 s step's time, not two
            assert [reply["reward"].tolist() for reply in replies] == [[[2.0]], [[2.0]]]
            one.request("close")
            two.request("close")


def test_an_env_error_and_a_dead_worker_come_back_with_the_other_envs_results(tmp_path):
    config = tmp_path / "faults.py"
    config.write_text("main_config = dict(env=dict(raise_every=3, crash_every=4))\n")
    served = ("tests.envs:FaultEnv", 2, "--config", str(config), "--workers", "2")
    with serving(*served) as (address, _), ServerConnection(address) as conn:
        launched(conn)

        def step(*env_ids):
            ids = np.array(env_ids)
            return conn.request("step", env_ids=ids, actions=np.zeros_like(ids), reset_on_done=np.ones(len(ids), bool))

        assert step(0, 1)["errors"] == {} and step(0)["errors"] == {}  # episodes last 3 steps at least
        reply = step(0, 1)  # env 0's third step raises; env 1 steps
        assert list(reply["errors"]) == [0] and reply["done"].tolist() == [True, False]
        assert isinstance(reply["errors"][0], EnvError) and "injected error at step 3" in reply["errors"][0].message
        conn.request("reset", env_ids=[0])
        reply = step(0, 1)  # env 0's fourth step kills its worker; env 1's third raises
        assert isinstance(reply["errors"][0], EnvCrashedError) and reply["errors"][0].env_ids == [0]
        assert isinstance(reply["errors"][1], EnvError) and reply["errors"][1].env_id == 1
        assert conn.request("reset", env_ids=[0, 1])["ready"] == [0, 1]  # a new worker serves env 0
        assert step(0)["errors"] == {}
        conn.request("close")


def test_a_silent_client_loses_its_envs_to_the_next_after_the_lease_timeout():
    with serving(CARTPOLE, 1, "--lease-timeout", "0.5") as (address, _), ServerConnection(address) as first:
        launched(first)
        time.sleep(0.7)
        with ServerConnection(address) as second:
            assert second.request("launch", settings={})["spaces"][1].n == 2  # fresh envs for the new client
            with pytest.raises(ServerError, match="serving another client .*give each manager servers of its own"):
                first.request("ready_obs", env_ids=np.arange(1))
            second.request("close")


class CreatesFileWhenUnpickled:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return open, (self.path, "w")


def test_pickled_bytes_are_never_unpickled(raw_socket, tmp_path):
    import pickle

    marker = tmp_path / "unpickled"
    payload = pickle.dumps(CreatesFileWhenUnpickled(str(marker)))
    for frames in ([payload], [*request_frames("hello", 1, {})[:1], payload], [payload, payload]):
        assert isinstance(ask(raw_socket, frames), ServerError)
    assert not marker.exists()


def test_a_reply_later_than_the_timeout_is_dropped_and_the_next_request_gets_its_own(tmp_path):
    config = tmp_path / "slow.py"
    config.write_text("main_config = dict(env=dict(step_sleep=1.0))\n")
    with serving("tests.envs:CountingEnv", 1, "--config", str(config)) as (address, _):
        with ServerConnection(address) as connection:
            env_ids = launched(connection)
            step = dict(env_ids=env_ids, actions=np.ones(1, dtype=np.int64), reset_on_done=np.ones(1, dtype=bool))
            with pytest.raises(ServerLostError, match="did not answer step: no reply within 0.3 s"):
                connection.request("step", timeout=0.3, **step)
            assert connection.request("get_attr", env_ids=[0], name="episode_length")["values"][0] >= 3
            connection.request("close")


def test_an_oversized_message_drops_its_sender_and_the_server_serves_on():
    with serving(CARTPOLE, 1, "--max-message-mb", "0.01") as (address, _):
        socket = zmq.Context.instance().socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.connect(address)
        try:
            big = np.zeros(100_000, dtype=np.uint8)  # 100 kB against a 10 kB limit
            socket.send_multipart(request_frames("set_attr", 1, {"env_ids": [0], "name": "x", "values": [big]}))
            assert not socket.poll(1000)  # no reply: the connection was dropped
        finally:
            socket.close()
        with ServerConnection(address) as connection:
            launched(connection)
            connection.request("close")


def test_a_step_longer_than_the_heartbeat_timeout_is_not_a_lost_server(tmp_path):
    config = tmp_path / "slow.py"
    config.write_text("main_config = dict(env=dict(step_sleep=2.5))\n")
    with serving("tests.envs:CountingEnv", 1, "--config", str(config)) as (address, _):
        with ServerConnection(address, heartbeat_timeout=1.0) as connection:
            env_ids = launched(connection)
            step = dict(env_ids=env_ids, actions=np.ones(1, dtype=np.int64), reset_on_done=np.ones(1, dtype=bool))
            assert connection.request("step", **step)["reward"].tolist() == [
                [2.0]
            ]  # the server's I/O thread answers pings
            connection.request("close")

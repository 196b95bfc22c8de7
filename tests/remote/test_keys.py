"""CurveZMQ keys: a server started with --keys answers only clients holding an admitted key."""

import re
import stat

import numpy as np
import pytest

from ding_env import create_env_manager
from ding_env.checker.target import resolve_target
from ding_env.cli import main
from ding_env.errors import ConfigError
from ding_env.remote.errors import ServerLostError
from ding_env.remote.served_envs import env_fns_for
from tests.remote.serving import CARTPOLE, serving


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    folder = tmp_path_factory.mktemp("keys")
    assert main(["keygen", str(folder)]) == 0
    return folder


def test_keygen_writes_two_key_pairs_with_private_secret_files(keys):
    names = sorted(path.name for path in keys.iterdir())
    assert names == ["client.key", "client.key_secret", "server.key", "server.key_secret"]
    for name in ("client.key_secret", "server.key_secret"):
        assert stat.S_IMODE((keys / name).stat().st_mode) == 0o600


def remote(address, **cfg):
    fns = env_fns_for(*resolve_target(CARTPOLE), 2)
    return create_env_manager({"type": "remote", "servers": [address], "connect_timeout": 1.0, **cfg}, fns)


def test_a_client_with_the_admitted_key_steps(keys):
    with serving(CARTPOLE, 2, "--keys", str(keys)) as (address, _), remote(address, keys_dir=str(keys)) as manager:
        manager.seed(0)
        manager.launch()
        assert manager.step_batch(np.arange(2), np.zeros(2, dtype=np.int64)).env_id.tolist() == [0, 1]


def test_a_client_without_a_key_or_with_another_key_is_refused_and_told_to_check_its_keys(keys, tmp_path):
    other = tmp_path / "other"
    assert main(["keygen", str(other)]) == 0
    (other / "server.key").write_bytes((keys / "server.key").read_bytes())  # the right server, an unknown client
    hints = {None: "a server started with --keys answers only clients holding its keys: give the manager keys_dir"}
    hints[str(other)] = f"with keys_dir {str(other)!r} the server must run with --keys, admitting that folder's"
    with serving(CARTPOLE, 2, "--keys", str(keys)) as (address, _):
        for keys_dir, hint in hints.items():
            manager = remote(address, keys_dir=keys_dir, connect_timeout=10.0)  # dropped at once; room for a busy CI
            with pytest.raises(ServerLostError, match=re.escape(f"server {address} did not answer hello")) as lost:
                manager.launch()
            assert hint in str(lost.value)
            manager.close()
        with remote(address, keys_dir=str(keys)) as manager:  # still serving admitted clients
            manager.launch()


def test_a_client_with_keys_against_a_server_without_is_told_to_check_its_keys(keys):
    with serving(CARTPOLE, 2) as (address, _):
        manager = remote(address, keys_dir=str(keys), connect_timeout=10.0)
        with pytest.raises(ServerLostError, match=re.escape(f"server {address} did not answer hello")) as lost:
            manager.launch()
        assert "(a server without keys drops clients with keys)" in str(lost.value)
        manager.close()


def test_a_missing_key_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match="client.key_secret' is missing: `ding-env keygen DIR` writes it"):
        remote("tcp://127.0.0.1:1", keys_dir=str(tmp_path)).launch()
    assert main(["serve", CARTPOLE, "--keys", str(tmp_path), "--bind", "tcp://127.0.0.1:*"]) == 2


def test_a_server_whose_keys_folder_holds_a_file_that_is_no_key_refuses_to_start_naming_it(keys, tmp_path, capsys):
    folder = tmp_path / "keys"
    folder.mkdir()
    for path in keys.iterdir():
        (folder / path.name).write_bytes(path.read_bytes())
    (folder / "._client.key").write_bytes(b"\x00\x05")  # a hidden file (macOS's metadata): skipped, as pyzmq skips it
    (folder / "notes.key").write_text("")  # it would make the server admit no client at all
    assert main(["serve", CARTPOLE, "--keys", str(folder), "--bind", "tcp://127.0.0.1:*"]) == 2
    assert re.search(
        r"key file '.*notes\.key' is not a ZeroMQ certificate.*move other files out", capsys.readouterr().err
    )


def test_keygen_refuses_a_folder_holding_keys_unless_forced(tmp_path, capsys):
    # It overwrote them silently, locking out every client that held the old keys.
    assert main(["keygen", str(tmp_path)]) == 0
    old = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    capsys.readouterr()
    assert main(["keygen", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"ding-env keygen: {str(tmp_path)!r} holds keys already (server.key, server.key_secret" in err
    assert "--force to replace them" in err
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == old
    assert main(["keygen", str(tmp_path), "--force"]) == 0
    new = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    assert set(new) == set(old) and all(new[name] != old[name] for name in old)
    assert stat.S_IMODE((tmp_path / "server.key_secret").stat().st_mode) == 0o600


def test_keygen_of_a_file_is_a_usage_error(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("mine")
    assert main(["keygen", str(afile)]) == 2  # a FileExistsError traceback before
    assert f"ding-env keygen: {str(afile)!r} is a file, not a folder" in capsys.readouterr().err
    assert main(["keygen", str(afile / "keys")]) == 2
    assert f"ding-env keygen: cannot write keys to {str(afile / 'keys')!r}" in capsys.readouterr().err
    assert afile.read_text() == "mine"


@pytest.mark.parametrize(
    "bind", ["garbage", "tcp://0.0.0.0", "tcp://127.0.0.1:99999", "tcp://127.0.0.1:0", "inproc://envs"]
)
def test_serve_names_a_bind_that_is_no_zeromq_endpoint_before_asking_for_keys(capsys, bind):
    # It said "refusing to bind 'garbage': other machines could reach it ...", as if it were a valid address.
    assert main(["serve", CARTPOLE, "--bind", bind]) == 2
    err = capsys.readouterr().err
    assert f"ding-env serve: cannot bind {bind!r}: not a ZeroMQ endpoint; expected tcp://HOST:PORT" in err
    assert "other machines" not in err

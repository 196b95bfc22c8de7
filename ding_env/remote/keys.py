"""CurveZMQ keys: a server that only answers clients holding a key it knows, over encrypted connections.

``ding-env keygen DIR`` writes two key pairs in ZeroMQ's certificate format: ``server.key`` /
``server.key_secret`` and ``client.key`` / ``client.key_secret``. The server needs
``server.key_secret`` and the public keys of the clients it admits (``*.key``, in its ``--keys``
folder); a client needs ``client.key_secret`` and ``server.key`` (in its manager's ``keys_dir``).
A client without an admitted key (or with keys, against a server without) has its connection dropped at
the handshake; its error says which keys to check.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator

from ding_env.errors import ConfigError

SERVER, CLIENT = "server", "client"
# The files generate() writes.
KEY_FILES = tuple(f"{name}.key{tail}" for name in (SERVER, CLIENT) for tail in ("", "_secret"))


def generate(folder: str | Path, force: bool = False) -> list[Path]:
    """Write a server and a client key pair into ``folder`` (secret files readable by their owner only).

    Args:
        folder: Where the four key files go; made (with its parents) when missing.
        force: Replace key files already in ``folder``. New keys lock out every client and server still
            holding the old ones, so this must be asked for.

    Raises:
        ConfigError: When ``folder`` is a file or cannot be written, or holds key files and ``force`` is False.
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{str(folder)!r} is a file, not a folder: give the folder the keys go in")
    existing = [name for name in KEY_FILES if (folder / name).exists()]
    if existing and not force:
        raise ConfigError(
            f"{str(folder)!r} holds keys already ({', '.join(existing)}): new keys would lock out the servers and "
            "clients holding these; give another folder, or --force to replace them"
        )
    written = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name in (SERVER, CLIENT):
            public, secret = zmq.auth.create_certificates(str(folder), name)
            os.chmod(secret, 0o600)
            written += [Path(public), Path(secret)]
    except OSError as error:  # a parent that is a file, a folder without write permission, ...
        raise ConfigError(f"cannot write keys to {str(folder)!r}: {error}") from error
    return written


def _load(folder: str | Path, name: str, secret: bool) -> tuple[bytes, bytes | None]:
    path = Path(folder) / f"{name}.key{'_secret' if secret else ''}"
    if not path.is_file():
        raise ConfigError(f"key file {str(path)!r} is missing: `ding-env keygen DIR` writes it")
    try:
        return zmq.auth.load_certificate(str(path))
    except (ValueError, OSError) as error:
        raise ConfigError(
            f"key file {str(path)!r} is not a ZeroMQ certificate: {error} (a server reads every *.key of its folder "
            "as an admitted client's public key: move other files out)"
        ) from error


def secure_server(socket: zmq.Socket, context: zmq.Context, folder: str | Path) -> ThreadAuthenticator:
    """Make ``socket`` a CurveZMQ server that admits the clients whose public keys lie in ``folder``.

    Returns:
        The running authenticator; ``stop()`` it when the socket closes.
    """
    public, secret = _load(folder, SERVER, secret=True)
    # The authenticator reads every *.key of the folder: one that is not a certificate makes it admit no
    # client at all, with one log line. Refused here instead, naming the file.
    for path in sorted(Path(folder).glob("*.key")):
        if not path.name.startswith("."):  # hidden files, as pyzmq's own glob skips them (macOS's ._client.key)
            _load(path.parent, path.name.removesuffix(".key"), secret=False)
    authenticator = ThreadAuthenticator(context)
    authenticator.start()
    authenticator.configure_curve(domain="*", location=str(folder))
    socket.curve_publickey, socket.curve_secretkey, socket.curve_server = public, secret, True
    return authenticator


def check_client_keys(folder: str | Path) -> None:
    """Raise ``ConfigError`` unless ``folder`` holds what a client needs: its key pair and the server's public key."""
    _load(folder, CLIENT, secret=True)
    _load(folder, SERVER, secret=False)


def secure_client(socket: zmq.Socket, folder: str | Path) -> None:
    """Make ``socket`` a CurveZMQ client with the client key pair and the server's public key of ``folder``."""
    public, secret = _load(folder, CLIENT, secret=True)
    server_public, _ = _load(folder, SERVER, secret=False)
    options: dict[Any, Any] = {
        zmq.CURVE_PUBLICKEY: public,
        zmq.CURVE_SECRETKEY: secret,
        zmq.CURVE_SERVERKEY: server_public,
    }
    for option, value in options.items():
        socket.setsockopt(option, value)

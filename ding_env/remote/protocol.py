"""The env server protocol's name, version and request names: what a client needs before it imports the wire.

The message structs themselves (``remote.headers``) need msgspec, the ``zmq`` extra; these names
do not, so a manager module can name requests without importing the extra.
"""

from __future__ import annotations

import secrets
from dataclasses import fields

from ding_env.env_manager.backends.settings import HostSettings

PROTOCOL = "ding-env"
# Raised whenever a message's meaning changes; client and server must speak the same one.
# 3: msgpack headers of typed structs (msgspec); step replies carry infos as a table.
# 4: an empty info travels as nothing (a row with no info is an empty dict); a server may host batch
#    envs, its env count their sub-envs.
# 5: a step reply's info table is None when no row's info is in it.
# 6: hello carries the client's id, so a client connecting again takes back its own lease at once.
# 7: an EnvTimeoutError carries ``grouped`` (its envs timed out together, in one worker); hello's reply
#    names the served envs (``env``).
# 8: a seed of 2**64 or more travels as its digits.
# 9: a step's env ids and flags travel as msgpack lists; a step reply leaves out the env ids and reset
#    flags of its rows when they are the request's, and carries its errors and infos as {row: value}.
PROTOCOL_VERSION = 9

# Manager settings a client sends at launch: how its envs behave, which the server's workers enforce.
CLIENT_SETTINGS = tuple(item.name for item in fields(HostSettings))

# The two requests that are not operations on envs: the handshake, and a read of the ready observations
# the server holds (after env calls, which may change them).
HELLO = "hello"
READY_OBS = "ready_obs"


def new_client_id() -> str:
    """A random id for a client, the same in the hello of every connection it opens (``headers.Hello``)."""
    return secrets.token_hex(16)

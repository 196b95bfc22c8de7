"""The two messages of every step, a request and its reply, encoded and decoded field by field.

A step's headers (``headers.Step``, ``headers.Stepped``) have a fixed set of fields: each is
handled by name here rather than by the generic loops of ``remote.messages``, and the per-env ids
and flags travel as msgpack lists, which msgspec types and checks as it decodes them (a bool list
holds bools, ids fit int64). A reply leaves out the env ids and reset flags of its rows when they
are the request's (``Stepped``): the client fills them in from the request it sent
(:func:`step_rows`). Decoding refuses what the generic path refuses, with the same ``WireError``s,
and a reply whose arrays do not have one row per env.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ding_env.errors import DingEnvError
from ding_env.ops import Op
from ding_env.remote.errors import WireError
from ding_env.remote.headers import Step, Stepped, encode_header
from ding_env.remote.protocol import PROTOCOL, PROTOCOL_VERSION
from ding_env.remote.wire import Decoder, Encoder
from ding_env.trees import leaves

STEP_FIELDS = frozenset(("env_ids", "actions", "reset_on_done"))


def step_request_frames(seq: int, body: dict) -> list:
    """The frames of a step request of ``body`` (``env_ids``, ``actions``, ``reset_on_done``).

    Raises:
        WireError: If the actions have no wire encoding, or the ids or flags are not a 1-d int and bool array.
    """
    encoder = Encoder()
    try:
        actions = encoder.value(body["actions"])
    except WireError as error:
        raise error.at("step actions") from None
    try:
        header = Step(
            protocol=PROTOCOL,
            version=PROTOCOL_VERSION,
            seq=seq,
            env_ids=_listed(body["env_ids"], "iu", "env_ids", "int"),
            actions=actions,
            reset_on_done=_listed(body["reset_on_done"], "b", "reset_on_done", "bool"),
        )
    except WireError as error:
        raise error.at("step") from None
    except ValueError as error:  # ids and flags of different lengths
        raise WireError(f"{error}"[:300], "cannot send").at("step") from None
    return [encode_header(header), *encoder.frames]


def read_step_request(message: Step, frames: list, path: str) -> dict:
    """The fields of a step request whose header decoded (ids and flags as int64 and bool arrays).

    Raises:
        WireError: If its actions are malformed or it has frames its header does not refer to.
    """
    values = Decoder(frames[1:])
    try:
        actions = values.value(message.actions)
    except WireError as error:
        raise error.at(f"{path} actions") from None
    except RecursionError:
        raise WireError("values nested too deeply").at(f"{path} actions") from None
    try:
        values.check_all_used()
    except WireError as error:
        raise error.at(path) from None
    return {
        "env_ids": np.array(message.env_ids, dtype=np.int64),
        "actions": actions,
        "reset_on_done": np.array(message.reset_on_done, dtype=bool),
    }


def stepped_frames(seq: int, result: dict, path: str) -> list:
    """The frames of a step's reply of ``result`` (``env_id`` and ``reset_on_done`` None: the request's).

    Raises:
        WireError: Naming the key path (starting with ``path``) and type of a value that has no encoding.
    """
    encoder = Encoder()
    name = "obs"
    try:
        obs = encoder.value(result["obs"])
        name = "reward"
        reward = _array(encoder, result["reward"])
        name = "restart_obs"
        restart_obs = encoder.value(result["restart_obs"])
        name = "errors"
        errors = _each_row(encoder.value, result["errors"])
        name = "info"
        info = _each_row(encoder.value, result["info"])
        name = "info_numbers"
        numbers = _array(encoder, result.get("info_numbers"))
        name = "info_values"
        values = _array(encoder, result.get("info_values"))
    except WireError as error:
        raise error.at(f"{path} {name}") from None
    env_id, reset_on_done = result["env_id"], result["reset_on_done"]
    try:
        header = Stepped(
            protocol=PROTOCOL,
            version=PROTOCOL_VERSION,
            seq=seq,
            env_id=None if env_id is None else _listed(env_id, "iu", "env_id", "int"),
            obs=obs,
            reward=reward,
            done=_listed(result["done"], "b", "done", "bool"),
            truncated=_listed(result["truncated"], "b", "truncated", "bool"),
            reset_on_done=None if reset_on_done is None else _listed(reset_on_done, "b", "reset_on_done", "bool"),
            restart_obs=restart_obs,
            errors=errors,
            info_numbers=numbers,
            info_values=values,
            info_schemas=result["info_schemas"],
            info=info,
            lost=result["lost"],
        )
    except (KeyError, ValueError) as error:  # a missing field; rows of different lengths
        raise WireError(f"{error}"[:300], "cannot send").at(path) from None
    except WireError as error:
        raise error.at(path) from None
    return [encode_header(header), *encoder.frames]


def read_stepped(message: Stepped, frames: list, path: str) -> dict:
    """The fields of a step reply whose header decoded, its arrays checked to hold one row per env.

    Raises:
        WireError: If a field is malformed, an array has another number of rows, an error is not an error,
            or the reply has frames its header does not refer to.
    """
    values = Decoder(frames[1:])
    name = "obs"
    try:
        obs = values.value(message.obs)
        name = "reward"
        reward = values.array(message.reward)
        name = "restart_obs"
        restart_obs = None if message.restart_obs is None else values.value(message.restart_obs)
        name = "errors"
        errors = _each_row(values.value, message.errors)
        if not all(isinstance(error, DingEnvError) for error in errors.values()):
            raise WireError("must map rows to errors")
        name = "info"
        info = _each_row(values.value, message.info)
        name = "info_numbers"
        numbers = None if message.info_numbers is None else values.array(message.info_numbers)
        name = "info_values"
        table = None if message.info_values is None else values.array(message.info_values)
    except WireError as error:
        raise error.at(f"{path} {name}") from None
    except RecursionError:
        raise WireError("values nested too deeply").at(f"{path} {name}") from None
    try:
        values.check_all_used()
        done = np.array(message.done, dtype=bool)
        _check_rows(obs, len(done), "obs")
        _check_rows(reward, len(done), "reward")
        if restart_obs is not None:
            _check_rows(restart_obs, int(np.count_nonzero(done)), "restart_obs (one per ended episode)")
    except WireError as error:
        raise error.at(path) from None
    return {
        "env_id": None if message.env_id is None else np.array(message.env_id, dtype=np.int64),
        "obs": obs,
        "reward": reward,
        "done": done,
        "truncated": np.array(message.truncated, dtype=bool),
        "reset_on_done": None if message.reset_on_done is None else np.array(message.reset_on_done, dtype=bool),
        "restart_obs": restart_obs,
        "errors": errors,
        "info_numbers": numbers,
        "info_values": table,
        "info_schemas": message.info_schemas,
        "info": info,
        "lost": message.lost,
    }


def step_rows(reply: dict, env_ids: Any, reset_on_done: Any) -> dict:
    """``reply`` (a decoded step reply) with its rows' env ids and reset flags: the request's where it leaves them out.

    Args:
        reply: The reply's fields, as :func:`read_stepped` gives them.
        env_ids: The env ids the step request sent.
        reset_on_done: The reset flags it sent.

    Raises:
        WireError: If ``reply`` is not a step's, or leaves its rows to the request and has another number of rows.
    """
    if "done" not in reply:
        raise WireError(f"a step's reply without a step's fields: {sorted(reply)[:10]}")
    if reply["env_id"] is None:
        if len(reply["done"]) != len(env_ids):
            raise WireError(f"step reply: {len(reply['done'])} rows for the request's {len(env_ids)} envs")
        reply["env_id"] = np.array(env_ids, dtype=np.int64)
        reply["reset_on_done"] = np.array(reset_on_done, dtype=bool)
    return reply


def is_step_reply(request: str, result: dict | None) -> bool:
    """Whether ``result`` is a step's, sent as :class:`Stepped` (other replies to a step are errors)."""
    return request == Op.STEP and result is not None and "env_id" in result


def _listed(value: Any, kinds: str, name: str, what: str) -> list:
    """A 1-d array (or a list) of ids or flags as a list for msgpack."""
    if type(value) is np.ndarray:
        if value.ndim != 1 or value.dtype.kind not in kinds:
            raise WireError(f"{name} must be a 1-d {what} array, got {value.dtype} {value.shape}", "cannot send")
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return list(value)
    raise WireError(f"{name} must be a 1-d {what} array, got a {type(value).__name__}", "cannot send")


def _array(encoder: Encoder, value: Any) -> Any:
    """An array field (or None)."""
    if value is None:
        return None
    if type(value) is not np.ndarray:
        raise WireError(f"must be an array, got a {type(value).__name__}", "cannot send")
    return encoder.array(value)


def _each_row(convert: Callable[[Any], Any], by_row: dict) -> dict:
    """``{row: convert(value)}`` (an encoder's or a decoder's ``value``); an error names its row."""
    if not by_row:
        return {}
    converted = {}
    for row, value in by_row.items():
        try:
            converted[row] = convert(value)
        except WireError as error:
            raise error.at(f"[{row!r}]") from None
    return converted


def _check_rows(value: Any, rows: int, name: str) -> None:
    """Refuse a stacked value (an array or a tree of them) whose leaves do not have ``rows`` rows."""
    for leaf in [value] if type(value) is np.ndarray else leaves(value):
        if type(leaf) is not np.ndarray or leaf.shape[:1] != (rows,):
            shape = leaf.shape if type(leaf) is np.ndarray else type(leaf).__name__
            raise WireError(f"{name} of shape {shape} for {rows} rows")

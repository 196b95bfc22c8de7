"""Values and spaces survive the wire exactly; what cannot travel is refused by its key path and type."""

import gymnasium as gym
import msgspec
import numpy as np
import pytest

from ding_env.env_manager.status import CALLABLE, MISSING
from ding_env.errors import EnvCrashedError, EnvError, EnvTimeoutError
from ding_env.remote.errors import ProtocolMismatchError, ServerError, WireError
from ding_env.remote.info_wire import InfoReceiver
from ding_env.remote.messages import read_reply, reply_frames, request_frames
from ding_env.remote.protocol import PROTOCOL, PROTOCOL_VERSION
from ding_env.remote.step_wire import step_rows

SPACES = {
    "box": gym.spaces.Box(-1.5, 2.0, (2, 3), np.float32),
    "box_bounds": gym.spaces.Box(np.array([-np.inf, 0.0]), np.array([np.inf, 1.0]), dtype=np.float64),
    "image": gym.spaces.Box(0, 255, (4, 5, 3), np.uint8),
    "discrete": gym.spaces.Discrete(7, start=-2),
    "multi_discrete": gym.spaces.MultiDiscrete(np.array([[2, 3], [4, 5]]), start=np.array([[0, 1], [-1, 0]])),
    "multi_binary": gym.spaces.MultiBinary(5),
    "multi_binary_2d": gym.spaces.MultiBinary([2, 3]),
    "dict": gym.spaces.Dict(
        {"pos": gym.spaces.Box(-1, 1, (2,), np.float32), "inner": gym.spaces.Dict({"k": gym.spaces.Discrete(3)})}
    ),
    "tuple": gym.spaces.Tuple((gym.spaces.Discrete(2), gym.spaces.Tuple((gym.spaces.MultiBinary(2),)))),
}


def round_trip(value):
    seq, body, error = read_reply(reply_frames(7, {"value": value}))
    assert (seq, error) == (7, None)
    return body["value"]


def assert_identical(actual, expected):
    """Equal values of the same types, arrays of the same dtype and shape."""
    assert type(actual) is type(expected), (actual, expected)
    if isinstance(expected, np.ndarray):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        np.testing.assert_array_equal(actual, expected)
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            assert_identical(a, e)
    elif isinstance(expected, dict):
        assert list(actual) == list(expected)
        for key in expected:
            assert_identical(actual[key], expected[key])
    elif isinstance(expected, float) and np.isnan(expected):
        assert np.isnan(actual)
    else:
        assert actual == expected


@pytest.mark.parametrize("name", SPACES)
def test_every_space_kind_round_trips(name):
    space = SPACES[name]
    decoded = round_trip(space)
    assert type(decoded) is type(space) and decoded == space
    assert decoded.dtype == space.dtype


VALUES = {
    "none": None,
    "bool": True,
    "int": -(2**70),
    "float": 0.1,
    "nan": float("nan"),
    "inf": float("-inf"),
    "str": "héllo",
    "bytes": b"\x00\xffraw",
    "list": [1, "a", None],
    "tuple": (1, (2.5, False)),
    "dict_non_str_keys": {"a": 1, 3: "three", (1, 2): [4]},
    "float32_array": np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4),
    "uint8_image": np.arange(60, dtype=np.uint8).reshape(3, 4, 5),
    "bool_array": np.array([True, False]),
    "int64_empty": np.zeros((0, 3), dtype=np.int64),
    "big_endian": np.arange(3, dtype=">i4"),
    "fixed_strings": np.array(["ab", "c"]),
    "zero_d": np.array(3.5),
    "non_contiguous": np.arange(20.0).reshape(4, 5)[:, ::2],
    "float32_scalar": np.float32(1.1),
    "float16_scalar": np.float16(0.3),
    "int8_scalar": np.int8(-5),
    "uint64_scalar": np.uint64(2**64 - 1),
    "bool_scalar": np.bool_(True),
    "complex_scalar": np.complex64(1 + 2j),
    "markers": [MISSING, CALLABLE],
    "nested_info": {"eval_episode_return": 12.0, "truncated": False, "stats": {"hist": np.ones(3), "names": ("a",)}},
}


ERRORS = [
    EnvError(3, "step", "ValueError: bad action", "Traceback ...\nValueError: bad action\n"),
    EnvCrashedError([0, 1], -9, "step"),
    EnvTimeoutError([2], "reset", 1.5),
    ServerError("step", "TypeError", "wrong", "Traceback ..."),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda error: type(error).__name__)
def test_errors_travel_by_their_fields(error):
    decoded = round_trip({"errors": {1: error}})["errors"][1]
    assert type(decoded) is type(error) and str(decoded) == str(error)
    assert vars(decoded) == vars(error)


@pytest.mark.parametrize("name", VALUES)
def test_every_value_kind_round_trips_exactly(name):
    assert_identical(round_trip(VALUES[name]), VALUES[name])


def test_large_arrays_travel_as_their_own_buffers_and_small_ones_in_the_header():
    obs = np.zeros((4, 210, 160, 3), dtype=np.uint8)
    frames = reply_frames(1, {"obs": obs, "done": np.ones(4, dtype=bool)})
    assert len(frames) == 2 and np.shares_memory(frames[1], obs)


def test_decoded_arrays_are_the_callers_own_whether_inline_or_in_a_frame():
    small, large = np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(4096, dtype=np.int64)
    frames = reply_frames(1, {"small": small, "large": large})
    first, second = read_reply(frames)[1], read_reply(frames)[1]
    for name, sent in (("small", small), ("large", large)):
        assert np.array_equal(first[name], sent) and first[name].dtype == sent.dtype
        assert first[name].flags.writeable and not np.shares_memory(first[name], second[name])
        first[name][0] = 99  # changing a decoded array changes neither another decode of the message nor the sent one
        assert np.array_equal(second[name], sent) and not np.array_equal(first[name], sent)


@pytest.mark.parametrize(
    "value, where, kind",
    [
        ({"a": [1, {"b": {1, 2}}]}, "info['a'][1]['b']", "set"),
        ({"policy": lambda x: x}, "info['policy']", "function"),
        ({"objects": np.array([1, "a"], dtype=object)}, "info['objects']", "dtype object"),
        ({"record": np.zeros(2, dtype=[("x", "f4")])}, "info['record']", "dtype"),
        ({"text": gym.spaces.Text(5)}, "info['text']", "Text spaces"),
        ({"error": KeyError("k")}, "info['error']", "KeyError"),
    ],
)
def test_a_value_without_encoding_is_refused_naming_its_key_and_type(value, where, kind):
    with pytest.raises(WireError) as error:
        reply_frames(1, {"info": value}, request="step")
    assert f"step reply {where}" in str(error.value) and kind in str(error.value)


def header(**changes):
    return {"protocol": PROTOCOL, "version": PROTOCOL_VERSION, "kind": "ok", "seq": 1, **changes}


def frames_of(body, *buffers, **changes):
    return [msgspec.msgpack.encode({**header(**changes), "body": body}), *buffers]


def too_deep():
    """A reply header whose value is nested 100,000 lists deep (no encoder would write it)."""
    head = msgspec.msgpack.encode({**header(), "body": {"v": "HOLE"}})
    return [head.replace(msgspec.msgpack.encode("HOLE"), b"\x91" * 100_000 + b"\xc0")]


ARRAY = {"$": "array", "frame": 1, "dtype": "<f4", "shape": [2, 2]}
FIELDS = {"type": "EnvError", "env_id": 0, "command": "step", "message": "m", "remote_traceback": "", "op": "unpickle"}
BAD_OP = {"$": "dict", "items": [[key, value] for key, value in FIELDS.items()]}
# An error whose env id is text: the manager failed on it later, far from the server that sent it.
TEXT_ID = {"$": "dict", "items": [[key, value] for key, value in {**FIELDS, "op": "step", "env_id": "3"}.items()]}
CRASHED = {"type": "EnvCrashedError", "env_ids": [1, True], "exitcode": -9, "command": "step"}
BOOL_ID = {"$": "dict", "items": [[key, value] for key, value in CRASHED.items()]}


@pytest.mark.parametrize(
    "frames, message",
    [
        ([], "no frames"),
        ([b"\xc1 not msgpack"], "not a msgpack header"),
        ([b"\x81\xa8protocol\xa2\xff\xfe"], "not a msgpack header"),  # text that is not UTF-8
        ([msgspec.msgpack.encode([1, 2])], "Expected `object`, got `array`"),
        (frames_of({"v": ARRAY}), "frame 1 does not exist"),
        (frames_of({"v": ARRAY}, b"\x00" * 15), "takes 16 bytes, its frame has 15"),
        (frames_of({"v": 1}, b"\x00" * 4), "2 frames, of which the header refers to 1"),
        (frames_of({"v": {"$": "array", "data": b"\x00" * 3, "dtype": "<f4", "shape": [2]}}), "takes 8 bytes, its"),
        (frames_of({"v": {**ARRAY, "data": b"\x00" * 16}}, b"\x00" * 16), "in a frame or inline, one of the two"),
        (frames_of({"v": {**ARRAY, "dtype": "|O"}}, b"\x00" * 32), "cannot travel without pickle"),
        (frames_of({"v": {**ARRAY, "dtype": "no such dtype"}}, b"\x00" * 16), "unknown dtype"),
        (frames_of({"v": {**ARRAY, "dtype": "04"}}, b"\x00" * 16), "unknown dtype '04'"),  # numpy parses it as Python
        (frames_of({"v": {"$": "scalar", "dtype": "|i1", "value": 300}}), "scalar 300 of dtype int8"),
        (frames_of({"v": {"$": "scalar", "dtype": "<f4", "value": 1e300}}), "beyond the range of dtype float32"),
        (frames_of({"v": {"$": "error", "fields": BAD_OP}}), "an error of type EnvError: 'unpickle' is not a valid Op"),
        (frames_of({"v": {"$": "error", "fields": TEXT_ID}}), "an error of type EnvError whose env_id is '3', not int"),
        (frames_of({"v": {"$": "error", "fields": BOOL_ID}}), "EnvCrashedError whose env_ids is .*, not a list of"),
        (frames_of({"v": {**ARRAY, "shape": [-1, 4]}}, b"\x00" * 16), r"Expected `int` >= 0 - at `\$.shape\[0\]`"),
        (frames_of({"v": {**ARRAY, "pickle": True}}, b"\x00" * 16), "unknown field `pickle`"),
        (frames_of({"v": {"$": "pickle", "data": b"gASV"}}), "unknown value tag 'pickle'"),
        (frames_of({"v": {"$": "dict", "items": [[[1], 2]]}}), "not hashable"),
        (frames_of({"v": {"$": "space", "kind": "Box", "low": 0}}), "Box space"),
        (frames_of({}, pickle="gASV"), "unknown field `pickle`"),
        (frames_of({}, seq="1"), r"Expected `int`, got `str` - at `\$.seq`"),
        (frames_of({}, kind="unpickle"), "Invalid value 'unpickle' - at `\\$.kind`"),
        ([msgspec.msgpack.encode(header())], "missing required field `body`"),
        (too_deep(), "nested too deeply"),
    ],
)
def test_malformed_frames_are_refused_with_a_wire_error(frames, message):
    with pytest.raises(WireError, match=message):
        read_reply(frames)


@pytest.mark.parametrize("version", [PROTOCOL_VERSION + 1, PROTOCOL_VERSION - 1])
def test_a_reply_from_another_protocol_version_is_refused_before_its_fields_are_read(version):
    frames = [msgspec.msgpack.encode({**header(version=version), "fields": "of another version"})]
    with pytest.raises(ProtocolMismatchError, match=f"version {version}, this side version {PROTOCOL_VERSION}"):
        read_reply(frames)
    assert read_reply(reply_frames(1, {"x": 1})) == (1, {"x": 1}, None)


def test_an_error_reply_carries_the_error_and_any_other_exception_becomes_a_server_error():
    _, _, error = read_reply(reply_frames(4, error=ERRORS[0], request="step"))
    assert vars(error) == vars(ERRORS[0])
    try:
        {}["missing"]
    except KeyError as key_error:
        seq, _, error = read_reply(reply_frames(5, error=key_error, request="get_attr"))
    assert seq == 5 and isinstance(error, ServerError)
    assert (error.request, error.error_type, error.message) == ("get_attr", "KeyError", "'missing'")
    assert "KeyError" in error.remote_traceback


STEP_RESULT = {
    "env_id": np.arange(3),
    "obs": np.zeros((3, 2), np.float32),
    **{name: np.zeros(3, bool) for name in ("done", "truncated", "reset_on_done")},
    "reward": np.zeros((3, 1), np.float32),
    "restart_obs": None,
    "errors": {},
    "info_schemas": [],
    "info": {},
    "lost": [],
}


def step_reply(**info_fields):
    """A step reply of 3 envs as the client reads it, with the given info fields."""
    seq, body, error = read_reply(reply_frames(2, {**STEP_RESULT, **info_fields}, request="step"))
    assert (seq, error) == (2, None)
    return body


def test_a_step_reply_without_an_info_table_gives_each_row_its_sent_info_or_an_empty_one():
    reply = step_reply(info={1: {"note": "only row 1 has an info"}})
    assert reply["info_numbers"] is None and reply["info_values"] is None
    infos = InfoReceiver(3).infos(reply["env_id"], reply)
    assert infos == [{}, {"note": "only row 1 has an info"}, {}]
    assert infos[0] is not infos[2]  # each row's dict is its own


@pytest.mark.parametrize("present", ["info_numbers", "info_values"])
def test_a_step_reply_with_half_an_info_table_is_refused(present):
    table = {"info_numbers": np.zeros(3, np.int8), "info_values": np.zeros((3, 0))}
    reply = step_reply(**{present: table[present]})
    with pytest.raises(WireError, match="info_numbers and info_values come together"):
        InfoReceiver(3).infos(reply["env_id"], reply)


def stepped(**changes):
    """A step reply header of 3 rows as a server writes it, with raw field values changed."""
    frames = reply_frames(2, {**STEP_RESULT, "env_id": None, "reset_on_done": None}, request="step")
    fields = {**msgspec.msgpack.decode(frames[0]), **changes}
    return [msgspec.msgpack.encode({key: value for key, value in fields.items() if value is not OMIT})]


OMIT = object()
SMALL = {"$": "array", "dtype": "<f4", "shape": [2, 1], "data": bytes(8)}


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"done": [0, 0, 0]}, r"Expected `bool`, got `int` - at `\$.done\[0\]`"),
        ({"truncated": [False]}, "3 done flags and 1 truncated flags"),
        ({"env_id": [0, 1, 2]}, "env_id and reset_on_done come together"),
        ({"env_id": [0, 1], "reset_on_done": [True, True]}, "2 env ids, 2 reset_on_done flags, 3 rows"),
        ({"env_id": [2**63, 0, 1], "reset_on_done": [True] * 3}, r"Expected `int` <= 9223372036854775807"),
        ({"reward": SMALL}, "malformed reply stepped: reward of shape \\(2, 1\\) for 3 rows"),
        ({"obs": SMALL}, "obs of shape \\(2, 1\\) for 3 rows"),
        ({"obs": {"$": "tuple", "items": [SMALL]}}, "obs of shape \\(2, 1\\) for 3 rows"),
        ({"restart_obs": SMALL}, r"restart_obs \(one per ended episode\) of shape \(2, 1\) for 0 rows"),
        ({"errors": {1: "not an error"}}, "reply stepped errors: must map rows to errors"),
        ({"errors": {"1": {"$": "error"}}}, r"Expected `int`, got `str` - at `key` in `\$.errors`"),
        ({"info": {0: {"$": "pickle"}}}, r"reply stepped info\[0\]: unknown value tag 'pickle'"),
        ({"lost": OMIT}, "missing required field `lost`"),
        ({"rows": [0, 1, 2]}, "unknown field `rows`"),
    ],
)
def test_a_malformed_step_reply_is_refused_naming_the_field(changes, message):
    with pytest.raises(WireError, match=message):
        read_reply(stepped(**changes))


def test_a_step_reply_leaves_the_rows_ids_and_flags_to_its_request_and_must_have_its_number_of_rows():
    _, reply, _ = read_reply(stepped())
    assert reply["env_id"] is None and reply["reset_on_done"] is None
    ids, flags = np.array([4, 5, 6]), np.array([True, False, True])
    filled = step_rows(reply, ids, flags)
    assert filled["env_id"].tolist() == [4, 5, 6] and filled["reset_on_done"].tolist() == [True, False, True]
    assert filled["env_id"].dtype == np.int64 and not np.shares_memory(filled["reset_on_done"], flags)
    _, reply, _ = read_reply(stepped())
    with pytest.raises(WireError, match="step reply: 3 rows for the request's 2 envs"):
        step_rows(reply, ids[:2], flags[:2])
    with pytest.raises(WireError, match="a step's reply without a step's fields"):
        step_rows(read_reply(reply_frames(2, {"x": 1}, request="step"))[1], ids, flags)


@pytest.mark.parametrize(
    "body, message",
    [
        ({"env_ids": np.zeros(2), "reset_on_done": np.ones(2, bool)}, "env_ids must be a 1-d int array, got float64"),
        ({"env_ids": np.arange(2), "reset_on_done": np.ones(2)}, "reset_on_done must be a 1-d bool array, got float"),
        ({"env_ids": np.arange(2), "reset_on_done": np.ones((2, 1), bool)}, r"bool array, got bool \(2, 1\)"),
        ({"env_ids": np.arange(2), "reset_on_done": np.ones(3, bool)}, "2 env ids and 3 reset_on_done flags"),
        ({"env_ids": 2, "reset_on_done": np.ones(2, bool)}, "env_ids must be a 1-d int array, got a int"),
    ],
)
def test_a_step_request_with_ids_or_flags_of_another_kind_is_refused_before_it_leaves(body, message):
    with pytest.raises(WireError, match=f"cannot send.*{message}"):
        request_frames("step", 1, {"actions": np.zeros(2, np.int64), **body})


def test_random_changes_to_a_step_reply_are_read_or_refused_with_a_wire_error():
    result = {
        **STEP_RESULT,
        "env_id": None,
        "reset_on_done": None,
        "done": np.array([True, False, False]),
        "restart_obs": np.ones((1, 2), np.float32),
        "errors": {0: ERRORS[0]},
        "info_numbers": np.array([1, 0, 0], np.int8),
        "info_values": np.zeros((3, 2)),
        "info_schemas": [(0, 1, ["a", "b"], ["float", "int"])],
        "info": {1: {"note": "x"}},
    }
    head = reply_frames(2, result, request="step")[0]
    rng = np.random.default_rng(0)
    read = 0
    for _ in range(3000):
        changed = bytearray(head)
        for position in rng.integers(0, len(changed), int(rng.integers(1, 4))):
            changed[position] = int(rng.integers(0, 256))
        try:
            _, reply, _ = read_reply([bytes(changed)])
            step_rows(reply, np.arange(3), np.ones(3, bool))
            InfoReceiver(3).infos(reply["env_id"], reply)
            read += 1
        except WireError:
            pass
    assert 0 < read < 3000  # some changes leave a well-formed reply (a value changed), most do not


def test_a_step_reply_with_info_tables_of_other_dtypes_is_refused():
    reply = step_reply(info_numbers=np.zeros(3, np.int64), info_values=np.zeros((3, 0)))
    with pytest.raises(WireError, match=r"info tables of dtypes int64 and float64 \(int8, float64\)"):
        InfoReceiver(3).infos(reply["env_id"], reply)

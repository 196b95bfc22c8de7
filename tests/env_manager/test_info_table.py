"""The shared info table: which infos qualify, and exact round trips of the ones that do."""

import math

import numpy as np

from ding_env.env_manager.backends.info_table import INFO_SLOTS, InfoReader, InfoWriter, schema_of


def table(env_num):
    """A writer and a reader over one fresh table."""
    values, numbers = np.zeros((env_num, INFO_SLOTS)), np.zeros(env_num, np.int8)
    return InfoWriter(values, numbers), InfoReader(values, numbers)


def announce(writer, reader, env_id, info):
    """Send ``info``'s new form as a worker does (by pipe), and let the reader learn it."""
    announced = {}
    assert not writer.put(env_id, info, announced)
    reader.learn(announced)


def test_only_fixed_numeric_infos_qualify():
    assert schema_of({"x": 1.5, "n": 3, "flag": True}).types == (float, int, bool)
    assert schema_of({"name": "pong"}) is None
    assert schema_of({"n": 2**53 + 1}) is None  # float64 would round it
    assert schema_of({"x": np.float32(1.0)}) is None  # numpy scalars keep their own type by pipe
    assert schema_of({1: 1.0}) is None
    assert schema_of({f"k{i}": 0.0 for i in range(INFO_SLOTS + 1)}) is None


def test_round_trip_is_exact_with_types():
    writer, reader = table(3)
    announce(writer, reader, 2, {"x": 0.1, "n": -(2**53), "done": False})
    writer.start_step(0, 3)
    later = {"x": -0.0, "n": 7, "done": True}
    assert writer.put(2, later, {})
    assert writer.put(0, {"y": math.inf}, {}) is False  # env 0's own first form
    info = reader.read(0, 3)[2]
    assert info == later and [type(v) for v in info.values()] == [float, int, bool]
    assert math.copysign(1.0, info["x"]) == -1.0
    assert not writer.put(2, {"x": 0.1, "n": 1.0, "done": False}, {})  # a float where an int was: by pipe


def test_rows_are_cleared_between_steps():
    writer, reader = table(2)
    announce(writer, reader, 0, {"x": 1.0})
    writer.start_step(0, 2)
    writer.put(0, {"x": 2.0}, {})
    assert reader.read(0, 2) == {0: {"x": 2.0}}
    writer.start_step(0, 2)  # env 0 sends nothing this step
    assert reader.read(0, 2) == {}


def test_a_replacement_worker_clears_rows_its_predecessor_left():
    values, numbers = np.zeros((2, INFO_SLOTS)), np.zeros(2, np.int8)
    old, reader = InfoWriter(values, numbers), InfoReader(values, numbers)
    announce(old, reader, 1, {"x": 1.0})
    old.start_step(0, 2)
    old.put(1, {"x": 2.0}, {})  # then the worker dies with this row filled
    new = InfoWriter(values, numbers)  # its replacement maps the same table
    new.start_step(0, 2)
    new.put(0, {"x": 3.0}, {})  # env 0 announces its form; env 1 sends nothing
    assert reader.read(0, 2) == {}

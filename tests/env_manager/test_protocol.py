"""The worker protocol's records: errors cross the pipe by their fields, never by their text."""

from __future__ import annotations

import pickle

from ding_env.env_manager.backends.protocol import Call, Failure, Reset, Seed, first_env
from ding_env.errors import EnvError
from ding_env.ops import Op


def test_an_env_error_crosses_as_its_fields():
    # A message that itself reads like an error header must come back unchanged.
    original = EnvError(3, "step", "env 1 failed in reset: nested text", "Traceback: ...")
    failure = pickle.loads(pickle.dumps(Failure.of(original, env_id=0, command="ignored")))
    rebuilt = failure.error()
    assert (rebuilt.env_id, rebuilt.command, rebuilt.message, rebuilt.remote_traceback) == (
        3,
        "step",
        "env 1 failed in reset: nested text",
        "Traceback: ...",
    )
    assert str(rebuilt) == str(original)


def test_other_exceptions_are_named_with_the_request_they_failed():
    try:
        raise KeyError("missing")
    except KeyError as error:
        failure = Failure.of(error, env_id=5, command="reset")
    assert (failure.env_id, failure.command, failure.message) == (5, "reset", "KeyError: 'missing'")
    assert "raise KeyError" in failure.remote_traceback


def test_each_request_names_the_env_its_failure_belongs_to():
    worker_envs = [4, 5, 6]
    assert first_env(Seed(6, 0, None), worker_envs) == 6
    assert first_env(Reset([5, 6], {}), worker_envs) == 5
    assert first_env(Call([], "render"), worker_envs) == 4
    failure = Failure.of(KeyError("gone"), 4, Call([4], "render").op, "render")
    assert (failure.command, failure.op) == ("render", Op.CALL)


def test_the_info_table_takes_rows_of_learned_schemas_at_once_and_forgets_schemas_not_delivered():
    import numpy as np

    from ding_env.env_manager.backends.info_table import INFO_SLOTS, InfoReader, InfoWriter

    values, numbers = np.zeros((4, INFO_SLOTS)), np.zeros(4, dtype=np.int8)
    writer, reader = InfoWriter(values, numbers), InfoReader(values, numbers)
    columns = {"lives": np.array([3, 2]), "ok": np.array([True, False]), "x": np.array([0.5, -1.0], np.float32)}
    assert not writer.put_rows(np.array([1, 2]), columns).any()  # no env learned the schema yet
    assert not writer.put(1, {"lives": 3, "ok": True, "x": 0.5})  # learned by env 1, announced with its info
    reader.learn(writer.take_announced())
    writer.start_step(0, 4)
    assert writer.put_rows(np.array([1, 2]), columns).tolist() == [True, False]  # env 2 has not learned it
    assert reader.read(0, 4) == {1: {"lives": 3, "ok": True, "x": 0.5}}
    big = dict(columns, lives=np.array([2**60, 1]))  # an int float64 cannot hold exactly takes the pipe
    writer.start_step(0, 4)
    assert writer.put_rows(np.array([1, 2]), big).tolist() == [False, False]
    writer.forget(1, 1)  # its announcement never reached the reader: learned and announced again
    assert not writer.put_rows(np.array([1, 2]), columns).any()
    assert not writer.put(1, {"lives": 3, "ok": True, "x": 0.5}) and writer.take_announced()

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

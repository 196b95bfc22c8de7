"""Env attributes set and env methods called through the manager, for every env or some of them."""

from __future__ import annotations

from functools import partial

import pytest

from ding_env import create_env_manager
from ding_env.errors import EnvError
from tests.conftest import manager_cfg
from tests.envs import LockHoldingEnv
from tests.support import counting_fns


def test_set_env_attr_for_every_env_or_some(make_manager):
    manager = make_manager(counting_fns(3), num_workers=2)
    manager.launch()
    manager.set_env_attr("marker", "x")
    assert manager.marker == ["x", "x", "x"]
    manager.set_env_attr("marker", [1, 2], env_ids=[2, 0])  # values in env_ids order
    assert manager.marker == [2, "x", 1]
    with pytest.raises(ValueError, match=r"set_env_attr\('marker'\) got 3 values for 2 envs \[0, 1\]"):
        manager.set_env_attr("marker", [1, 2, 3], env_ids=[0, 1])
    with pytest.raises(ValueError, match="public attribute name"):
        manager.set_env_attr("_private", 1)
    with pytest.raises(ValueError, match="env id 5 is out of range"):
        manager.set_env_attr("marker", 1, env_ids=[5])
    assert sorted(manager.step({0: 0, 1: 0, 2: 0})) == [0, 1, 2]  # the envs still step


def test_call_env_method_on_some_envs(make_manager):
    manager = make_manager(counting_fns(3), num_workers=2)
    manager.launch()
    manager.step({1: 0})
    assert manager.call_env_method("current_step", env_ids=[1, 2]) == [1, 0]
    assert manager.call_env_method("current_step") == [0, 1, 0]
    assert manager.call_env_method("imported", "ding_env", env_ids=[0]) == [True]
    with pytest.raises(EnvError, match="env 2 failed in no_such_method"):
        manager.call_env_method("no_such_method", env_ids=[2])


@pytest.mark.parametrize("manager_type", ["subprocess", "async_subprocess"])
def test_a_value_a_worker_cannot_pickle_is_an_error_naming_the_env_and_the_worker_goes_on(manager_type):
    # What comes back from a worker is pickled, and a lock cannot be: the env and the value are named,
    # and the worker goes on hosting its envs (it died, and its envs needed a reset).
    cfg = manager_cfg(manager_type, num_workers=2)
    with create_env_manager(cfg, [partial(LockHoldingEnv, {"lock_in_info_at": 2})] * 2) as manager:
        manager.launch()
        with pytest.raises(EnvError, match=r"env 1 failed in make_lock: .*make_lock\(\) of env 1 is a lock that"):
            manager.call_env_method("make_lock", env_ids=[1])
        with pytest.raises(EnvError, match=r"env 0 failed in make_pointer: .*make_pointer\(\) of env 0 is a LP_c_int"):
            manager.call_env_method("make_pointer", env_ids=[0])
        with pytest.raises(EnvError, match=r"env 0 failed in lock: .*env 0's 'lock' is a lock that cannot be pickled"):
            manager.lock  # noqa: B018 - the attribute read is the test
        assert sorted(manager.step({0: 0, 1: 0})) == [0, 1]  # every env still steps
        with pytest.raises(EnvError, match=r"env 0 failed in step: .*info\['handle'\] of the step is a lock"):
            manager.step({0: 0, 1: 0})
        manager.reset()
        assert sorted(manager.step({0: 0, 1: 0})) == [0, 1]
        assert manager.current_step() == [1, 1]

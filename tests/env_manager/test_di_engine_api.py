"""DI-engine's manager API in every manager: EnvState, env_state_done, env_ref, config, relaunch, assert errors."""

from __future__ import annotations

import multiprocessing
from functools import partial

import numpy as np
import pytest

from ding_env import create_env_manager
from ding_env.env_manager.base_env_manager import EnvState
from ding_env.env_manager.subprocess_env_manager import EnvState as SubprocessEnvState
from ding_env.env_manager.subprocess_env_manager import ShmBuffer
from ding_env.errors import ClosedEnvError, EnvError, EnvStateError
from tests.conftest import manager_cfg
from tests.envs import CountingEnv

ALL_MANAGERS = ["base", "subprocess", "async_subprocess", "base_v2", "subprocess_v2"]


def make(manager_type: str, env_num: int = 2, **cfg):
    return create_env_manager(manager_cfg(manager_type, **cfg), [partial(CountingEnv, {})] * env_num)


def step_ready(manager) -> None:
    """One step of every ready env with action 0, through the manager's own dict or V2 API."""
    env_ids = manager.ready_obs_id
    if manager.config.type.endswith("_v2"):
        manager.step([np.int64(0)] * len(env_ids))
    else:
        manager.step(dict.fromkeys(env_ids, np.int64(0)))


@pytest.mark.parametrize("manager_type", ALL_MANAGERS)
def test_env_states_follow_di_engine(manager_type):
    assert SubprocessEnvState is EnvState and EnvState.RUN == 2 and EnvState.DONE == 4
    manager = make(manager_type, episode_num=1, auto_reset=False)
    try:
        assert set(manager.env_states.values()) == {EnvState.VOID}
        manager.launch()
        assert set(manager.env_states.values()) == {EnvState.RUN}
        while not manager.done:
            step_ready(manager)
            assert set(manager.env_states.values()) <= {EnvState.RUN, EnvState.DONE}
        assert all(manager.env_state_done(env_id) for env_id in range(2))
        manager.reset({0: {}})  # a finished env restarts its episode on reset
        assert manager.env_states[0] == EnvState.RUN and not manager.env_state_done(0)
        with pytest.raises(ValueError, match="env id 2 is out of range"):
            manager.env_state_done(2)
    finally:
        manager.close()
    assert set(manager.env_states.values()) == {EnvState.VOID}


def test_env_state_need_reset_without_auto_reset():
    manager = make("base", episode_num=3, auto_reset=False)
    with manager:
        manager.launch()
        while manager.env_states[0] == EnvState.RUN:
            step_ready(manager)
        assert manager.env_states[0] == EnvState.NEED_RESET and not manager.env_state_done(0)


@pytest.mark.parametrize("manager_type", ALL_MANAGERS)
def test_failed_launch_closes_and_launch_works_again(manager_type):
    manager = make(manager_type, max_retry=1)
    try:
        with pytest.raises(EnvError, match="reset"):
            manager.launch({0: {"no_such_kwarg": 1}})
        assert manager.closed
        manager.launch()
        assert not manager.closed and manager.ready_obs_id == [0, 1]
        step_ready(manager)
    finally:
        manager.close()


@pytest.mark.parametrize("manager_type", ALL_MANAGERS)
def test_state_errors_are_assertion_errors_as_in_di_engine(manager_type):
    manager = make(manager_type)
    with pytest.raises(AssertionError, match="not launched") as before:
        manager.reset()
    assert isinstance(before.value, EnvStateError)
    manager.launch()
    manager.close()
    for call in (manager.reset, lambda: manager.step({0: np.int64(0)})):
        with pytest.raises(AssertionError, match="is closed") as after:
            call()
        assert isinstance(after.value, ClosedEnvError)


@pytest.mark.parametrize("manager_type", ALL_MANAGERS)
def test_env_ref_and_config(manager_type):
    manager = make(manager_type, max_retry=3)
    try:
        assert isinstance(manager.env_ref, CountingEnv) and manager.env_ref is manager.env_ref
        assert manager.config.max_retry == 3 and manager.config.type == manager_type
        manager.config.max_retry = 7  # a copy: the manager's own config is unchanged
        assert manager.config.max_retry == 3
    finally:
        manager.close()


def _fill(buffer: ShmBuffer, value: float) -> None:
    buffer.fill(np.full((2, 3), value, dtype=np.float32))


def test_shm_buffer_is_shared_with_a_worker_process():
    view = ShmBuffer(np.float32, (2, 3), copy_on_get=False)
    copies = ShmBuffer(np.dtype(np.float32), (2, 3))
    context = multiprocessing.get_context("fork")
    for buffer in (view, copies):
        worker = context.Process(target=_fill, args=(buffer, 5.0))
        worker.start()
        worker.join()
    seen = view.get()
    np.testing.assert_array_equal(seen, np.full((2, 3), 5.0, np.float32))
    _fill(view, 1.0)
    assert seen[0, 0] == 1.0  # a view of the shared memory
    copy = copies.get()
    _fill(copies, 2.0)
    assert copy[0, 0] == 5.0 and copies.get()[0, 0] == 2.0
    with pytest.raises(ValueError, match=r"expected a float32 array of shape \(2, 3\), got float64 \(2, 3\)"):
        view.fill(np.zeros((2, 3)))

"""step_timeout and reset_timeout cut a hung env in every manager, the serial one too."""

from __future__ import annotations

import threading
import time
from functools import partial

import pytest

from ding_env import create_env_manager
from ding_env.errors import EnvTimeoutError
from tests.conftest import manager_cfg
from tests.env_manager.conftest import MANAGER_SETUPS
from tests.envs import CountingEnv, FaultEnv
from tests.support import as_batch_envs

MANAGERS = ["base", "subprocess", "async_subprocess"]


def hanging_fns(**fault):
    return [partial(CountingEnv, {"limit": 10**6}), partial(FaultEnv, dict(limit=10**6, **fault))]


@pytest.mark.parametrize("manager_type", MANAGERS)
def test_hung_step_is_cut_and_the_env_is_renewed(manager_type):
    with create_env_manager(manager_cfg(manager_type, step_timeout=0.3), hanging_fns(hang_every=2)) as manager:
        manager.launch()
        manager.step({0: 0, 1: 0})
        started = time.monotonic()
        with pytest.raises(EnvTimeoutError, match=r"envs \[1\] did not finish step within 0.3 s"):
            manager.step({0: 0, 1: 0})
            manager.step({})  # the async manager may return env 0 first
        assert time.monotonic() - started < 1.5
        assert 1 not in manager.ready_obs_id
        manager.reset({1: {}})
        assert manager.ready_obs[1][0] == 0.0  # a fresh env: its next hang is at its second step again
        assert 1 in manager.step({1: 0})


@pytest.mark.parametrize("manager_type", MANAGERS)
def test_hung_step_as_abnormal_timestep(manager_type):
    cfg = manager_cfg(manager_type, step_timeout=0.3, step_error="abnormal")
    with create_env_manager(cfg, hanging_fns(hang_every=2)) as manager:
        manager.launch()
        manager.step({0: 0, 1: 0})
        results = {}
        while 1 not in results:
            results.update(manager.step({env_id: 0 for env_id in manager.ready_obs}))
        assert results[1].done and results[1].info["abnormal"] and "0.3 s" in results[1].info["error"]
        assert 1 in manager.ready_obs_id  # renewed and reset


@pytest.mark.parametrize("manager_type", MANAGERS)
def test_hung_reset_is_cut_and_launch_can_be_retried(manager_type):
    manager = create_env_manager(manager_cfg(manager_type, reset_timeout=0.3), hanging_fns(hang_reset_at=1))
    try:
        started = time.monotonic()
        with pytest.raises(EnvTimeoutError, match=r"envs \[1\] did not finish reset within 0.3 s"):
            manager.launch()
        assert time.monotonic() - started < 1.5 and manager.closed
    finally:
        manager.close()


# Envs of one worker time out together: the message does not claim each of them hung (they wait behind one that does).
WHOLE_WORKER = " (a worker or a batch env times out as a whole: its envs wait behind one that hangs)"


def several_hanging_fns(**fault):
    """Env 0 answers; envs 1, 2 and 3 hang as ``fault`` says."""
    return [partial(CountingEnv, {"limit": 10**6})] + [partial(FaultEnv, dict(limit=10**6, **fault))] * 3


@pytest.mark.parametrize("num_workers", [4, 1])
@pytest.mark.parametrize("manager_type", MANAGERS)
def test_envs_hung_in_one_step_are_named_together(manager_type, num_workers):
    # A worker per env: each hung env times out on its own, as envs of separate workers or servers do. One
    # worker of all four: env 0 answers but waits behind the hung ones, and is named too (the serial manager
    # cuts each env on its own either way).
    cfg = manager_cfg(manager_type, step_timeout=0.2, num_workers=num_workers)
    with create_env_manager(cfg, several_hanging_fns(hang_every=2)) as manager:
        manager.launch()
        manager.step(dict.fromkeys(range(4), 0))
        with pytest.raises(EnvTimeoutError) as caught:
            manager.step(dict.fromkeys(range(4), 0))
            manager.step({})  # the async manager may return env 0 first
        grouped = num_workers == 1 and manager_type != "base"
        hung = [0, 1, 2, 3] if grouped else [1, 2, 3]
        assert caught.value.env_ids == hung and caught.value.grouped == grouped
        assert str(caught.value) == f"envs {hung} did not finish step within 0.2 s{WHOLE_WORKER if grouped else ''}"


@pytest.mark.parametrize("manager_type", MANAGER_SETUPS)
def test_a_hung_batch_env_is_cut_naming_its_sub_envs_and_renewed(manager_type):
    # A batch env stepped in the calling process (the serial manager, a caller's share) was never cut: it hung.
    cfg = manager_cfg(manager_type, step_timeout=0.3, reset_timeout=0.3)
    with create_env_manager(cfg, as_batch_envs(hanging_fns(hang_every=2))) as manager:
        manager.launch()
        manager.step({0: 0, 1: 0})
        started = time.monotonic()
        with pytest.raises(EnvTimeoutError, match=r"envs \[0, 1\] did not finish step within 0.[36] s \(a worker or"):
            manager.step({0: 0, 1: 0})
            manager.step({})
        assert time.monotonic() - started < 2.0
        manager.reset()
        assert sorted(manager.step({0: 0, 1: 0})) == [0, 1]  # renewed: its next hang is at its second step again
    manager = create_env_manager(
        manager_cfg(manager_type, reset_timeout=0.3), as_batch_envs(hanging_fns(hang_reset_at=1))
    )
    try:
        with pytest.raises(EnvTimeoutError, match=r"envs \[0, 1\] did not finish reset within 0.3 s"):
            manager.launch()
    finally:
        manager.close()


@pytest.mark.parametrize("manager_type", MANAGER_SETUPS)
def test_a_batch_envs_hung_auto_reset_leaves_its_other_sub_envs_going(manager_type):
    # The batch env was renewed: its other sub-env, still in its episode, failed its next step.
    cfg = manager_cfg(manager_type, reset_timeout=0.3)
    with create_env_manager(cfg, as_batch_envs(hanging_fns(hang_reset_at=2))) as manager:
        manager.seed(1)
        manager.launch()
        # An EnvTimeoutError from a worker too (the worker cut it, not the parent): it came back as an EnvError.
        with pytest.raises(EnvTimeoutError, match=r"envs \[1\] did not finish reset within 0.3 s"):
            for _ in range(20):  # env 1's first auto-reset hangs
                manager.step({env_id: 0 for env_id in manager.ready_obs})
        steps_before = manager.sub_env_steps()[0][0]
        assert sorted(manager.step({0: 0})) == [0]  # env 0 goes on with its episode
        assert manager.sub_env_steps()[0][0] in (steps_before + 1, 1)  # one more step, or a new episode's first
        manager.reset({1: {}})
        assert sorted(manager.step({0: 0, 1: 0})) == [0, 1]


@pytest.mark.parametrize("manager_type", MANAGERS)
def test_envs_hung_in_one_reset_are_named_together(manager_type):
    manager = create_env_manager(
        manager_cfg(manager_type, reset_timeout=0.2, num_workers=4), several_hanging_fns(hang_reset_at=1)
    )
    try:
        with pytest.raises(EnvTimeoutError) as caught:
            manager.launch()
    finally:
        manager.close()
    # The serial manager resets one env after another and stops at the first failure: envs 2 and 3 never ran.
    hung = [1] if manager_type == "base" else [1, 2, 3]
    assert caught.value.env_ids == hung
    assert str(caught.value) == f"envs {hung} did not finish reset within 0.2 s"


def test_serial_manager_sets_no_limit_outside_the_main_thread():
    # signals reach only the main thread: there the step runs to its end (documented in docs/managers.md)
    fns = [partial(CountingEnv, {"limit": 10**6, "step_sleep": 0.4})]
    results, errors = [], []

    def run() -> None:
        try:
            with create_env_manager({"step_timeout": 0.1}, fns) as manager:
                manager.launch()
                results.append(manager.step({0: 0}))
        except Exception as error:  # noqa: BLE001 - handed to the test thread
            errors.append(error)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(10)
    assert not errors and list(results[0]) == [0]


@pytest.mark.parametrize("manager_type", [*MANAGERS, "subprocess+caller"])
def test_an_auto_reset_is_held_to_reset_timeout_not_step_timeout(manager_type):
    # One-step episodes: every step auto-resets, and each reset after an env's first takes 0.6 s.
    slow_resets = [partial(FaultEnv, {"limit": 1, "reset_sleep": 0.6})] * 2
    with create_env_manager(manager_cfg(manager_type, step_timeout=0.3, reset_timeout=3.0), slow_resets) as manager:
        manager.launch()
        timesteps = manager.step({0: 0, 1: 0})
        assert sorted(timesteps) == [0, 1] and all(timestep.done for timestep in timesteps.values())
    hung_resets = [partial(CountingEnv, {"limit": 1}), partial(FaultEnv, {"limit": 1, "hang_reset_at": 2})]
    with create_env_manager(manager_cfg(manager_type, reset_timeout=0.5), hung_resets) as manager:
        manager.launch()
        started = time.monotonic()
        with pytest.raises(EnvTimeoutError, match=r"envs \[1\] did not finish reset within 0.5 s") as raised:
            manager.step({0: 0, 1: 0})
        assert time.monotonic() - started < 3.0  # cut, with no step_timeout at all
        assert sorted(raised.value.results) == [0, 1]  # the step's results stand

"""Faults on top of faults: every env is accounted for (a result, or named by the raised error).

Plain envs only: a batch env's fault fails every id it hosts at once (test_batch_hosting has those cases).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from ding_env import create_env_manager
from ding_env.errors import EnvCrashedError, EnvError, EnvTimeoutError
from tests.conftest import manager_cfg
from tests.envs import CountingEnv, FaultEnv

SUBPROCESS = ["subprocess", "async_subprocess"]
EVERY_MANAGER = ["base", *SUBPROCESS]


def statuses(manager):
    return {env_id: status.name for env_id, status in manager.env_state.items()}


@pytest.mark.parametrize("manager_type", SUBPROCESS)
def test_a_crashed_worker_whose_replacement_cannot_reset_keeps_every_result(manager_type, tmp_path):
    crash_file = str(tmp_path / "crashed")
    fns = [
        partial(FaultEnv, dict(limit=10**6)),
        partial(FaultEnv, dict(limit=10**6, crash_every=2, crash_file=crash_file)),
    ]
    cfg = manager_cfg(manager_type, num_workers=2, step_error="abnormal")
    with create_env_manager(cfg, fns) as manager:
        manager.launch()
        manager.step({0: 0, 1: 0})
        with pytest.raises(EnvError) as raised:
            manager.step({0: 0, 1: 0})
        error = raised.value
        assert error.env_id == 1 and error.command == "reset" and "cannot reset after the crash" in str(error)
        assert sorted(error.results) == [0, 1]
        assert not error.results[0].done and error.results[0].obs[0] == 2.0  # the healthy env's true step
        assert error.results[1].done and error.results[1].info["abnormal"]
        assert list(error.errors) == [1]  # every failed env's error, by env id
        assert statuses(manager) == {0: "READY", 1: "NEEDS_RESET"}
        assert manager.ready_obs_id == [0]
        assert manager.step({0: 0})[0].obs[0] == 3.0


@pytest.mark.parametrize("manager_type", EVERY_MANAGER)
@pytest.mark.parametrize("step_error", ["raise", "abnormal"])
def test_a_failed_auto_reset_keeps_the_true_final_transition_and_needs_a_reset(manager_type, step_error):
    # limit=1: every step ends an episode (a truncation); env 1's second reset (the auto-reset) fails.
    fns = [partial(CountingEnv, dict(limit=1)), partial(CountingEnv, dict(limit=1, fail_reset_at=2))]
    with create_env_manager(manager_cfg(manager_type, num_workers=2, step_error=step_error), fns) as manager:
        manager.seed(0)
        manager.launch()
        with pytest.raises(EnvError, match="env 1 failed in reset: RuntimeError: reset 2 fails") as raised:
            manager.step({0: 2, 1: 2})
        results = raised.value.results
        assert sorted(results) == [0, 1]
        for env_id in (0, 1):  # both envs' real last steps: counter 1, reward action + 1, truncated
            assert results[env_id].done and results[env_id].truncated
            assert results[env_id].obs[0] == 1.0 and results[env_id].reward[0] == 3.0
            assert "abnormal" not in results[env_id].info
        assert statuses(manager) == {0: "READY", 1: "NEEDS_RESET"}
        assert manager.ready_obs_id == [0]  # env 1 is never handed out without a reset
        manager.step({0: 0})
        manager.reset({1: {}})
        assert 1 in manager.ready_obs_id


@pytest.mark.parametrize("manager_type", SUBPROCESS)
@pytest.mark.parametrize("step_error", ["raise", "abnormal"])
def test_the_idle_envs_of_a_worker_that_dies_are_accounted_for(manager_type, step_error):
    # Two workers: envs 0-1 and 2-3. Env 3 dies on its second step while env 2 waits for an action.
    fns = [partial(FaultEnv, dict(limit=10**6))] * 3 + [partial(FaultEnv, dict(limit=10**6, crash_every=2))]
    with create_env_manager(manager_cfg(manager_type, num_workers=2, step_error=step_error), fns) as manager:
        manager.launch()
        manager.step({0: 0, 1: 0, 2: 0, 3: 0})
        if step_error == "raise":
            with pytest.raises(EnvCrashedError) as raised:
                manager.step({0: 0, 3: 0})
            assert raised.value.env_ids == [2, 3]
            results = raised.value.results
            assert statuses(manager) == {0: "READY", 1: "READY", 2: "NEEDS_RESET", 3: "NEEDS_RESET"}
        else:
            results = manager.step({0: 0, 3: 0})
            assert statuses(manager) == {0: "READY", 1: "READY", 2: "READY", 3: "READY"}  # renewed and reset
            assert manager.ready_obs[2][0] == 0.0
        assert sorted(results) == [0, 2, 3]
        assert results[2].done and results[2].info["abnormal"] and "died" in results[2].info["error"]


@pytest.mark.parametrize("manager_type", SUBPROCESS)
def test_done_is_reached_while_workers_keep_dying(manager_type):
    fns = [partial(FaultEnv, dict(limit=3))] * 3 + [partial(FaultEnv, dict(limit=3, crash_every=2))]
    cfg = manager_cfg(manager_type, num_workers=2, step_error="abnormal", episode_num=3)
    with create_env_manager(cfg, fns) as manager:
        manager.seed(0)
        manager.launch()
        for _ in range(200):
            if manager.done:
                break
            ready = manager.ready_obs_id
            manager.step({env_id: 0 for env_id in ready[:1]})  # one env at a time: the others stay idle
        assert manager.done, statuses(manager)


@pytest.mark.parametrize("manager_type", SUBPROCESS)
def test_errors_after_a_worker_replacement_carry_no_earlier_error(manager_type):
    # Env 1's second reset hangs: its worker is replaced (forked); a later error there is its own.
    fns = [partial(FaultEnv, dict(limit=10**6)), partial(FaultEnv, dict(limit=10**6, hang_reset_at=2, raise_every=2))]
    cfg = manager_cfg(manager_type, num_workers=2, context="fork", reset_timeout=0.3)
    with create_env_manager(cfg, fns) as manager:
        manager.launch()
        with pytest.raises(EnvTimeoutError):
            manager.reset({1: {}})
        manager.reset({1: {}})  # the fresh env's first reset
        manager.step({0: 0, 1: 0})
        with pytest.raises(EnvError, match="injected error at step 2") as raised:
            manager.step({0: 0, 1: 0})
        assert "EnvTimeoutError" not in str(raised.value)
        assert "During handling of the above exception" not in raised.value.remote_traceback
        assert np.array_equal(manager.ready_obs_id, [0])


def accounted(actions: dict, call) -> tuple[dict, BaseException | None]:
    """``call()``'s results; on an error, the results it carries. Asserts every env of ``actions`` is in
    them or named by the error."""
    try:
        return call(), None
    except (EnvError, EnvCrashedError, EnvTimeoutError) as error:
        results = getattr(error, "results", {})
        named = (
            set(getattr(error, "env_ids", [])) | {getattr(error, "env_id", None)} | set(getattr(error, "errors", {}))
        )
        missing = [env_id for env_id in actions if env_id not in results and env_id not in named]
        assert not missing, (missing, error)
        return results, error


@pytest.mark.parametrize("manager_type", EVERY_MANAGER)
@pytest.mark.parametrize("step_error", ["raise", "abnormal"])
def test_every_env_is_accounted_for_under_mixed_faults(manager_type, step_error):
    """Step errors, failed auto-resets, crashes, kills and hangs at once: nothing is lost or stuck."""
    in_workers = manager_type != "base"
    # Four workers of two envs each: a faulty env beside a healthy one in every worker.
    faults = [
        dict(raise_every=7),
        dict(fail_reset_at=3),
        dict(crash_every=9) if in_workers else dict(raise_every=5),
        {},
        dict(hang_every=15) if in_workers else dict(fail_reset_at=2),
        {},
        dict(kill_every=10) if in_workers else {},
        {},
    ]
    fns = [partial(FaultEnv, dict(limit=4, **fault)) for fault in faults]
    cfg = manager_cfg(manager_type, num_workers=4, step_error=step_error, step_timeout=0.2, retry_waiting_time=0.0)
    seen = set()  # the kinds of fault met, so the test knows it exercised them
    with create_env_manager(cfg, fns) as manager:
        manager.seed(3)
        manager.launch()
        for t in range(90):
            needs_reset = [env_id for env_id, status in manager.env_state.items() if status.name == "NEEDS_RESET"]
            if needs_reset:
                accounted(dict.fromkeys(needs_reset), lambda ids=needs_reset: manager.reset({i: {} for i in ids}))
                continue
            actions = {env_id: (env_id + t) % 3 for env_id in manager.ready_obs_id}
            results, error = accounted(actions, lambda actions=actions: manager.step(actions))
            if error is not None:
                seen.add(type(error).__name__ + ":" + getattr(error, "command", ""))
            if manager_type != "async_subprocess":
                assert "STEPPING" not in statuses(manager).values()
            for timestep in results.values():
                assert timestep.done or not timestep.info.get("abnormal")
                if timestep.info.get("abnormal"):
                    seen.add("abnormal:" + timestep.info["error"].split(" ")[0])
    assert "EnvError:reset" in seen, seen  # failed auto-resets are raised in both modes
    if step_error == "raise":
        assert "EnvError:step" in seen, seen
        if in_workers:
            assert {"EnvCrashedError:step", "EnvTimeoutError:step"} <= seen, seen

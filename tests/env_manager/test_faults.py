"""Faults, resource safety and bad input: managers never hang, never lose data, always explain themselves."""

import os
import pickle
import signal
import subprocess
import sys
import time
from functools import partial

import numpy as np
import pytest

from ding_env import AsyncSubprocessEnvManager, SyncSubprocessEnvManager, create_env_manager
from ding_env.errors import (
    ClosedEnvError,
    DingEnvError,
    EnvCrashedError,
    EnvError,
    EnvStateError,
    EnvTimeoutError,
)
from tests.conftest import ALL_MANAGER_TYPES, manager_cfg
from tests.envs import ActionKindEnv, CountingEnv, FaultEnv
from tests.support import REPO, child_pids, leaked_segments, process_running, resource_tracker_pids, shm_segments

SUBPROCESS = ["subprocess", "async_subprocess"]


def fault_fns(count, faulty=None, **fault):
    faulty = range(count) if faulty is None else faulty
    return [partial(FaultEnv, dict(limit=10**6, **(fault if i in faulty else {}))) for i in range(count)]


def open_fds():
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("manager_type", SUBPROCESS)
@pytest.mark.parametrize("fault", ["crash_every", "kill_every"])
def test_dead_worker_is_reported_fast_and_renewed_on_reset(manager_type, fault):
    with create_env_manager(manager_cfg(manager_type, num_workers=2), fault_fns(2, [1], **{fault: 3})) as manager:
        manager.launch()
        manager.step({0: 0, 1: 0})
        manager.step({0: 0, 1: 0})
        started = time.monotonic()
        with pytest.raises(EnvCrashedError) as info:
            manager.step({0: 0, 1: 0})
            manager.step({})  # the async manager may return env 0 first
        assert time.monotonic() - started < 1.0
        assert info.value.env_ids == [1] and info.value.exitcode in (3, -9)
        assert 1 not in manager.ready_obs_id
        manager.reset({1: {}})
        assert manager.ready_obs[1][0] == 0.0
        manager.step({1: 0})


@pytest.mark.parametrize("manager_type", SUBPROCESS)
def test_crash_as_abnormal_timestep(manager_type):
    cfg = manager_cfg(manager_type, num_workers=2, step_error="abnormal")
    with create_env_manager(cfg, fault_fns(2, [0], crash_every=2)) as manager:
        manager.launch()
        manager.step({0: 0, 1: 0})
        results = {}
        while 0 not in results:
            results.update(manager.step({env_id: 0 for env_id in manager.ready_obs}))
        assert results[0].done and results[0].info["abnormal"] and "died" in results[0].info["error"]
        assert 0 in manager.ready_obs_id  # renewed and reset: ready again


@pytest.mark.parametrize("manager_type", SUBPROCESS)
def test_hung_env_times_out_and_its_worker_is_replaced(manager_type):
    cfg = manager_cfg(manager_type, num_workers=2, step_timeout=0.3)
    with create_env_manager(cfg, fault_fns(2, [1], hang_every=2)) as manager:
        manager.launch()
        manager.step({0: 0, 1: 0})
        old_pid = manager.workers[1].pid
        started = time.monotonic()
        with pytest.raises(EnvTimeoutError, match=r"envs \[1\] did not finish step within 0.3 s"):
            manager.step({0: 0, 1: 0})
            manager.step({})
        assert time.monotonic() - started < 1.5
        assert manager.workers[1].pid != old_pid
        manager.reset({1: {}})
        assert sorted(manager.step({0: 0, 1: 0})) in ([0, 1], [0], [1])


def test_async_env_call_waits_for_a_hung_step_only_up_to_reset_timeout():
    cfg = {"num_workers": 2, "wait_num": 1, "step_wait_timeout": 0.0, "reset_timeout": 0.3}  # no step_timeout
    with AsyncSubprocessEnvManager(fault_fns(2, [1], hang_every=2), cfg) as manager:
        manager.launch()
        manager.step({0: 0, 1: 0})
        while len(manager.ready_obs) < 2:
            manager.step({})
        assert sorted(manager.step({0: 0, 1: 0})) == [0]  # env 1 hangs in its second step
        old_pid = manager.workers[1].pid
        started = time.monotonic()
        assert manager.imported("numpy") == [True, True]  # answered, by a fresh worker for env 1
        assert time.monotonic() - started < 1.5
        assert manager.workers[1].pid != old_pid
        with pytest.raises(EnvTimeoutError, match=r"envs \[1\] did not finish step within 0.3 s"):
            manager.step({})  # the hung step's result: abnormal, with the timeout


def test_reset_timeout_is_a_float_enforced_by_the_parent():
    fns = [partial(CountingEnv, {})] + [partial(FaultEnv, {"hang_every": 1})]
    manager = SyncSubprocessEnvManager(fns, {"reset_timeout": 0.2, "step_timeout": 0.2, "num_workers": 2})
    manager.launch()
    with pytest.raises(EnvTimeoutError):
        manager.step({0: 0, 1: 0})
    manager.close()


@pytest.mark.parametrize("manager_type", ["base", *SUBPROCESS])
def test_env_exception_names_env_and_command_with_remote_traceback(manager_type):
    with create_env_manager(manager_cfg(manager_type), fault_fns(2, [1], raise_every=2)) as manager:
        manager.launch()
        manager.step({0: 0, 1: 0})
        with pytest.raises(EnvError, match="env 1 failed in step: RuntimeError: injected error at step 2") as info:
            manager.step({0: 0, 1: 0})
            manager.step({})
        assert isinstance(info.value, RuntimeError) and "injected error" in info.value.remote_traceback


@pytest.mark.parametrize("manager_type", SUBPROCESS)
@pytest.mark.parametrize("fault", [dict(raise_every=2), dict(crash_every=2), dict(hang_every=2)])
def test_manager_errors_pickle_with_their_message_and_attributes(manager_type, fault):
    # A process pool or Ray hands an error back from another process by pickling it.
    cfg = manager_cfg(manager_type, step_timeout=0.3)
    with create_env_manager(cfg, fault_fns(2, **fault)) as manager:
        manager.launch()
        manager.step({0: 0, 1: 0})
        with pytest.raises(DingEnvError) as info:
            manager.step({0: 0, 1: 0})
            manager.step({})
    error = info.value
    error.add_note("seen by the caller")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and str(copy) == str(error)
    assert vars(copy).keys() == vars(error).keys() and copy.__notes__ == ["seen by the caller"]
    env_ids = getattr(error, "env_ids", None) or [error.env_id]
    assert (getattr(copy, "env_ids", None) or [copy.env_id]) == env_ids


@pytest.mark.parametrize("manager_type", ["base", *SUBPROCESS])
def test_bad_actions_change_nothing(manager_type, hosted):
    fns = hosted([partial(CountingEnv, {"limit": 10**6})] * 2)
    with create_env_manager(manager_cfg(manager_type), fns) as manager:
        manager.seed(0)
        manager.launch()
        before = {env_id: obs.copy() for env_id, obs in manager.ready_obs.items()}
        bad = [
            ({0: 3}, r"action for env 0 is out of range: expected a value in Discrete\(3\), got"),
            ({0: 1.5}, "expected integers"),
            ({0: "1"}, "action for env 0 has dtype <U1, expected integers"),
            ({0: True}, "action for env 0 has dtype bool, expected integers"),
            ({1: np.array([1, 2])}, r"action for env 1 has shape \(2,\), expected \(\)"),
            ({0: 1, 1: np.array([1, 2])}, r"action for env 1 has shape \(2,\), expected \(\)"),
            ({7: 0}, "out of range"),
        ]
        for actions, message in bad:
            with pytest.raises(ValueError, match=message):
                manager.step(actions)
        with pytest.raises(ValueError, match="must have shape"):
            manager.step_batch([0, 1], np.zeros(3, dtype=np.int64))
        with pytest.raises(ValueError, match="out of range"):
            manager.step_batch([0, 1], np.array([0, -1]))
        assert manager.ready_obs_id == [0, 1]
        for env_id, obs in manager.ready_obs.items():
            np.testing.assert_array_equal(obs, before[env_id])
        assert manager.step({0: 2})[0].obs[0] == 1.0  # the env is where it was


@pytest.mark.parametrize("manager_type", ["base", *SUBPROCESS])
@pytest.mark.parametrize("count", [8, 200])  # small and large batches are checked alike
def test_bad_batched_actions_name_the_first_bad_env_and_reach_no_env(manager_type, count):
    def make(space):
        fns = [partial(ActionKindEnv, {"space": space, "limit": 10**6})] * count
        return create_env_manager(manager_cfg(manager_type, num_workers=2), fns)

    env_ids = np.arange(count)
    with make("discrete_from_1") as manager:
        manager.launch()
        actions = np.ones(count, dtype=np.int64)
        manager.step_batch(env_ids, actions)
        for bad_value in (0, 4):
            actions[count - 3] = bad_value
            with pytest.raises(ValueError, match=f"action for env {count - 3} is out of range"):
                manager.step_batch(env_ids, actions)
        assert manager.current_step() == [1] * count  # no env was stepped

    with make("box") as manager:
        manager.launch()
        good = np.zeros((count, 2), dtype=np.float64)
        manager.step_batch(env_ids, good)
        assert manager.last_action == [("ndarray", "float32", (2,))] * count  # converted to the space's dtype
        bad_actions = [(np.inf, "holds NaN or inf"), (-np.inf, "holds NaN or inf"), (np.nan, "holds NaN or inf")]
        for bad_value, message in [
            *bad_actions,
            (1.5, r"is outside the bounds: element 1 is 1.5, outside \[-1.0, 1.0\]"),
        ]:
            bad = good.copy()
            bad[count - 2, 1] = bad_value
            with pytest.raises(ValueError, match=f"action for env {count - 2} {message}"):
                manager.step_batch(env_ids, bad)
        assert manager.current_step() == [1] * count

    with make("box_per_dim") as manager:
        manager.launch()
        manager.step_batch(env_ids, good + [0.0, 1.5])
        with pytest.raises(ValueError, match=f"action for env {count - 1} is outside"):
            manager.step_batch(env_ids, np.vstack([good[1:], [[0.5, -0.1]]]))
        assert manager.current_step() == [1] * count


@pytest.mark.parametrize("manager_type", SUBPROCESS)
def test_step_before_launch_and_after_close(manager_type):
    manager = create_env_manager({"type": manager_type}, fault_fns(1))
    with pytest.raises(Exception, match="not launched"):
        manager.step({0: 0})
    manager.launch()
    manager.close()
    with pytest.raises(ClosedEnvError):
        manager.step({0: 0})


def test_launch_close_cycles_leak_no_fd_process_or_segment():
    SyncSubprocessEnvManager(fault_fns(2), {}).close()  # warm up lazily created fds (resource tracker)
    fds, segments, children = open_fds(), shm_segments(), child_pids()
    for manager_cls in (SyncSubprocessEnvManager, AsyncSubprocessEnvManager):
        for _ in range(3):
            with manager_cls(fault_fns(4), {"num_workers": 2}) as manager:
                manager.launch()
                manager.step({0: 0, 1: 0, 2: 0, 3: 0})
    assert open_fds() <= fds and not leaked_segments(segments) and child_pids() <= children


def run_soak(fault_cfgs, steps):
    """Step every ready env ``steps`` times; return per-env transitions and the set of abnormal steps."""
    fns = [partial(FaultEnv, dict(limit=50, **cfg)) for cfg in fault_cfgs]
    cfg = {"num_workers": len(fns), "step_error": "abnormal", "step_timeout": 0.5, "retry_waiting_time": 0.0}
    transitions = {env_id: [] for env_id in range(len(fns))}
    abnormal = {env_id: 0 for env_id in range(len(fns))}
    with SyncSubprocessEnvManager(fns, cfg) as manager:
        manager.seed(11)
        manager.launch()
        for t in range(steps):
            actions = {env_id: (env_id + t) % 3 for env_id in manager.ready_obs}
            timesteps = manager.step(actions)
            assert sorted(timesteps) == sorted(actions)  # every step is returned or reported
            for env_id, ts in timesteps.items():
                if ts.info.get("abnormal"):
                    abnormal[env_id] += 1
                transitions[env_id].append((actions[env_id], ts.obs.tobytes(), float(ts.reward[0]), ts.done))
    return transitions, abnormal


def test_fault_injection_soak():
    segments, children, fds = shm_segments(), child_pids(), open_fds()
    steps = 1500
    faults = [{}, {"raise_every": 300}, {}, {"crash_every": 500}, {}, {"hang_every": 700}, {"kill_every": 650}, {}]
    clean, _ = run_soak([{}] * 8, steps)
    faulty, abnormal = run_soak(faults, steps)
    assert abnormal == {0: 0, 1: 5, 2: 0, 3: 3, 4: 0, 5: 2, 6: 2, 7: 0}
    for env_id in (0, 2, 4, 7):
        assert faulty[env_id] == clean[env_id]
    assert not leaked_segments(segments) and child_pids() <= children and open_fds() <= fds


@pytest.mark.parametrize("manager_type", ["base", *SUBPROCESS])
def test_failing_env_closes_are_raised_after_everything_is_closed(manager_type):
    segments, children = shm_segments(), child_pids()
    manager = create_env_manager(manager_cfg(manager_type, num_workers=2), fault_fns(4, [1, 3], fail_close=True))
    manager.launch()
    manager.step({env_id: 0 for env_id in range(4)})
    with pytest.raises(EnvError, match=r"env 1 failed in close: OSError: injected close failure after 1 steps") as info:
        manager.close()
    assert info.value.env_id == 1 and "(also env 3: OSError: injected close failure" in str(info.value)
    assert manager.closed
    manager.close()  # once closed, closing again is a no-op
    assert not leaked_segments(segments) and child_pids() <= children | resource_tracker_pids()


@pytest.mark.parametrize("manager_type", SUBPROCESS)
def test_an_interrupted_close_still_stops_every_worker_and_frees_the_segment(manager_type):
    import _thread
    import signal
    import threading

    segments, children = shm_segments(), child_pids()
    manager = create_env_manager(manager_cfg(manager_type, num_workers=2), fault_fns(2, [0], hang_close=True))
    manager.launch()
    manager.step({0: 0, 1: 0})
    # A second Ctrl-C while close waits for a worker whose env hangs in close(). Python's own
    # SIGINT handler is put in place: a test run started in the background inherits SIGINT ignored.
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    try:
        timer.start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            manager.close()
    finally:
        timer.cancel()  # if close ended before the interrupt, none may arrive later
        timer.join()
        signal.signal(signal.SIGINT, handler)
    assert time.monotonic() - started < 5.0  # not the 10 s close timeout
    assert not leaked_segments(segments) and child_pids() <= children | resource_tracker_pids()


def run_killed_parent(script, started):
    """Run ``script`` in a Python process, SIGKILL it once ``started(child_pids)`` holds; return those children."""
    import subprocess
    import sys

    parent = subprocess.Popen([sys.executable, "-c", f"import sys; sys.path.insert(0, {os.getcwd()!r})\n{script}"])
    try:
        deadline = time.monotonic() + 30.0
        while not started(children := child_pids(parent.pid)):
            assert time.monotonic() < deadline and parent.poll() is None, "the manager process did not start"
            time.sleep(0.01)
    finally:
        parent.kill()  # SIGKILL: no cleanup runs in the parent
        parent.wait()
    return children


def wait_until_ended(pids, seconds=5.0):
    deadline = time.monotonic() + seconds
    while any(map(process_running, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(map(process_running, pids))


def test_workers_exit_with_a_killed_parent_where_pidfds_are_missing(tmp_path):
    # Older kernels and some sandboxes have no pidfd_open: forked workers then watch their OS parent.
    launched = tmp_path / "launched"
    script = (
        "import errno, os, time\n"
        "def no_pidfd(pid):\n"
        "    raise OSError(errno.ENOSYS, 'pidfd_open is not available')\n"
        "os.pidfd_open = no_pidfd\n"
        "from ding_env import SyncSubprocessEnvManager\n"
        "from tests.support import counting_fns\n"
        "manager = SyncSubprocessEnvManager(counting_fns(2), {'num_workers': 2, 'context': 'fork'})\n"
        "manager.launch()\n"
        f"open({str(launched)!r}, 'w').close()\n"
        "time.sleep(60)\n"
    )
    workers = run_killed_parent(script, lambda children: launched.exists() and len(children) >= 2)
    assert wait_until_ended(workers)


def test_workers_exit_when_their_parent_dies_while_they_start():
    # Killed as soon as its first spawned worker exists: that worker finds its manager gone when it starts.
    script = (
        "from ding_env import SyncSubprocessEnvManager\n"
        "from tests.support import counting_fns\n"
        "manager = SyncSubprocessEnvManager(counting_fns(2), {'num_workers': 2, 'context': 'spawn'})\n"
        "manager.launch()\n"
    )
    children = run_killed_parent(script, lambda children: any(map(spawned_worker, children)))
    assert wait_until_ended(children)


@pytest.mark.parametrize("context", ["fork", "spawn", "forkserver"])
def test_a_closed_managers_workers_leave_no_watchdog_even_unreaped(context):
    # Each worker has a watchdog process (it kills the worker when the manager is killed). In a container whose
    # first process is the training script, orphans become its children and nobody reaps them: the script runs
    # here as a subreaper, which orphans are handed to as to such a first process.
    script = (
        "import ctypes, os, sys\n"
        "ctypes.CDLL(None, use_errno=True).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER\n"
        "from ding_env import SyncSubprocessEnvManager\n"
        "from tests.support import child_pids, counting_fns\n"
        "if __name__ == '__main__':\n"
        f"    manager = SyncSubprocessEnvManager(counting_fns(2), {{'num_workers': 2, 'context': {context!r}}})\n"
        "    manager.launch()\n"
        "    watchdogs = set().union(*(child_pids(worker.pid) for worker in manager.workers))\n"
        "    manager.close()\n"
        "    print(len(watchdogs), [pid for pid in watchdogs if os.path.exists(f'/proc/{pid}')])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "2 []"  # two watchdogs, neither left, not even as a zombie


@pytest.mark.parametrize("context", ["spawn", "forkserver"])
def test_a_script_without_a_main_guard_is_told_to_add_one(tmp_path, context):
    # Each worker runs the script again as it starts; the error said only that the worker died with exit code 1.
    script = tmp_path / "train.py"
    script.write_text(
        f"import sys\nsys.path.insert(0, {os.getcwd()!r})\n"
        "from ding_env import SyncSubprocessEnvManager\n"
        "from tests.support import counting_fns\n"
        f"manager = SyncSubprocessEnvManager(counting_fns(2), {{'num_workers': 2, 'context': {context!r}}})\n"
        "manager.launch()\n"
        "manager.close()\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1 and last.startswith("ding_env.errors.EnvCrashedError: worker hosting envs")
    assert f"likely because the script '{script}' builds envs outside `if __name__ == '__main__':`" in last
    guarded = script.read_text().replace("manager = ", "if __name__ == '__main__':\n    manager = ")
    script.write_text(guarded.replace("\nmanager.", "\n    manager."))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def spawned_worker(pid):
    try:
        with open(f"/proc/{pid}/cmdline") as cmdline:
            return "spawn_main" in cmdline.read()
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("context", ["fork", "spawn", "forkserver"])
@pytest.mark.parametrize("holding_gil", [False, True], ids=["sleeping", "holding-the-gil"])
def test_workers_die_with_a_killed_parent_even_while_their_env_hangs(context, holding_gil, tmp_path):
    # An env stuck in a C call that keeps the GIL leaves no thread of its worker able to run.
    import subprocess
    import sys

    env_cfg = {"hang_every": 1, "limit": 10**6, "hang_holding_gil": holding_gil}
    script = (
        "from functools import partial\n"
        "from ding_env import SyncSubprocessEnvManager\n"
        "from tests.envs import FaultEnv\n"
        f"cfg = {{'num_workers': 2, 'context': {context!r}}}\n"
        f"manager = SyncSubprocessEnvManager([partial(FaultEnv, {env_cfg!r})] * 2, cfg)\n"
        "manager.launch()\n"
        "print(*[worker.pid for worker in manager.workers], flush=True)\n"
        "manager.step({0: 0, 1: 0})  # both workers hang inside env.step\n"
    )
    # The killed parent cannot remove its fork server's socket folder (the workers' watchdogs do): should one be
    # left, it is left in tmp_path, not /tmp.
    killed_env = {**os.environ, "TMPDIR": str(tmp_path)}
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=killed_env)
    try:
        workers = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(workers) == 2
        time.sleep(0.3)  # the step is under way
        watchdogs = set().union(*map(child_pids, workers))
    finally:
        parent.kill()  # SIGKILL: no cleanup runs in the parent
        parent.wait()
    try:
        assert len(watchdogs) == 2 and wait_until_ended([*workers, *watchdogs])
    finally:  # a failure leaves no hung worker behind
        for pid in filter(process_running, workers):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while list(tmp_path.glob("pymp-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not list(tmp_path.glob("pymp-*"))  # the fork server's socket folder: the killed manager left it


def test_async_close_stops_a_hung_worker_without_waiting_for_its_reply():
    segments, children = shm_segments(), child_pids()
    cfg = {"num_workers": 2, "wait_num": 1, "step_wait_timeout": 0.0}
    manager = AsyncSubprocessEnvManager(fault_fns(2, [1], hang_every=1), cfg)
    manager.launch()
    assert sorted(manager.step({0: 0, 1: 0})) == [0]  # env 1 hangs in its step
    started = time.monotonic()
    with pytest.raises(EnvError, match=r"env 1 failed in close: its worker \(envs \[1\]\) was still stepping"):
        manager.close()
    assert time.monotonic() - started < 4.0  # not the 10 s a close request to it would wait
    assert not leaked_segments(segments) and child_pids() <= children | resource_tracker_pids()


@pytest.mark.parametrize("manager_type", SUBPROCESS)
@pytest.mark.parametrize("step_error", ["raise", "abnormal"])
def test_a_worker_lost_beside_the_callers_share_leaves_every_env_accounted_for(manager_type, step_error):
    # Envs 0 and 1 in the one worker, 2 and 3 in this process; env 0 crashes on its 2nd step while
    # the step names env 3 first and leaves env 1 idle: env 1 loses its episode with the worker.
    cfg = manager_cfg(manager_type, caller_share=True, num_workers=1, step_error=step_error)
    with create_env_manager(cfg, fault_fns(4, [0], crash_every=2)) as manager:
        manager.launch()
        manager.step({3: 0, 0: 0, 2: 0, 1: 0})
        if step_error == "raise":
            with pytest.raises(EnvCrashedError) as info:
                manager.step({3: 0, 0: 0, 2: 0})
            timesteps = info.value.results
        else:
            timesteps = manager.step({3: 0, 0: 0, 2: 0})
        assert sorted(timesteps) == [0, 1, 2, 3]
        if manager_type == "subprocess":  # the envs asked for in their order, then the lost idle one
            assert list(timesteps) == [3, 0, 2, 1]
        assert timesteps[1].done and timesteps[1].info["abnormal"]  # the idle env's lost episode
        assert not timesteps[3].done and not timesteps[2].done
        assert manager.env_state[2].name == manager.env_state[3].name == "READY"
        assert "STEPPING" not in {status.name for status in manager.env_state.values()}
        manager.reset()
        assert sorted(manager.step({env_id: 0 for env_id in manager.ready_obs_id})) == [0, 1, 2, 3]


@pytest.mark.parametrize("manager_type", SUBPROCESS)
def test_results_of_one_backend_of_several_belong_to_the_caller(manager_type):
    # Only the worker's envs step: its results come from shared memory alone and are still copies.
    cfg = manager_cfg(manager_type, caller_share=True, num_workers=1)
    with create_env_manager(cfg, fault_fns(4)) as manager:
        manager.launch()
        first = manager.step_batch([0, 1], np.zeros(2, np.int64))
        kept = first.obs.copy(), first.reward.copy()
        manager.step_batch([0, 1], np.zeros(2, np.int64))
        np.testing.assert_array_equal(first.obs, kept[0])
        np.testing.assert_array_equal(first.reward, kept[1])


class SlottedError(EnvError):
    """An error subclass keeping an attribute in ``__slots__``, as a user's may."""

    __slots__ = ("code",)


def test_an_error_subclass_with_slots_pickles_its_slot():
    error = SlottedError(3, "step", "boom")
    error.code = 7
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.code, copy.env_id, str(copy)) == (7, 3, str(error))


def interrupted(call, after=0.2):
    """Run ``call()`` with a Ctrl-C (KeyboardInterrupt) arriving ``after`` seconds in; it must be cut by it."""
    import _thread
    import signal
    import threading

    handler = signal.signal(signal.SIGINT, signal.default_int_handler)  # see the test above
    timer = threading.Timer(after, _thread.interrupt_main)
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, handler)


@pytest.mark.parametrize("manager_type", ALL_MANAGER_TYPES)
def test_a_step_cut_by_ctrl_c_leaves_its_envs_needing_a_reset_that_the_next_call_asks_for(manager_type):
    fns = [partial(CountingEnv, {"step_sleep": 0.5, "limit": 2})] * 2  # every second step ends an episode
    with create_env_manager(manager_cfg(manager_type), fns) as manager:
        manager.launch()
        manager.step_batch([0, 1], np.zeros(2, np.int64))
        interrupted(lambda: manager.step_batch([0, 1], np.zeros(2, np.int64)))
        # Not 'stepping' for ever, with no ready env and an empty step for an answer: the next call says what to do.
        for call in (lambda: manager.ready_obs_batch, lambda: manager.step_batch([0], [0])):
            with pytest.raises(EnvStateError, match=r"envs \[0, 1\] were stepping when a step was interrupted"):
                call()
        manager.reset()
        batch = manager.step_batch([0, 1], np.zeros(2, np.int64))
        # The first step after the reset, not the interrupted step's results (which ended the episodes).
        assert batch.env_id.tolist() == [0, 1] and batch.obs[:, 0].tolist() == [1, 1] and not batch.done.any()


@pytest.mark.parametrize("manager_type", SUBPROCESS)
def test_close_after_a_ctrl_c_cut_a_hung_step_stops_the_hung_worker_at_once(manager_type):
    segments, children = shm_segments(), child_pids()
    manager = create_env_manager(manager_cfg(manager_type, num_workers=2), fault_fns(2, [1], hang_every=2))
    manager.launch()
    manager.step({0: 0, 1: 0})
    interrupted(lambda: (manager.step({0: 0, 1: 0}), manager.step({})))  # env 1 hangs in this step
    started = time.monotonic()
    with pytest.raises(EnvError, match="was still stepping and was stopped"):
        manager.close()
    assert time.monotonic() - started < 5.0  # not the 10 s a close request to the hung worker would wait
    assert not leaked_segments(segments) and child_pids() <= children | resource_tracker_pids()


@pytest.mark.parametrize("manager_type", SUBPROCESS)
def test_a_report_left_by_a_worker_that_finished_before_a_ctrl_c_is_not_taken_for_a_reply(manager_type):
    # Worker 0's env fails its step (an error report on its pipe) while worker 1's still sleeps when Ctrl-C comes.
    fns = [partial(FaultEnv, {"limit": 10**6, "raise_every": 1}), partial(CountingEnv, {"step_sleep": 1.0})]
    cfg = manager_cfg(manager_type, num_workers=2, step_error="abnormal")
    with create_env_manager(cfg, fns) as manager:
        manager.launch()
        interrupted(lambda: (manager.step_batch([0, 1], np.zeros(2, np.int64)), manager.step({})), after=0.4)
        manager.reset()  # took the report for its reply before: AttributeError, then a close failing
        batch = manager.step_batch([0, 1], np.zeros(2, np.int64))
        assert batch.env_id.tolist() == [0, 1] and batch.obs[1, 0] == 1  # env 1's first step after the reset
        assert batch.info[0]["abnormal"] and "injected error at step 1" in batch.info[0]["error"]
        assert manager.env_status is not None  # every worker still answers requests


@pytest.mark.parametrize("manager_type", SUBPROCESS)
def test_a_reset_after_ctrl_c_cut_a_hung_step_returns_with_only_step_timeout_set(manager_type):
    fns = fault_fns(2, [1], hang_every=2)
    with create_env_manager(manager_cfg(manager_type, num_workers=2, step_timeout=1.0), fns) as manager:
        manager.launch()
        manager.step({0: 0, 1: 0})
        interrupted(lambda: (manager.step({0: 0, 1: 0}), manager.step({})), after=0.3)
        started = time.monotonic()
        manager.reset()  # the hung worker is waited for as long as its step was, then replaced
        assert time.monotonic() - started < 5.0
        assert sorted(manager.step({0: 0, 1: 0})) == [0, 1]


CTRL_C_LOOP = """
import faulthandler, os, random, signal, sys
from functools import partial
import numpy as np
from ding_env import create_env_manager
from tests.conftest import manager_cfg
from tests.envs import CountingEnv

faulthandler.dump_traceback_later(45, exit=True)  # a hang: where it hangs, and a failed run
signal.signal(signal.SIGINT, signal.default_int_handler)  # a test run started in the background ignores it
# A timer signal sends the Ctrl-C at its moment: the kernel delivers it, with no thread to wait for.
signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGINT))
rng = random.Random(0)
with create_env_manager(manager_cfg(sys.argv[1]), [partial(CountingEnv, {"limit": 50})] * 8) as manager:
    manager.seed(0)
    manager.launch()
    for _ in range(2000):
        try:
            signal.setitimer(signal.ITIMER_REAL, rng.uniform(0.0001, 0.005))
            while True:
                ready = manager.ready_obs_batch
                manager.step_batch(ready.env_id, np.zeros(len(ready.env_id), np.int64))
        except KeyboardInterrupt:
            pass
        manager.reset()
        batch = manager.step_batch(np.arange(8), np.zeros(8, np.int64))
        assert (batch.obs[:, 0] == 1).all(), batch.obs[:, 0]  # every env's first step after the reset
print("recovered every time")
"""


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "subprocess+caller", "async_subprocess"])
def test_ctrl_c_at_any_moment_of_a_step_leaves_a_manager_that_resets_and_goes_on(manager_type):
    # A Ctrl-C landing just after a worker's done post was taken, or between counting a worker's step and
    # posting it, left the manager waiting for a post that never came: the next reset hung for ever, or
    # a later step took an earlier step's post and read rows the worker was still writing.
    segments = shm_segments()
    result = subprocess.run(
        [sys.executable, "-c", CTRL_C_LOOP, manager_type], capture_output=True, text=True, timeout=90, cwd=REPO
    )
    assert result.returncode == 0 and "recovered every time" in result.stdout, result.stderr[-3000:]
    assert not leaked_segments(segments)


THREAD_CTRL_C = """
import os, signal, sys, threading, time
from functools import partial
import numpy as np
from ding_env import create_env_manager
from tests.conftest import manager_cfg
from tests.envs import CountingEnv

signal.signal(signal.SIGINT, signal.default_int_handler)
fns = [partial(CountingEnv, {"limit": 50, "step_sleep": 0.002})] * 2
stop, seen_in_thread = threading.Event(), []

def step_in_thread():
    with create_env_manager(manager_cfg(sys.argv[1]), fns) as other:
        other.launch()
        while not stop.is_set():
            try:
                ready = other.ready_obs_batch
                other.step_batch(ready.env_id, np.zeros(len(ready.env_id), np.int64))
            except KeyboardInterrupt:
                seen_in_thread.append(1)
                other.reset()

with create_env_manager(manager_cfg(sys.argv[1]), fns) as manager:
    manager.launch()  # in the main thread: installs the holding handler
    thread = threading.Thread(target=step_in_thread)
    thread.start()
    time.sleep(0.5)
    late = 0
    for _ in range(10):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1.0)
            late += 1
        except KeyboardInterrupt:
            pass
    stop.set()
    thread.join()
print("late", late, "in thread", len(seen_in_thread))
"""


@pytest.mark.parametrize("manager_type", ["subprocess", "async_subprocess"])
def test_a_ctrl_c_reaches_the_main_thread_while_a_manager_steps_in_another(manager_type):
    # The held sections of a manager stepping in another thread held the main thread's Ctrl-C off and raised it
    # in that thread: the main thread never saw it.
    result = subprocess.run(
        [sys.executable, "-c", THREAD_CTRL_C, manager_type], capture_output=True, text=True, timeout=90, cwd=REPO
    )
    assert "late 0 in thread 0" in result.stdout, result.stdout + result.stderr[-2000:]


@pytest.mark.parametrize("when", ["before launch", "after launch"])
def test_an_env_whose_seed_raises_is_named_by_its_own_id(make_manager, when):
    # Seeded at launch it was named by the first env of its worker ("env 0 failed in launch"); seeded after it
    # in the base manager, its ValueError came through bare.
    fns = [partial(FaultEnv, {}), partial(FaultEnv, {"fail_seed": True}), partial(FaultEnv, {})]
    manager = make_manager(fns)
    with pytest.raises(EnvError, match="env 1 failed in seed: ValueError: injected seed failure") as raised:
        if when == "before launch":
            manager.seed(0)
            manager.launch()
        else:
            manager.launch()
            manager.seed(0)
            manager.reset()
    assert raised.value.env_id == 1

"""What is specific to the subprocess managers: processes, shared memory, contexts, async ordering."""

import gc
import os
import signal
import subprocess
import sys
import textwrap
import time
from functools import partial

import gymnasium as gym
import numpy as np
import pytest

from ding_env import (
    AsyncSubprocessEnvManager,
    BaseEnvManager,
    DingEnvWrapper,
    SyncSubprocessEnvManager,
    create_env_manager,
)
from ding_env.errors import ConfigError, EnvError
from tests.conftest import manager_cfg
from tests.env_manager.conftest import MANAGER_SETUPS
from tests.envs import (
    CountingEnv,
    DictActionEnv,
    DIEngineGymSubclassEnv,
    DIEngineStyleEnv,
    InfoEnv,
    ScriptedInfoEnv,
    cartpole_fn,
    scripted_info,
)
from tests.support import (
    arrays_of,
    assert_same,
    child_pids,
    counting_fns,
    leaked_segments,
    process_running,
    resource_tracker_pids,
    shm_segments,
    shm_segments_mapped_by,
    trajectory,
)


@pytest.mark.parametrize("context", ["fork", "spawn", "forkserver"])
def test_bit_identical_trajectories_in_every_manager_and_context(context):
    reference = trajectory("base", [cartpole_fn] * 4)
    assert_same(reference, trajectory("subprocess", [cartpole_fn] * 4, context=context))
    assert_same(reference, trajectory("async_subprocess", [cartpole_fn] * 4, context=context))


@pytest.mark.parametrize("shared_memory", [True, False])
def test_nested_observations_identical_across_managers(shared_memory):
    fns = counting_fns(3, nested=True)
    reference = trajectory("base", fns, steps=30)
    assert_same(reference, trajectory("subprocess", fns, steps=30, num_workers=2, shared_memory=shared_memory))
    assert_same(reference, trajectory("async_subprocess", fns, steps=30, num_workers=3, shared_memory=shared_memory))


def dict_action_trajectory(manager_type, **cfg):
    """Steps of 3 ``DictActionEnv``s: the dict API with a list for the Box, then step_batch with a stacked tree."""
    with create_env_manager(manager_cfg(manager_type, **cfg), [DictActionEnv] * 3) as manager:
        manager.seed(7)
        manager.launch()
        trace = []
        for t in range(24):
            ready = manager.ready_obs_batch
            if t % 2 == 0:
                timesteps = manager.step({env_id: {"push": t % 3, "scale": [0.5]} for env_id in ready.env_id.tolist()})
                trace.append(
                    [(env_id, ts.obs.tolist(), ts.reward.tolist(), ts.done) for env_id, ts in timesteps.items()]
                )
            else:
                scale = np.full((len(ready.env_id), 1), 0.25 * (t % 5), np.float32)
                trace.append(
                    arrays_of(manager.step_batch(ready.env_id, {"push": (ready.env_id + t) % 3, "scale": scale}))
                )
        return trace, manager.action_types


@pytest.mark.filterwarnings("ignore:.*Casting input x to numpy array")  # Gymnasium's note on the list
@pytest.mark.parametrize("shared_memory", [True, False])
def test_dict_action_spaces_step_identically_in_every_manager(shared_memory):
    reference, action_types = dict_action_trajectory("base")
    # Conformed to the space, not the list given; a Discrete part is a 0-d int64 array, as DI-engine's envs expect.
    assert action_types == [("ndarray", "ndarray", "float32")] * 3
    for manager_type in ("subprocess", "async_subprocess"):
        trace, types = dict_action_trajectory(manager_type, num_workers=2, shared_memory=shared_memory)
        assert types == action_types
        assert len(trace) == len(reference)
        for got, want in zip(trace, reference, strict=True):
            if isinstance(want, list):
                assert got == want
            else:
                assert_same([got], [want])


@pytest.mark.parametrize("context", ["fork", "spawn"])
@pytest.mark.parametrize("env_cls", [DIEngineStyleEnv, DIEngineGymSubclassEnv])
def test_envs_written_for_di_engine_run_in_every_manager(context, env_cls):
    """Not a BaseEnv (or a gym.Env), gym's spaces known only after a reset, 4-field timesteps: DI-engine's envs."""
    traces = []
    for manager_type in ("base", "subprocess", "async_subprocess"):
        with create_env_manager(manager_cfg(manager_type, context=context), [env_cls] * 3) as manager:
            manager.seed(5)
            manager.launch()
            assert isinstance(manager.observation_space, gym.spaces.Box)  # gym's space, converted
            trace = []
            for t in range(12):
                timesteps = manager.step({env_id: t % 3 for env_id in manager.ready_obs})
                for env_id, ts in timesteps.items():
                    assert ts.obs.dtype == np.float32 and ts.truncated == ts.done
                    trace.append((env_id, ts.obs.tolist(), ts.reward.tolist(), ts.done))
            traces.append(trace)
    assert any(done for *_, done in traces[0])
    assert traces[1] == traces[0] and traces[2] == traces[0]


def test_shared_memory_off_matches_on_for_cartpole():
    reference = trajectory("subprocess", [cartpole_fn] * 4)
    assert_same(reference, trajectory("subprocess", [cartpole_fn] * 4, shared_memory=False))
    assert_same(reference, trajectory("async_subprocess", [cartpole_fn] * 4, shared_memory=False))


def test_lambdas_ship_under_spawn():
    fns = [lambda: CountingEnv({"limit": 4}) for _ in range(2)]
    with SyncSubprocessEnvManager(fns, {"context": "spawn"}) as manager:
        manager.launch()
        assert manager.step({0: 0, 1: 0})[0].obs.shape == (2,)


def test_cpu_affinity_pins_worker_i_to_the_ith_cpu_and_changes_no_result():
    cpus = sorted(os.sched_getaffinity(0))
    with SyncSubprocessEnvManager(counting_fns(3), {"num_workers": 3, "cpu_affinity": True}) as manager:
        manager.launch()
        pinned = [os.sched_getaffinity(worker.pid) for worker in manager.workers]
        assert pinned == [{cpus[index % len(cpus)]} for index in range(3)]
    with SyncSubprocessEnvManager(counting_fns(2), {}) as manager:
        manager.launch()
        assert manager.workers and all(os.sched_getaffinity(worker.pid) == set(cpus) for worker in manager.workers)
    reference = trajectory("base", [cartpole_fn] * 4)
    assert_same(reference, trajectory("subprocess", [cartpole_fn] * 4, cpu_affinity=True))
    assert_same(reference, trajectory("async_subprocess", [cartpole_fn] * 4, cpu_affinity=True))
    with pytest.raises(ConfigError, match="'cpu_affinity': expected True or False, got 'yes'"):
        SyncSubprocessEnvManager(counting_fns(1), {"cpu_affinity": "yes"})


@pytest.mark.parametrize("manager_type", ["subprocess", "async_subprocess"])
def test_workers_host_several_envs(manager_type):
    with create_env_manager({"type": manager_type, "num_workers": 2}, counting_fns(5)) as manager:
        manager.launch()
        workers = manager.workers
        assert sorted(len(worker.env_ids) for worker in workers) == [2, 3]
        assert sorted(env_id for worker in workers for env_id in worker.env_ids) == [0, 1, 2, 3, 4]
        assert len({worker.pid for worker in workers}) == 2 and os.getpid() not in {worker.pid for worker in workers}
        assert all(process_running(worker.pid) for worker in workers)
    assert manager.workers == [] and not any(process_running(worker.pid) for worker in workers)


class CollectingEnv(CountingEnv):
    def collect_garbage(self) -> None:
        gc.collect()


class FinalizerLog:
    """Garbage (a cycle) whose finalizer writes the id of the process that ran it to ``path``."""

    def __init__(self, path) -> None:
        self.path, self.cycle = path, self

    def __del__(self) -> None:
        with open(self.path, "a") as log:
            log.write(f"{os.getpid()}\n")


@pytest.mark.parametrize("manager_type", ["subprocess", "async_subprocess"])
def test_forked_workers_never_finalize_the_managers_garbage(manager_type, tmp_path):
    log = tmp_path / "finalized"
    gc.disable()  # the garbage must still be there when the workers fork
    try:
        FinalizerLog(log)
        env_fns = [partial(CollectingEnv, {}) for _ in range(2)]
        with create_env_manager({"type": manager_type, "context": "fork"}, env_fns) as manager:
            manager.launch()
            manager.call_env_method("collect_garbage")  # in each worker
            assert not log.exists()
    finally:
        gc.enable()
    gc.collect()
    assert log.read_text().split() == [str(os.getpid())]


def test_in_process_manager_has_no_workers():
    with BaseEnvManager(counting_fns(2), {}) as manager:
        manager.launch()
        assert manager.workers == []


@pytest.mark.parametrize("manager_type", MANAGER_SETUPS)
@pytest.mark.parametrize("nested", [False, True])
def test_returned_results_belong_to_the_caller(manager_type, nested):
    fns = counting_fns(4, nested=nested, limit=10**6)
    with create_env_manager(manager_cfg(manager_type, num_workers=2), fns) as manager:
        manager.seed(0)
        manager.launch()
        ready = manager.ready_obs
        timesteps = manager.step({env_id: 0 for env_id in range(4)})
        ready_batch = manager.ready_obs_batch
        batch = manager.step_batch(ready_batch.env_id, np.zeros(4, np.int64))
        # The envs of one share alone: the first env's (a worker's) and the last env's (the caller's, with a
        # caller share), through both APIs.
        first_alone = manager.step_batch([0], np.zeros(1, np.int64))
        last_alone = manager.step_batch([3], np.zeros(1, np.int64))
        last_alone_dict = manager.step({3: 0})
        results = (
            ready,
            {env_id: (ts.obs, ts.reward) for env_id, ts in timesteps.items()},
            ready_batch.obs,
            batch,
            first_alone,
            last_alone,
            (last_alone_dict[3].obs, last_alone_dict[3].reward),
        )
        kept = snapshot(results)
        for leaf in leaves(timesteps[0].obs):
            if isinstance(leaf, np.ndarray):  # scalar leaves come back as numpy scalars, immutable
                leaf[...] = -1  # writing one env's result touches no other env's
        timesteps[0].reward[0] = -5.0
        assert_tree_equal([results[1][env_id] for env_id in (1, 2, 3)], [kept[1][env_id] for env_id in (1, 2, 3)])
        manager.step_batch(batch.env_id, np.ones(4, np.int64))  # nor do the next step and close change them
    del results[1][0], kept[1][0]
    assert_tree_equal(results, kept)


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess"])
def test_results_without_copy_on_get_are_right_until_the_next_call(manager_type):
    fns = counting_fns(3, nested=True)
    assert_same(trajectory(manager_type, fns, steps=20), trajectory(manager_type, fns, steps=20, copy_on_get=False))


@pytest.mark.parametrize("manager_type", ["subprocess", "async_subprocess"])
@pytest.mark.parametrize("nested", [False, True])
def test_without_copy_on_get_results_are_views_of_shared_memory(manager_type, nested):
    # The promise of docs/managers.md: views valid until the next call, readable after close(). The ready
    # observations are views of shared memory in both subprocess managers (that is what makes
    # copy_on_get=False cheaper), and so are the sync manager's step results.
    fns = counting_fns(4, nested=nested, limit=10**6)
    with create_env_manager(manager_cfg(manager_type, num_workers=2, copy_on_get=False), fns) as manager:
        manager.seed(0)
        manager.launch()
        ready = manager.ready_obs_batch
        before = snapshot(ready.obs)
        batch = manager.step_batch(ready.env_id, np.zeros(4, np.int64))
        stepped = snapshot(batch)
        assert_tree_equal(ready.obs, stepped.obs)  # overwritten: no env ended, the step's obs are the ready obs
        with pytest.raises(AssertionError):
            assert_tree_equal(before, stepped.obs)
        next_batch = manager.step_batch(batch.env_id, np.ones(4, np.int64))
        kept = snapshot(next_batch)
        if manager_type == "subprocess":
            assert_tree_equal(batch, kept)
    assert_tree_equal(next_batch, kept)  # reading a view after close is safe


def snapshot(tree):
    """A copy of a tree of results (dicts, tuples, lists, named tuples) whose arrays are copied."""
    if isinstance(tree, dict):
        return {key: snapshot(value) for key, value in tree.items()}
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*map(snapshot, tree))
    if isinstance(tree, (tuple, list)):
        return type(tree)(map(snapshot, tree))
    return np.copy(tree)


def assert_tree_equal(got, want):
    for got_leaf, want_leaf in zip(leaves(got), leaves(want), strict=True):
        np.testing.assert_array_equal(got_leaf, want_leaf)


def leaves(tree):
    """Every value of a tree of results, numpy scalars included."""
    if isinstance(tree, dict):
        return [leaf for value in tree.values() for leaf in leaves(value)]
    if isinstance(tree, (tuple, list)):
        return [leaf for value in tree for leaf in leaves(value)]
    return [tree]


def test_close_leaves_no_process_and_no_segment():
    before_shm, before_children = shm_segments(), child_pids()
    for manager_cls in (SyncSubprocessEnvManager, AsyncSubprocessEnvManager):
        for _ in range(3):
            manager = manager_cls(counting_fns(4), {"num_workers": 2})
            manager.launch()
            manager.step({0: 0, 3: 1})
            pids = [worker.pid for worker in manager.workers]
            segments = set().union(*map(shm_segments_mapped_by, pids))
            assert len(pids) == 2 and segments
            manager.close()
            manager.close()
            assert manager.workers == [] and not any(map(process_running, pids))
            assert not segments & shm_segments()
    assert not leaked_segments(before_shm)
    assert child_pids() <= before_children | resource_tracker_pids()


def test_obs_of_wrong_dtype_is_an_error_naming_env_and_field():
    fns = [partial(CountingEnv, {"obs_dtype": "float64"})] * 2
    with pytest.raises(EnvError, match=r"env 0 failed in reset.*reset obs must have dtype float32, got float64"):
        with SyncSubprocessEnvManager(fns, {}) as manager:
            manager.launch()


def test_async_fast_envs_are_not_held_back_and_nothing_is_lost():
    fns = [partial(CountingEnv, {"step_sleep": 0.2, "limit": 1000})] + counting_fns(3, limit=1000)
    cfg = {"num_workers": 4, "wait_num": 1, "step_wait_timeout": 0.0}
    with AsyncSubprocessEnvManager(fns, cfg) as manager:
        manager.seed(0)
        manager.launch()
        returned = {env_id: 0 for env_id in range(4)}
        sent = {env_id: 0 for env_id in range(4)}
        start = time.monotonic()
        while time.monotonic() - start < 0.5:
            ready = manager.ready_obs
            assert all(manager.env_state[env_id].name == "READY" for env_id in ready)
            for env_id in ready:
                sent[env_id] += 1
            for env_id in manager.step({env_id: 0 for env_id in ready}):
                returned[env_id] += 1
        assert returned[1] > 10 * max(returned[0], 1)
        # Drain: everything sent comes back exactly once.
        while sum(sent.values()) > sum(returned.values()):
            for env_id in manager.step({}):
                returned[env_id] += 1
        assert returned == sent


def test_async_steps_of_env_subsets_keep_every_env_trajectory():
    # Three envs per worker, stepped in changing subsets, so actions queue behind a busy worker
    # and workers step only some of their envs; each env must still follow its own trajectory,
    # infos included, while env attributes are read between the steps.
    fns = [partial(InfoEnv, {"step_sleep": 0.002 if env_id < 3 else 0.0, "limit": 1000}) for env_id in range(6)]
    sent = {env_id: [] for env_id in range(6)}
    seen = {env_id: [] for env_id in range(6)}

    def row(timestep):  # repr keeps NaN equal to itself and -0.0 apart from 0.0
        return (timestep.obs.tolist(), timestep.reward.tolist(), timestep.done, timestep.truncated, repr(timestep.info))

    def record(timesteps):
        for env_id, timestep in timesteps.items():
            seen[env_id].append(row(timestep))

    cfg = {"num_workers": 2, "wait_num": 1, "step_wait_timeout": 0.0}
    with AsyncSubprocessEnvManager(fns, cfg) as manager:
        manager.seed(7)
        manager.launch()
        t = 0
        while min(map(len, sent.values())) < 12:
            t += 1
            assert t < 5000, f"envs starved: {sent}"
            ready = manager.ready_obs_id
            chosen = [env_id for env_id in ready if (env_id + t) % 3 != 0] or ready[:1]
            actions = {env_id: (len(sent[env_id]) + env_id) % 3 for env_id in chosen}
            for env_id, action in actions.items():
                sent[env_id].append(action)
            record(manager.step(actions))
            if t % 4 == 0:
                assert all(type(length) is int for length in manager.episode_length)
        while sum(map(len, sent.values())) > sum(map(len, seen.values())):
            record(manager.step({}))
    with BaseEnvManager(fns, {}) as serial:
        serial.seed(7)
        serial.launch()
        expected = {env_id: [] for env_id in range(6)}
        for env_id, actions in sent.items():
            for action in actions:
                expected[env_id].append(row(serial.step({env_id: action})[env_id]))
    assert seen == expected


class GrumpyEnv(CountingEnv):
    """A CountingEnv whose ``current_step()`` raises."""

    def current_step(self) -> int:
        raise RuntimeError("not telling")


@pytest.mark.parametrize("manager_type", ["subprocess", "async_subprocess"])
def test_env_calls_ask_each_worker_once_and_name_the_failing_env(manager_type):
    fns = [partial(GrumpyEnv, {})] + counting_fns(3)  # on the first worker: the second one's reply waits
    with create_env_manager({"type": manager_type, "num_workers": 2}, fns) as manager:
        manager.launch()
        manager.step({env_id: 0 for env_id in range(4)})
        with pytest.raises(EnvError, match=r"env 0 failed in current_step: RuntimeError: not telling"):
            manager.current_step()
        # Every worker's reply to the failed call was read: the next calls get their own.
        lengths = manager.episode_length
        assert len(lengths) == 4 and all(3 <= length < 8 for length in lengths)
        assert manager.random_action().keys() == {0, 1, 2, 3}
        assert manager.imported("numpy") == [True] * 4


@pytest.mark.parametrize("num_workers", [1, 2])  # the slow env alone on its worker, or sharing it
def test_async_env_calls_while_a_step_with_infos_is_in_flight(num_workers):
    # A worker sends the infos of its step by pipe before it reads a request: each request must
    # get its own reply, and the in-flight step its infos, in a later step().
    fns = [partial(InfoEnv, {"limit": 1000}), partial(InfoEnv, {"limit": 1000, "step_sleep": 0.3})]
    cfg = {"num_workers": num_workers, "wait_num": 1, "step_wait_timeout": 0.0}
    with AsyncSubprocessEnvManager(fns, cfg) as manager:
        manager.seed(0)
        manager.launch()
        first = manager.step({0: 0, 1: 0})
        if num_workers == 2:  # one worker per env: the fast env comes back alone
            assert sorted(first) == [0]
            assert manager.random_action().keys() == {0}
            assert manager.current_step() == [1, 1]  # the slow step finished before the request
            assert manager.episode_length == [manager.episode_length[0], manager.episode_length[1]]
            later = manager.step({})
            assert sorted(later) == [1] and later[1].info == {"x": 1 / 3, "frame": 4, "alive": False}
        else:
            assert sorted(first) == [0, 1]
        manager.step({env_id: 0 for env_id in manager.ready_obs})
        assert manager.current_step() == [2, 2]


def test_async_wait_num_and_timeout():
    fns = [partial(CountingEnv, {"step_sleep": 0.3, "limit": 1000})] * 2 + counting_fns(2, limit=1000)
    with AsyncSubprocessEnvManager(fns, {"num_workers": 4, "wait_num": 2, "step_wait_timeout": 5.0}) as manager:
        manager.launch()
        timesteps = manager.step({0: 0, 1: 0, 2: 0, 3: 0})
        assert sorted(timesteps) == [2, 3]
        assert manager.ready_obs_id == [2, 3]
        started = time.monotonic()
        timesteps = manager.step({})
        assert sorted(timesteps) == [0, 1] and time.monotonic() - started < 1.0
    fns = [partial(CountingEnv, {"step_sleep": 1.0, "limit": 1000})] * 2 + counting_fns(2, limit=1000)
    with AsyncSubprocessEnvManager(fns, {"num_workers": 4, "wait_num": 4, "step_wait_timeout": 0.2}) as manager:
        manager.launch()
        started = time.monotonic()
        timesteps = manager.step({0: 0, 1: 0, 2: 0, 3: 0})
        # the timeout passed with two envs finished: return those instead of waiting for all four
        assert sorted(timesteps) == [2, 3] and time.monotonic() - started < 0.9  # before the slow envs (1 s)
    fns = [partial(CountingEnv, {"step_sleep": 0.3, "limit": 1000})] * 2 + counting_fns(2, limit=1000)
    with AsyncSubprocessEnvManager(fns, {"num_workers": 4, "wait_num": 4, "step_wait_timeout": None}) as manager:
        manager.launch()
        started = time.monotonic()
        timesteps = manager.step({0: 0, 1: 0, 2: 0, 3: 0})
        # no timeout: wait for all four, the slow envs too
        assert sorted(timesteps) == [0, 1, 2, 3] and time.monotonic() - started >= 0.3


def test_serial_and_subprocess_share_one_config_schema():
    assert BaseEnvManager.default_config().keys() == SyncSubprocessEnvManager.default_config().keys()
    assert SyncSubprocessEnvManager.default_config().type == "subprocess"
    assert AsyncSubprocessEnvManager.default_config().type == "async_subprocess"


@pytest.mark.parametrize("context", ["fork", "spawn", "forkserver"])
def test_workers_exit_when_the_parent_is_killed(context, tmp_path):
    # With 'forkserver' the workers' OS parent is the fork server, which outlives the manager.
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {os.getcwd()!r})
        from ding_env import SyncSubprocessEnvManager
        from tests.support import counting_fns
        manager = SyncSubprocessEnvManager(counting_fns(4), {{"num_workers": 2, "context": {context!r}}})
        manager.launch()
        print(*[worker.pid for worker in manager.workers], flush=True)
        time.sleep(60)
        """
    )
    # The killed parent cannot remove its fork server's socket folder: it is left in tmp_path, not /tmp.
    killed_env = {**os.environ, "TMPDIR": str(tmp_path)}
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=killed_env)
    try:
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        segments = set().union(*map(shm_segments_mapped_by, pids))
        assert len(pids) == 2 and segments
    finally:
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and any(map(process_running, pids)):
        time.sleep(0.05)
    assert not any(map(process_running, pids))
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline and segments & shm_segments():
        time.sleep(0.05)
    assert not segments & shm_segments()


@pytest.mark.parametrize("context", ["spawn", "forkserver"])
def test_workers_do_not_import_torch_unless_the_env_does(context):
    pytest.importorskip("torch")  # imported into this process, so a leak into workers would show
    with SyncSubprocessEnvManager(counting_fns(2), {"context": context}) as manager:
        manager.launch()
        assert manager.imported("torch") == [False, False]
        assert manager.imported("ding_env") == [True, True]


@pytest.mark.parametrize("manager_type", ["subprocess", "async_subprocess"])
def test_more_workers_than_cores_step_the_same_trajectories(manager_type):
    workers = os.cpu_count() + 1
    fns = counting_fns(workers)
    reference = trajectory("base", fns, steps=20)
    assert_same(reference, trajectory(manager_type, fns, steps=20, num_workers=workers))


def info_trace(manager_type, env_fn, **cfg):
    return trajectory(manager_type, env_fn, steps=80, record=_typed_infos, seed=7, actions=3, **cfg)


def _typed_infos(batch):
    return [(env_id, _typed(info)) for env_id, info in zip(batch.env_id.tolist(), batch.info, strict=True)]


def _typed(info):
    """Info items with their types; repr keeps NaN equal to itself, -0.0 apart from 0.0 and 1 apart from '1'."""
    return [(repr(key), type(value).__name__, repr(value)) for key, value in info.items()]


@pytest.mark.parametrize("manager_type", ["subprocess", "async_subprocess"])
@pytest.mark.parametrize("shared_memory", [True, False])
def test_infos_arrive_equal_and_with_their_types(manager_type, shared_memory):
    fns = [partial(InfoEnv, {"limit": 6})] * 4
    reference = info_trace("base", fns)
    assert any(info for step in reference for _, info in step)
    assert info_trace(manager_type, fns, num_workers=2, shared_memory=shared_memory) == reference


@pytest.mark.parametrize("manager_type", ["subprocess", "async_subprocess"])
@pytest.mark.parametrize("shared_memory", [True, False])
def test_infos_of_every_kind_arrive_exactly_as_in_the_serial_manager(manager_type, shared_memory):
    # Forms that repeat, change, vanish and come back, across episodes, differing between the envs.
    fns = [partial(ScriptedInfoEnv, {"limit": 10**6, "phase": 5 * env_id}) for env_id in range(4)]
    reference = info_trace("base", fns)
    assert info_trace(manager_type, fns, num_workers=2, shared_memory=shared_memory) == reference


def test_mujoco_infos_match_the_serial_manager():
    pytest.importorskip("mujoco")
    fns = [partial(DingEnvWrapper, cfg={"env_id": "HalfCheetah-v5", "make_kwargs": {"max_episode_steps": 12}})] * 2
    traces = {}
    for manager_type in ("base", "subprocess"):
        with create_env_manager({"type": manager_type}, fns) as manager:
            manager.seed(3)
            manager.launch()
            traces[manager_type] = [
                manager.step_batch(np.arange(2), np.full((2, 6), 0.5, np.float32)).info for _ in range(30)
            ]
    assert traces["subprocess"] == traces["base"]
    assert set(traces["base"][0][0]) == {"x_position", "x_velocity", "reward_forward", "reward_ctrl"}


@pytest.mark.parametrize("manager_type", ["subprocess", "async_subprocess"])
def test_infos_stay_true_across_a_worker_replacement(manager_type):
    # Worker 0 hosts envs 0 and 1. Killed after step 19, when env 1's info has a form the manager
    # knows; in their new lives env 0 repeats a known form at its second step, where env 1 sends no
    # info: env 1 must get none, never what its old worker left behind.
    phases = [0, 1, 5, 11]
    fns = [partial(ScriptedInfoEnv, {"limit": 10**6, "phase": phase}) for phase in phases]
    life_steps = [0] * 4  # of each env object: a replaced worker builds its envs anew
    replaced = []
    with create_env_manager(manager_cfg(manager_type, num_workers=2, step_error="abnormal"), fns) as manager:
        manager.seed(1)
        manager.launch()
        assert manager.workers[0].env_ids == [0, 1]
        for t in range(40):
            if t == 19:
                os.kill(manager.workers[0].pid, signal.SIGKILL)
            ready = manager.ready_obs_batch
            batch = manager.step_batch(ready.env_id, np.zeros(len(ready.env_id), np.int64))
            for env_id, info in zip(batch.env_id.tolist(), batch.info, strict=True):
                if "abnormal" in info:
                    life_steps[env_id] = 0
                    replaced.append(env_id)
                    continue
                life_steps[env_id] += 1
                scripted = {
                    key: value for key, value in info.items() if key not in ("truncated", "eval_episode_return")
                }
                assert _typed(scripted) == _typed(scripted_info(life_steps[env_id] + phases[env_id])), (t, env_id)
    assert sorted(replaced) == [0, 1]


@pytest.mark.parametrize("manager_type", ["subprocess", "async_subprocess"])
@pytest.mark.parametrize(("env_num", "num_workers", "in_workers"), [(8, 1, [[0, 1, 2, 3]]), (5, 2, [[0, 1], [2]])])
def test_caller_share_hosts_the_last_envs_in_this_process(manager_type, env_num, num_workers, in_workers):
    fns = [cartpole_fn] * env_num
    cfg = manager_cfg(manager_type, caller_share=True, num_workers=num_workers)
    with create_env_manager(cfg, fns) as manager:
        manager.launch()
        assert [worker.env_ids for worker in manager.workers] == in_workers
        assert os.getpid() not in [worker.pid for worker in manager.workers]
    # The caller's envs and the workers' step as one manager: the serial manager's trajectory, bit for bit.
    expected = trajectory("base", fns, steps=80)
    assert_same(trajectory(manager_type, fns, steps=80, caller_share=True, num_workers=num_workers), expected)
    assert_same(trajectory(manager_type, fns, steps=80, caller_share=True, copy_on_get=False), expected)

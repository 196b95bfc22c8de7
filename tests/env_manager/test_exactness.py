"""One observable behaviour in every manager: dict key order, who owns returned arrays, action types."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from functools import partial
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from ding_env import DingEnvWrapper, create_env_manager
from ding_env.checker import check_env
from tests.conftest import manager_cfg
from tests.envs import ActionKindEnv, BatchOfEnvs, CountingEnv, KeyOrderEnv

REPO = Path(__file__).resolve().parents[2]
# Every manager, the subprocess ones with shared memory on and off.
EVERY_MANAGER = [
    ("base", True),
    ("subprocess", True),
    ("subprocess", False),
    ("async_subprocess", True),
    ("async_subprocess", False),
    ("subprocess+caller", True),
    ("async_subprocess+caller", True),
]
# The V2 managers too, where the test uses the batched API they share.
EVERY_MANAGER_AND_V2 = [*EVERY_MANAGER, ("base_v2", True), ("subprocess_v2", True)]


def make(manager_type, shared_memory, env_fn, **cfg):
    return create_env_manager(manager_cfg(manager_type, shared_memory=shared_memory, num_workers=2, **cfg), env_fn)


@pytest.mark.parametrize(("manager_type", "shared_memory"), EVERY_MANAGER)
def test_dict_observations_come_in_the_space_key_order(manager_type, shared_memory, hosted):
    fns = hosted([partial(KeyOrderEnv, {"limit": 2})] * 3)
    with make(manager_type, shared_memory, fns) as manager:
        order = list(manager.observation_space.spaces)
        assert order == ["goal", "grid", "pos"]  # Gymnasium's Dict sorts the keys the env gave it
        manager.seed(0)
        manager.launch()
        for obs in manager.ready_obs.values():
            assert list(obs) == order
        for _ in range(3):  # episodes of 2 steps: final observations and reset ones
            timesteps = manager.step({env_id: 0 for env_id in manager.ready_obs})
            assert all(list(timestep.obs) == order for timestep in timesteps.values())
            assert all(list(obs) == order for obs in manager.ready_obs.values())
        ready = manager.ready_obs_batch
        assert list(ready.obs) == order
        assert list(manager.step_batch(ready.env_id, np.zeros(len(ready.env_id), np.int64)).obs) == order


def test_the_checker_finds_no_difference_between_processes_for_an_env_with_unsorted_keys():
    report = check_env(KeyOrderEnv, max_steps=30)
    assert [finding for finding in report.findings if finding.check == "check_subprocess"] == []


@pytest.mark.parametrize(("manager_type", "shared_memory"), EVERY_MANAGER_AND_V2)
@pytest.mark.parametrize("nested", [False, True])
def test_batched_results_belong_to_the_caller(manager_type, shared_memory, nested, hosted):
    fns = hosted([partial(CountingEnv, {"nested": nested, "limit": 3})] * 4)
    with make(manager_type, shared_memory, fns) as manager:
        manager.seed(0)
        manager.launch()
        ready = manager.ready_obs_batch
        first = manager.step_batch(ready.env_id, np.zeros(4, np.int64))
        kept = [np.copy(leaf) for leaf in leaves(ready.obs) + leaves(first.obs)]
        kept += [first.reward.copy(), first.done.copy(), first.truncated.copy()]
        for t in range(4):  # the next steps reuse every buffer there is
            again = manager.ready_obs_batch
            manager.step_batch(again.env_id, np.full(len(again.env_id), t % 3, np.int64))
        now = leaves(ready.obs) + leaves(first.obs) + [first.reward, first.done, first.truncated]
        for before, after in zip(kept, now, strict=True):
            np.testing.assert_array_equal(before, after)


def leaves(tree):
    if isinstance(tree, dict):
        return [leaf for key in tree for leaf in leaves(tree[key])]
    if isinstance(tree, tuple):
        return [leaf for item in tree for leaf in leaves(item)]
    return [tree]


@pytest.mark.parametrize(("manager_type", "shared_memory"), EVERY_MANAGER)
def test_without_copy_on_get_results_are_valid_until_the_next_call(manager_type, shared_memory, hosted):
    fns = hosted([partial(CountingEnv, {"limit": 10**6})] * 4)
    with make(manager_type, shared_memory, fns, copy_on_get=False) as manager:
        manager.seed(0)
        manager.launch()
        for t in range(3):
            ready = manager.ready_obs_batch
            batch = manager.step_batch(ready.env_id, np.zeros(4, np.int64))
            np.testing.assert_array_equal(batch.obs[:, 0], t + 1)  # each step's counter, read before the next
            np.testing.assert_array_equal(batch.reward[:, 0], t + 1)


# Plain envs only: what is read is the manager's shared memory, the same whatever hosts the envs.
@pytest.mark.parametrize("manager_type", ["subprocess", "async_subprocess"])
@pytest.mark.parametrize("shared_memory", [True, False])
def test_arrays_read_after_close_never_crash_the_process(manager_type, shared_memory):
    # In a child process: before, this read an unmapped segment and the interpreter died of SIGSEGV.
    script = textwrap.dedent(
        f"""
        from functools import partial
        import numpy as np
        from ding_env import create_env_manager
        from tests.envs import CountingEnv

        cfg = dict(type={manager_type!r}, shared_memory={shared_memory}, copy_on_get=False, step_wait_timeout=None)
        manager = create_env_manager(cfg, [partial(CountingEnv, dict(nested=True))] * 2)
        manager.launch()
        ready = manager.ready_obs_batch
        batch = manager.step_batch(ready.env_id, np.zeros(2, np.int64))
        rows = manager.ready_obs
        manager.close()
        del manager
        import gc; gc.collect()
        print(float(ready.obs["vec"].sum() + batch.obs["vec"].sum() + batch.reward.sum() + rows[0]["vec"].sum()))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    assert float(result.stdout.split()[-1]) > 0
    assert "Exception ignored" not in result.stderr


def test_a_manager_left_open_at_exit_closes_quietly_when_its_envs_close_imports(manager_type):
    # A rendering env's close imports (pygame's quit): at interpreter exit, with the modules torn down, that
    # failed the manager's close in __del__ and printed a traceback after a run that went well.
    script = textwrap.dedent(
        f"""
        from functools import partial
        from ding_env import create_env_manager
        from tests.envs import CountingEnv

        class ImportsOnClose(CountingEnv):
            def close(self):
                import importlib
                importlib.import_module("xml.dom.minidom")  # not imported before: needs sys.meta_path
                super().close()

        manager = create_env_manager(dict(type={manager_type!r}), [partial(ImportsOnClose, {{}})] * 2)
        manager.launch()
        print("left open")
        """
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.split() == ["left", "open"], result.stderr[-2000:]
    assert result.stderr == ""


ACTIONS = {
    "discrete": ([1, np.int64(2), np.array(1), np.array([2]), np.int32(0)], ("ndarray", "int64", ())),
    "box": ([[0.5, -0.5], np.array([0.1, 0.2], np.float64), np.zeros(2, np.float32)], ("ndarray", "float32", (2,))),
    "multi_discrete": ([[1, 0], np.array([2, 1]), (0, 1)], ("ndarray", "int64", (2,))),
}


@pytest.mark.parametrize(("manager_type", "shared_memory"), EVERY_MANAGER)
@pytest.mark.parametrize("space", sorted(ACTIONS))
def test_actions_reach_the_env_as_numpy_arrays_of_the_space_dtype(manager_type, shared_memory, space, hosted):
    """DI-engine's envs assert ``isinstance(action, np.ndarray)``: every form a policy sends must arrive so.

    A batch env gets them stacked: its ``last_action`` is the type, dtype and shape of one row.
    """
    given, expected = ACTIONS[space]
    fns = hosted([partial(ActionKindEnv, {"space": space, "limit": 10**6})] * 2)
    with make(manager_type, shared_memory, fns) as manager:
        manager.launch()
        for action in given:
            manager.step({0: action, 1: action})
            assert manager.last_action == [expected, expected], action
        stacked = np.stack([np.asarray(given[0])] * 2)
        manager.step_batch(np.array([0, 1]), stacked)
        assert manager.last_action == [expected, expected]


class ActionTypeGymEnv(gym.Env):
    """A Gymnasium env whose observation is the type of the action it got last, as a code."""

    observation_space = gym.spaces.Box(0, 10, (1,), np.float32)
    action_space = gym.spaces.Discrete(3)
    CODES = {int: 1, np.int64: 2, np.ndarray: 3}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        return np.full(1, self.CODES.get(type(action), 9), np.float32), float(action), False, False, {}


class StepOverride(DingEnvWrapper):
    """A wrapper subclass with a ``step`` of its own: stepped through it, as DI-engine's envs are."""

    def step(self, action):
        assert type(action) is np.ndarray and action.shape == () and action.dtype == np.int64, repr(action)
        return super().step(action)


@pytest.mark.parametrize(("manager_type", "shared_memory"), EVERY_MANAGER_AND_V2)
@pytest.mark.parametrize("wrapper", [DingEnvWrapper, StepOverride])
def test_a_wrapped_gymnasium_env_gets_the_space_scalar_and_an_env_step_a_0d_array(manager_type, shared_memory, wrapper):
    """A Discrete action reaches a Gymnasium env as the space's numpy scalar, whatever form the host hands the wrapper.

    A subclass that steps through its own ``step`` still gets the 0-d int64 arrays of the contract.
    """
    fns = [lambda: wrapper(ActionTypeGymEnv())] * 3
    with make(manager_type, shared_memory, fns) as manager:
        manager.launch()
        for actions in (np.array([0, 1, 2]), np.array([2, 2, 1], np.int32)):
            batch = manager.step_batch(np.arange(3), actions)
            np.testing.assert_array_equal(batch.obs[:, 0], [2, 2, 2])  # np.int64, Discrete's dtype
            np.testing.assert_array_equal(batch.reward[:, 0], actions)


class Keeper(ActionKindEnv):
    """Keeps the action it got last."""

    def step(self, action):
        self.kept = action
        return super().step(action)


class StackKeeper(BatchOfEnvs):
    """Keeps the stacked actions it got last."""

    def _step(self, actions, env_ids):
        self.kept = actions
        return super()._step(actions, env_ids)

    @property
    def kept_is_its_own(self):
        """Whether the kept actions own their memory (not a view of the manager's or the caller's arrays)."""
        return bool(self.kept.flags.owndata)


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "subprocess+caller"])
def test_a_batch_env_gets_stacked_actions_of_its_own_in_every_manager(manager_type):
    """In a worker the stacked actions are rows of shared memory the parent writes again: never the env's."""
    env_fns = [partial(Keeper, {"space": "box", "limit": 10**6})] * 2
    batch_fn = partial(StackKeeper, dict(env_fns=env_fns))
    with create_env_manager(manager_cfg(manager_type), [batch_fn, batch_fn]) as manager:
        manager.launch()
        manager.step_batch(np.arange(4), np.zeros((4, 2), np.float32))
        assert manager.kept_is_its_own == [True] * 4


@pytest.mark.parametrize("batch", [False, True], ids=["envs", "batch_env"])
def test_the_actions_an_env_gets_are_its_own(batch):
    env_fns = [partial(Keeper, {"space": "box", "limit": 10**6})] * 2
    actions = np.zeros((2, 2), np.float32)
    with make("base", True, [partial(StackKeeper, dict(env_fns=env_fns))] if batch else env_fns) as manager:
        manager.launch()
        manager.step_batch(np.array([0, 1]), actions)
        actions[:] = 0.75  # the caller reuses its buffer
        assert [float(kept.sum()) for kept in manager.kept] == [0.0, 0.0]

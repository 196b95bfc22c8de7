"""EnvSupervisor: DI-engine's supervisor interface over ding_env's managers, with process and thread children."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

pytest.importorskip("treetensor", reason="EnvSupervisor returns DI-treetensor timesteps (the treetensor extra)")

import treetensor.numpy as tnp  # noqa: E402 - after the extra's check

from ding_env import EnvSupervisor  # noqa: E402
from ding_env.env_manager.env_supervisor import ChildType, EnvState  # noqa: E402
from ding_env.errors import ConfigError, EnvError, EnvStateError  # noqa: E402
from tests.envs import CountingEnv, FaultEnv  # noqa: E402

CHILD_TYPES = [ChildType.PROCESS, ChildType.THREAD]


def supervisor(type_, env_num=3, env_cls=CountingEnv, env_cfg=None, **cfg):
    fns = [partial(env_cls, dict(limit=10**6, **(env_cfg or {})))] * env_num
    return EnvSupervisor(type_=type_, env_fn=fns, **cfg)


@pytest.mark.parametrize("type_", CHILD_TYPES)
def test_blocking_episodes_until_done(type_):
    env = supervisor(type_, episode_num=2, auto_reset=False)
    try:
        env.seed(314)
        assert env.closed and set(env.env_states.values()) == {EnvState.VOID}
        env.launch()
        assert env.ready_obs.shape == (3, 2) and env.ready_obs_id == [0, 1, 2]
        while not env.done:
            timesteps = env.step({env_id: np.int64(1) for env_id in env.ready_obs_id})
            assert all(isinstance(timestep, tnp.ndarray) for timestep in timesteps)
        assert all(env.env_state_done(env_id) for env_id in range(3))
        env.reset()
        assert set(env.env_states.values()) == {EnvState.RUN}
    finally:
        env.close()
    assert env.closed and set(env.env_states.values()) == {EnvState.VOID}
    with pytest.raises(AssertionError, match="closed"):
        env.step([np.int64(0)] * 3)


@pytest.mark.parametrize("type_", CHILD_TYPES)
def test_non_blocking_calls_queue_one_payload_per_env(type_):
    env = supervisor(type_, episode_num=1, auto_reset=False)
    with pytest.raises(AssertionError, match="closed"):
        env.reset()
    env.launch(block=False)
    try:
        steps = 0
        while not env.done:
            payload = env.recv()
            if payload.method == "reset":
                assert payload.data.shape == (2,)
            else:
                assert payload.method == "step" and isinstance(payload.data, tnp.ndarray)
                assert int(payload.data.env_id) == payload.proc_id
                steps += 1
            if env.env_states[payload.proc_id] == EnvState.RUN:
                env.step({payload.proc_id: np.int64(0)}, block=False)
        # done is the envs' state: the last steps' payloads may still wait to be received.
        while True:
            try:
                steps += env.recv().method == "step"
            except EnvStateError:
                break
        assert steps >= 3 * 3  # every CountingEnv episode lasts 3 to 7 steps
    finally:
        env.close()


@pytest.mark.parametrize("type_", CHILD_TYPES)
def test_auto_reset_and_same_seeds_give_same_trajectories(type_):
    runs = []
    for _ in range(2):
        env = supervisor(type_, auto_reset=True)
        env.seed(7)
        env.launch()
        timesteps = [env.step([np.int64(t % 3)] * 3) for t in range(12)]
        assert set(env.env_states.values()) == {EnvState.RUN} and len(env.ready_obs) == 3
        env.close()
        done = np.array([[bool(timestep.done) for timestep in row] for row in timesteps])
        assert done.shape == (12, 3) and done.any()
        runs.append(np.stack([np.stack([timestep.obs for timestep in row]) for row in timesteps]))
    np.testing.assert_array_equal(runs[0], runs[1])


@pytest.mark.parametrize("type_", CHILD_TYPES)
def test_failing_step_is_an_abnormal_timestep_and_the_env_is_reset(type_):
    env = supervisor(type_, env_cls=FaultEnv, env_cfg={"raise_every": 2}, retry_type="renew")
    env.launch()
    try:
        env.step([np.int64(0)] * 3)
        timesteps = env.step([np.int64(0)] * 3)
        assert all(timestep.info.abnormal for timestep in timesteps) and all(timestep.done for timestep in timesteps)
        assert set(env.env_states.values()) == {EnvState.RUN}  # renewed and reset
        assert env.current_step() == [0, 0, 0]
    finally:
        env.close()


@pytest.mark.parametrize("type_", CHILD_TYPES)
def test_failed_reset_closes_and_launch_works_again(type_):
    env = supervisor(type_, max_try=2)
    with pytest.raises(EnvError, match="reset"):
        env.launch({env_id: {"no_such_kwarg": 1} for env_id in range(3)})
    assert env.closed
    env.launch()
    try:
        assert not env.closed and env.ready_obs_id == [0, 1, 2]
        with pytest.raises(EnvError, match="reset"):
            env.reset({0: {"no_such_kwarg": 1}})
        assert env.closed
    finally:
        env.close()


def test_spaces_are_the_envs_own_and_config_is_checked():
    env = supervisor("thread")
    assert env.action_space == CountingEnv().action_space and env.env_num == 3
    with pytest.raises(ConfigError, match=r"unknown keys \['no_such_key'\]"):
        supervisor(ChildType.THREAD, no_such_key=1)
    with pytest.raises(ConfigError, match="expected ChildType.PROCESS or ChildType.THREAD, got 'fiber'"):
        supervisor("fiber")


@pytest.mark.parametrize("type_", CHILD_TYPES)
def test_a_batch_env_counts_one_env_per_sub_env(type_):
    from tests.envs import CountingBatchEnv

    env = EnvSupervisor(type_=type_, env_fn=[partial(CountingBatchEnv, dict(num_envs=2)), partial(CountingEnv, {})])
    try:
        assert env.env_num == 3 and env.env_states == dict.fromkeys(range(3), EnvState.VOID)
        env.seed(7)  # one seed per env id
        env.launch()
        assert env.ready_obs_id == [0, 1, 2]
        assert [int(timestep.env_id) for timestep in env.step([np.int64(1)] * 3)] == [0, 1, 2]
    finally:
        env.close()

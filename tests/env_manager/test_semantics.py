"""The semantics every manager shares (run once per manager type)."""

from functools import partial

import numpy as np
import pytest

from ding_env import BaseEnvTimestep, DingEnvWrapper, create_env_manager
from ding_env.errors import ClosedEnvError, ConfigError, EnvError, EnvStateError
from tests.envs import CloseTracker, ShapedCartPole, TenthsEnv, TextActionEnv, cartpole_fn, nested_action_env
from tests.support import counting_fns


def rollout(manager, steps, action_of=lambda env_id, t: (env_id + t) % 3):
    """Step all ready envs ``steps`` times; return {env_id: [(obs, reward, done, truncated), ...]}."""
    trace = {}
    for t in range(steps):
        ready = manager.ready_obs
        if not ready:
            break
        timesteps = manager.step({env_id: action_of(env_id, t) for env_id in ready})
        for env_id, ts in timesteps.items():
            trace.setdefault(env_id, []).append((ts.obs.copy(), ts.reward.copy(), ts.done, ts.truncated))
    return trace


def test_launch_ready_step(make_manager, hosted):
    manager = make_manager(hosted(counting_fns(3)))
    manager.seed(0)
    manager.launch()
    ready = manager.ready_obs
    assert sorted(ready) == [0, 1, 2] and manager.ready_obs_id == [0, 1, 2]
    assert all(obs.dtype == np.float32 and obs.shape == (2,) for obs in ready.values())
    timesteps = manager.step({0: 1, 2: 0})
    assert sorted(timesteps) == [0, 2]
    assert isinstance(timesteps[0], BaseEnvTimestep)
    assert timesteps[0].reward.shape == (1,) and timesteps[0].reward[0] == 2.0
    assert type(timesteps[0].done) is bool


def test_launch_with_reset_params_for_some_envs_resets_every_env(make_manager):
    # The envs that launch's reset_param left out were left needing a reset ("env 2 is not ready for an action").
    manager = make_manager(counting_fns(3))
    manager.launch({0: {"offset": 10.0}})
    assert manager.ready_obs_id == [0, 1, 2]
    assert manager.ready_obs[0][0] == 10.0 and manager.ready_obs[2][0] == 0.0
    manager.step({env_id: 0 for env_id in range(3)})


def test_the_managers_take_the_random_actions_of_a_wrapped_env_with_nested_discrete_parts(make_manager):
    # A Tuple's Discrete parts came as (1,) arrays (a Dict's as 0-d ones), which every manager refused.
    manager = make_manager([nested_action_env] * 2)
    manager.seed(0)
    manager.launch()
    for _ in range(3):
        assert sorted(manager.step(manager.random_action())) == [0, 1]


def test_random_actions_vary_from_call_to_call_and_replay_with_the_seed(make_manager):
    # CountingEnv's action space is built at every access: each call re-seeded it and drew the same actions.
    manager = make_manager(counting_fns(2))
    manager.seed(0)
    manager.launch()
    draws = [manager.random_action() for _ in range(12)]
    assert {int(draw[env_id]) for draw in draws for env_id in (0, 1)} == {0, 1, 2}
    manager.seed(0)
    assert [manager.random_action() for _ in range(12)] == draws


def frozen_lake() -> DingEnvWrapper:
    return DingEnvWrapper(cfg={"env_id": "FrozenLake-v1"})


def test_an_observation_of_one_value_is_a_0d_array_as_the_env_returns_it(make_manager):
    # The managers gave numpy scalars (np.int64) for a Discrete observation, which torch.from_numpy refuses.
    env = frozen_lake()
    assert type(env.reset()) is np.ndarray
    manager = make_manager([frozen_lake] * 2)
    manager.seed(0)
    manager.launch()
    timesteps = manager.step({0: 1, 1: 2})
    observations = [*manager.ready_obs.values(), *(timestep.obs for timestep in timesteps.values())]
    assert all(type(obs) is np.ndarray and obs.shape == () for obs in observations)


def test_stacked_dict_actions_with_a_text_part_reach_the_envs_as_strings():
    # Only the base manager hosts actions of no array form (the others refuse them at launch, naming the space).
    # A change that gave every 1-d leaf's rows as 0-d arrays made the Text part's rows arrays, which Text refuses.
    with create_env_manager({"type": "base"}, [TextActionEnv] * 2) as manager:
        manager.launch()
        batch = manager.step_batch(np.array([0, 1]), {"cmd": ["ab", "cd"], "push": np.array([0, 2])})
        assert batch.env_id.tolist() == [0, 1]


def test_auto_reset_returns_final_obs_then_reset_obs(make_manager, hosted):
    manager = make_manager(hosted(counting_fns(1)))
    manager.seed(1)
    manager.launch()
    while True:
        timestep = manager.step({0: 0})[0]
        if timestep.done:
            break
    assert timestep.obs[0] >= 3  # the final observation (step counter), not the reset one
    assert timestep.terminated and timestep.info["eval_episode_return"] > 0
    assert manager.ready_obs[0][0] == 0.0  # next ready obs is the reset obs


def test_episode_num_finishes_envs(make_manager, hosted):
    manager = make_manager(hosted(counting_fns(2)), episode_num=2)
    manager.seed(0)
    manager.launch()
    assert manager.active_env == [0, 1]
    episodes = {0: 0, 1: 0}
    while not manager.done:
        for env_id, ts in manager.step({env_id: 0 for env_id in manager.ready_obs}).items():
            episodes[env_id] += ts.done
        # an env leaves active_env (DI-engine's name) once its episodes are run
        assert manager.active_env == [env_id for env_id in (0, 1) if episodes[env_id] < 2]
    assert episodes == {0: 2, 1: 2}
    assert manager.ready_obs == {}
    ready = manager.ready_obs_batch  # no env ready: arrays of no rows, as a step of no env returns
    assert ready.env_id.shape == (0,) and ready.obs.shape == (0, 2) and ready.obs.dtype == np.float32
    with pytest.raises(ValueError, match=r"env 0 is not ready .*FINISHED.*ran episode_num episodes: reset\(\) starts"):
        manager.step({0: 0})
    manager.reset()  # as the error says
    assert manager.active_env == [0, 1] and sorted(manager.step({0: 0, 1: 0})) == [0, 1]


# Plain envs only: reset params for a batch env's ids are refused (test_batch_hosting has the batch case).
def test_without_auto_reset_done_envs_wait_for_reset(make_manager):
    manager = make_manager(counting_fns(2), auto_reset=False)
    manager.seed(0)
    manager.launch()
    while 0 in manager.ready_obs:
        manager.step({env_id: 0 for env_id in manager.ready_obs})
    with pytest.raises(ValueError, match=r"env 0 is not ready .*NEEDS_RESET.*reset\(\) or reset\(\{env_id: \{\}\}\)"):
        manager.step({0: 0})
    with pytest.raises(ValueError, match="env 0 is not ready"):
        manager.step({0: 0, 1: 0})  # every env, in order
    manager.reset({0: {"offset": 100.0}})
    assert manager.ready_obs[0][0] == 100.0


def test_same_seed_same_trajectories_and_envs_differ(make_manager, hosted):
    traces = []
    for _ in range(2):
        manager = make_manager(hosted(counting_fns(3)))
        manager.seed(5)
        manager.launch()
        traces.append(rollout(manager, 30))
    for env_id in range(3):
        for a, b in zip(traces[0][env_id], traces[1][env_id], strict=True):
            np.testing.assert_array_equal(a[0], b[0])
            np.testing.assert_array_equal(a[1], b[1])
            assert a[2:] == b[2:]
    assert not np.array_equal(traces[0][0][0][0], traces[0][1][0][0])


def test_seed_forms(make_manager, hosted):
    starts = {}
    for form in (7, [7, 8, 9], {0: 7, 1: 8, 2: 9}):
        manager = make_manager(hosted(counting_fns(3)))
        manager.seed(form, dynamic_seed=False)
        manager.launch()
        starts[str(form)] = [obs.copy() for _, obs in sorted(manager.ready_obs.items())]
    first, *others = starts.values()
    for other in others:
        for a, b in zip(first, other, strict=True):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="got 2 seeds for 3 envs"):
        make_manager(hosted(counting_fns(3))).seed([1, 2])


def test_static_seed_replays_episodes(make_manager, hosted):
    manager = make_manager(hosted(counting_fns(1)))
    manager.seed(3, dynamic_seed=False)
    manager.launch()
    trace = rollout(manager, 40, action_of=lambda env_id, t: 0)[0]
    ends = [i for i, step in enumerate(trace) if step[2]]
    first = [s[0] for s in trace[: ends[0] + 1]]
    second = [s[0] for s in trace[ends[0] + 1 : ends[1] + 1]]
    assert len(first) == len(second)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)


def test_batched_api_matches_dict_api(make_manager, hosted):
    dict_manager = make_manager(hosted(counting_fns(4)))
    batch_manager = make_manager(hosted(counting_fns(4)))
    for manager in (dict_manager, batch_manager):
        manager.seed(11)
        manager.launch()
    for t in range(25):
        ready = batch_manager.ready_obs_batch
        expected = dict_manager.ready_obs
        assert ready.env_id.tolist() == sorted(expected)
        for row, env_id in enumerate(ready.env_id):
            np.testing.assert_array_equal(ready.obs[row], expected[int(env_id)])
        actions = (ready.env_id + t) % 3
        batch = batch_manager.step_batch(ready.env_id, actions)
        timesteps = dict_manager.step({int(e): int(a) for e, a in zip(ready.env_id, actions, strict=True)})
        assert batch.reward.shape == (len(ready.env_id), 1) and batch.done.dtype == bool
        for row, env_id in enumerate(batch.env_id):
            ts = timesteps[int(env_id)]
            np.testing.assert_array_equal(batch.obs[row], ts.obs)
            assert batch.reward[row][0] == ts.reward[0] and batch.done[row] == ts.done
            assert batch.truncated[row] == ts.truncated and batch.info[row] == ts.info


@pytest.mark.parametrize("order", [[3, 2, 1, 0], [1, 0, 3, 2], [2, 0]], ids=["reversed", "swapped pairs", "some"])
def test_envs_stepped_out_of_order_give_each_env_its_own_action_and_results(make_manager, hosted, order):
    """Each env gets its own action and its own results, whatever the order of the ids asked for.

    Results are matched by env id: the sync managers keep the order asked for, the async ones give id order.
    """
    in_order = make_manager(hosted(counting_fns(4, limit=3)))
    shuffled = make_manager(hosted(counting_fns(4, limit=3)))
    for manager in (in_order, shuffled):
        manager.seed(5)
        manager.launch()
    ids = np.array(order)
    for t in range(8):  # through the episodes' ends: auto-reset, final observations and done infos
        actions = (ids * 2 + t) % 3
        got = shuffled.step_batch(ids, actions)
        rank = np.argsort(ids)
        expected = in_order.step_batch(ids[rank], actions[rank])
        assert sorted(got.env_id.tolist()) == sorted(order)
        for row, env_id in enumerate(got.env_id.tolist()):
            want = int(np.flatnonzero(expected.env_id == env_id)[0])
            np.testing.assert_array_equal(got.obs[row], expected.obs[want])
            assert got.reward[row][0] == expected.reward[want][0] and got.done[row] == expected.done[want]
            assert got.truncated[row] == expected.truncated[want] and got.info[row] == expected.info[want]
        np.testing.assert_array_equal(shuffled.ready_obs_batch.obs, in_order.ready_obs_batch.obs)
    timesteps = shuffled.step({env_id: env_id % 3 for env_id in reversed(order)})
    expected = in_order.step({env_id: env_id % 3 for env_id in sorted(order)})
    for env_id in order:
        np.testing.assert_array_equal(timesteps[env_id].obs, expected[env_id].obs)
        assert timesteps[env_id].reward[0] == expected[env_id].reward[0]


def test_truncation_reaches_the_batch(make_manager, hosted):
    manager = make_manager(hosted(counting_fns(2, limit=2)))
    manager.seed(0)
    manager.launch()
    manager.step_batch([0, 1], np.zeros(2, dtype=np.int64))
    batch = manager.step_batch([0, 1], np.zeros(2, dtype=np.int64))
    assert batch.done.tolist() == [True, True] and batch.truncated.tolist() == [True, True]


def test_nested_observations(make_manager, hosted):
    manager = make_manager(hosted(counting_fns(2, nested=True)))
    manager.seed(0)
    manager.launch()
    ready = manager.ready_obs_batch
    assert ready.obs["vec"].shape == (2, 2) and ready.obs["count"].shape == (2,)
    assert ready.obs["pair"][1].shape == (2, 2)
    timesteps = manager.step({0: 0, 1: 0})
    assert timesteps[0].obs["count"] == 1 and timesteps[1].obs["pair"][0].dtype == np.float32


def test_cartpole_through_manager(make_manager, hosted):
    manager = make_manager(hosted([cartpole_fn] * 2))
    manager.seed(0)
    manager.launch()
    assert manager.observation_space.shape == (4,) and manager.action_space.n == 2
    trace = rollout(manager, 50, action_of=lambda env_id, t: t % 2)
    assert len(trace[0]) == 50


def test_bad_env_ids(make_manager, hosted):
    manager = make_manager(hosted(counting_fns(2)))
    manager.launch()
    with pytest.raises(ValueError, match="out of range"):
        manager.step({5: 0})
    with pytest.raises(ValueError, match="env ids are ints"):
        manager.step({"0": 0})
    for keys in ((False, True), (0.0, 1.0)):  # equal to the ids 0 and 1, but not env ids
        with pytest.raises(ValueError, match="env ids are ints"):
            manager.step(dict.fromkeys(keys, 0))
    with pytest.raises(ValueError, match="duplicates"):
        manager.step_batch([0, 0], np.zeros(2, dtype=np.int64))


def test_state_errors(make_manager, hosted):
    manager = make_manager(hosted(counting_fns(2)))
    with pytest.raises(EnvStateError, match="not launched"):
        manager.step({0: 0})
    with pytest.raises(EnvStateError, match="not launched"):
        manager.ready_obs  # noqa: B018
    manager.launch()
    with pytest.raises(EnvStateError, match="already launched"):
        manager.launch()
    manager.close()
    manager.close()
    for call in (lambda: manager.step({0: 0}), lambda: manager.ready_obs, lambda: manager.reset(), manager.launch):
        with pytest.raises(ClosedEnvError):
            call()


def test_closed_until_launch_and_after_close_as_di_engine_code_expects(make_manager, hosted):
    manager = make_manager(hosted(counting_fns(2)))
    assert manager.closed  # DI-engine's pipelines run `if manager.closed: manager.launch()`
    manager.launch()
    assert not manager.closed
    manager.close()
    assert manager.closed


def test_context_manager_closes(manager_type, hosted):
    from ding_env import create_env_manager

    with create_env_manager({"type": manager_type}, hosted(counting_fns(2))) as manager:
        manager.launch()
    assert manager.closed


def test_reset_retry_then_error(make_manager, hosted):
    manager = make_manager(hosted(counting_fns(1, fail_reset_times=2)), max_retry=3, retry_waiting_time=0.0)
    manager.launch()
    assert 0 in manager.ready_obs
    failing = make_manager(hosted(counting_fns(1, fail_reset_times=5)), max_retry=2, retry_waiting_time=0.0)
    # A batch env's error names it and its env ids before the sub-env's exception.
    with pytest.raises(
        EnvError, match=r"env 0 failed in reset: (batch env .*\): )?RuntimeError: reset failure 2"
    ) as info:
        failing.launch()
    assert isinstance(info.value, RuntimeError) and "Traceback" in info.value.remote_traceback


def test_renew_builds_a_fresh_env(make_manager, hosted):
    # Each fresh env fails its first reset; 'reset' retries the same env, 'renew' a new one.
    manager = make_manager(
        hosted(counting_fns(1, fail_reset_times=1)), max_retry=2, retry_type="renew", retry_waiting_time=0
    )
    with pytest.raises(EnvError, match="reset failure 1"):
        manager.launch()
    manager = make_manager(
        hosted(counting_fns(1, fail_reset_times=1)), max_retry=2, retry_type="reset", retry_waiting_time=0
    )
    manager.launch()


# Plain envs only: a failing batch env fails for every id it hosts (test_batch_hosting has the batch case).
def test_step_error_raise_keeps_other_results(make_manager):
    manager = make_manager(counting_fns(2, fail_step_at=1))
    manager.seed(0)
    manager.launch()
    manager.step({0: 0})
    with pytest.raises(EnvError, match="env 0 failed in step: ValueError: step failure") as info:
        manager.step({0: 0, 1: 0})
    assert set(info.value.results) == {0, 1} and info.value.results[1].obs[0] == 1.0
    assert manager.ready_obs_id == [1]
    manager.reset({0: {}})
    assert manager.ready_obs_id == [0, 1]


def test_step_error_abnormal_returns_done_and_renews(make_manager, hosted):
    manager = make_manager(hosted(counting_fns(1, fail_step_at=0)), step_error="abnormal")
    manager.launch()
    timestep = manager.step({0: 0})[0]
    assert timestep.done and timestep.info["abnormal"] and "step failure" in timestep.info["error"]
    assert manager.ready_obs_id == [0]


# Plain envs only: a sub-env answers with its batch env's attributes (test_batch_hosting has the batch case).
def test_attribute_broadcast(make_manager):
    manager = make_manager(counting_fns(2))
    manager.launch()
    manager.step({0: 0})
    assert manager.episode_length == [manager.episode_length[0], manager.episode_length[1]]
    assert all(3 <= length < 8 for length in manager.episode_length)
    assert manager.current_step() == [1, 0]
    with pytest.raises(AttributeError):
        manager._private  # noqa: B018
    assert manager.random_action().keys() == {0, 1}
    # An attribute no env has is an AttributeError in every manager, so hasattr and getattr defaults work.
    with pytest.raises(AttributeError, match=r"has no attribute 'env_handle', and envs \[0, 1\] have none"):
        manager.env_handle  # noqa: B018
    assert not hasattr(manager, "env_handle") and getattr(manager, "env_handle", None) is None
    assert manager.current_step() == [1, 0]  # the manager is still usable


def test_config_validation(manager_type):
    from ding_env import create_env_manager

    with pytest.raises(ConfigError, match=r"unknown key 'auto_rest'.*did you mean 'auto_reset'"):
        create_env_manager({"type": manager_type, "auto_rest": True}, counting_fns(1))
    with pytest.raises(ConfigError, match="wait_num': expected at most env_num=2, got 3"):
        create_env_manager({"type": manager_type, "wait_num": 3}, counting_fns(2))
    with pytest.raises(ConfigError, match="step_timeout': expected None or seconds > 0, got -1"):
        create_env_manager({"type": manager_type, "step_timeout": -1}, counting_fns(2))
    with pytest.raises(ConfigError, match="context"):
        create_env_manager({"type": manager_type, "context": "thread"}, counting_fns(2))
    with pytest.raises(ConfigError, match="'type': expected one of"):
        create_env_manager({"type": "threads"}, counting_fns(2))
    with pytest.raises(ConfigError, match="'env_pool' makes its envs from its config"):
        create_env_manager({"type": "env_pool", "env_id": "CartPole-v1", "env_num": 2}, counting_fns(2))


# A manager section as DI-engine's compile_config writes it (formatted_total_config.py).
DI_ENGINE_MANAGER_CFG = dict(
    episode_num=float("inf"),
    max_retry=5,
    step_timeout=None,
    auto_reset=True,
    reset_timeout=None,
    retry_type="reset",
    retry_waiting_time=0.1,
    shared_memory=True,
    copy_on_get=True,
    context="fork",
    wait_num=float("inf"),
    step_wait_timeout=None,
    connect_timeout=60,
    reset_inplace=True,
    cfg_type="SyncSubprocessEnvManagerDict",
    import_names=["ding.envs.env_manager.subprocess_env_manager"],
)


def test_di_engine_manager_configs_load_as_they_are(manager_type, hosted):
    from ding_env import create_env_manager

    cfg = {**DI_ENGINE_MANAGER_CFG, "type": manager_type}
    with create_env_manager(cfg, hosted(counting_fns(3))) as manager:
        manager.seed(0)
        manager.launch()
        assert manager.config.wait_num is None and "reset_inplace" not in manager.config
        finals = []
        for _ in range(12):
            timesteps = manager.step({env_id: 0 for env_id in manager.ready_obs})
            assert sorted(timesteps) == [0, 1, 2]  # wait_num=inf, no step_wait_timeout: every env
            finals += [t.obs[0] for t in timesteps.values() if t.done]
        # reset_inplace=True keeps the true final observation, whose step count is the episode's length
        # (3 to 7); DI-engine returned the reset observation (step count 0) in its place.
        assert finals and all(3 <= step <= 7 for step in finals)
    with pytest.raises(ConfigError, match="'reset_inplace': expected False when auto_reset is False, got True"):
        create_env_manager({"type": manager_type, "reset_inplace": True, "auto_reset": False}, counting_fns(1))
    with pytest.raises(ConfigError, match="'reset_inplace': expected True or False, got 'yes'"):
        create_env_manager({"type": manager_type, "reset_inplace": "yes"}, counting_fns(1))
    with pytest.raises(ConfigError, match="'step_wait_timeout': expected None or seconds >= 0, got -1"):
        create_env_manager({"type": manager_type, "step_wait_timeout": -1}, counting_fns(1))


def test_a_subclass_step_reaches_the_manager(make_manager, hosted):
    manager = make_manager(hosted([ShapedCartPole] * 2))
    manager.seed(0)
    manager.launch()
    batch = manager.step_batch([0, 1], np.zeros(2, dtype=np.int64))
    assert batch.reward.tolist() == [[10.0], [10.0]]
    assert batch.info == [{"shaped": True}, {"shaped": True}]


@pytest.mark.parametrize("reward_as_array", [False, True])
def test_rewards_arrive_in_the_reward_space_dtype(make_manager, hosted, reward_as_array):
    """Rewards not exact in float32, given as floats or float64 arrays, round the same in every manager."""
    manager = make_manager(hosted([partial(TenthsEnv, {"reward_as_array": reward_as_array})] * 2))
    manager.seed(0)
    manager.launch()
    for t in range(12):
        actions = np.array([t % 3, 1])
        batch = manager.step_batch([0, 1], actions)
        assert batch.reward.dtype == np.float32 and batch.reward.shape == (2, 1)
        # The env's reward is (action + step) / 10 + 0.01 in float64; the step is obs[0].
        steps = batch.obs[:, 0].astype(float)
        expected = [[np.float32((float(a) + step) / 10 + 0.01)] for a, step in zip(actions, steps, strict=True)]
        assert batch.reward.tolist() == expected


def test_subsets_and_all_envs_step_exactly_the_envs_named(make_manager, hosted):
    """Alternating subsets and every env: only the named envs take a step each time."""
    manager = make_manager(hosted(counting_fns(4)))
    manager.seed(0)
    manager.launch()
    steps = np.zeros(4, dtype=int)
    # Episodes last at least 3 steps, so each returned obs counts its env's steps so far.
    for env_ids in ([0, 1, 2, 3], [1, 3], [0, 2], [0, 1, 2, 3]):
        batch = manager.step_batch(env_ids, np.zeros(len(env_ids), dtype=np.int64))
        steps[env_ids] += 1
        assert batch.env_id.tolist() == env_ids
        assert batch.obs[:, 0].tolist() == steps[env_ids].tolist()


def test_an_empty_step_steps_no_env_and_returns_nothing(make_manager, hosted):
    """What a loop over the ready envs sends when none is ready: {} back, and no env takes a step."""
    manager = make_manager(hosted(counting_fns(3)))
    manager.seed(0)
    manager.launch()
    assert manager.step({}) == {}
    empty = manager.step_batch([], np.zeros(0, dtype=np.int64))
    assert empty.env_id.tolist() == [] and empty.obs.shape == (0, 2) and empty.done.shape == (0,)
    assert manager.ready_obs_id == [0, 1, 2]
    batch = manager.step_batch([0, 1, 2], np.zeros(3, dtype=np.int64))
    assert batch.obs[:, 0].tolist() == [1, 1, 1]  # the first step each env took


@pytest.mark.parametrize("env_cls", ["DictActionEnv", "TupleActionEnv"])
def test_an_empty_step_takes_empty_stacked_dict_and_tuple_actions(make_manager, env_cls):
    """A step of no env ids with the space's stacked form, every part of no rows (what a vector adapter sends)."""
    from tests import envs

    manager = make_manager([partial(getattr(envs, env_cls), {})] * 2)
    manager.seed(0)
    manager.launch()
    empty = manager.action_space.sample()
    empty = (
        {key: np.zeros((0, *np.shape(value)), np.asarray(value).dtype) for key, value in empty.items()}
        if isinstance(empty, dict)
        else tuple(np.zeros((0, *np.shape(value)), np.asarray(value).dtype) for value in empty)
    )
    assert manager.step_batch([], empty).env_id.tolist() == []
    assert manager.ready_obs_id == [0, 1]


# Plain envs only: render and the other per-env calls reach a sub-env's batch env, not the sub-env.
def test_di_engine_per_env_calls(make_manager):
    from tests.envs import FigureEnv

    manager = make_manager([FigureEnv] * 2)
    manager.seed(0)
    manager.launch()
    assert {env_id: frame.tolist()[0][0] for env_id, frame in manager.ready_imgs.items()} == {0: [0] * 3, 1: [0] * 3}
    manager.step({0: 0, 1: 0})
    assert manager.ready_imgs[1].shape == (2, 3, 3) and manager.ready_imgs[1][0, 0, 0] == 1
    assert manager.reward_shaping(1, [{"reward": 1.5}]) == [{"reward": 3.0}]
    manager.enable_save_figure(0, "figures")
    assert manager.figure_path == ["figures", None]
    with pytest.raises(ValueError, match="7"):
        manager.reward_shaping(7, [])


def test_an_observation_of_another_dtype_is_an_error_naming_the_env_and_field(make_manager, hosted):
    """Never a silent cast: a float64 observation for a float32 space is refused, naming the env and the field."""
    manager = make_manager(hosted(counting_fns(2, obs_dtype="float64")))
    with pytest.raises(EnvError, match=r"env 0 failed in reset: .*reset obs must have dtype float32, got float64"):
        manager.launch()


def test_a_gymnasium_env_a_factory_gives_its_wrapper_is_the_callers_until_the_wrapper_uses_it(make_manager):
    # The manager builds each factory's env once to tell batch envs apart, and closes a DingEnvWrapper so
    # built: a Gymnasium env it was given but never used stays open, as the factory may give it again.
    tracker = CloseTracker()
    shared = tracker.make()
    manager = make_manager([lambda: DingEnvWrapper(shared)])
    assert tracker.closed == []
    manager.launch()
    assert sorted(manager.step({0: 0})) == [0]  # it steps: a closed one refuses (CloseTracker's envs do)

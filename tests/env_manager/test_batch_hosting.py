"""Batch envs behind the managers: each sub-env is one env id, with every guarantee a BaseEnv has (every manager)."""

import re
import warnings
from functools import partial
from typing import ClassVar

import gymnasium as gym
import numpy as np
import pytest

from ding_env import create_env_manager
from ding_env.errors import ConfigError, EnvError
from dizoo.classic_control.cartpole.envs.cartpole_batch_env import CartPoleBatchEnv
from tests.conftest import manager_cfg
from tests.envs import BatchOfEnvs, CountingBatchEnv, CountingEnv, LockstepCountingBatchEnv
from tests.support import arrays_of, as_batch_envs, counting_fns


def batch_fn(num_envs, **env_cfg):
    return partial(CountingBatchEnv, dict(num_envs=num_envs, env_cfg=env_cfg))


def mixed_fns(**env_cfg):
    """Six env ids: a batch env of 3, one CountingEnv, a batch env of 2."""
    return [batch_fn(3, **env_cfg), partial(CountingEnv, env_cfg), batch_fn(2, **env_cfg)]


def run(manager, steps, seed=5, dynamic_seed=None):
    """Every batched step of ``manager`` (seeded, launched), with the infos of done rows."""
    manager.seed(seed, dynamic_seed=dynamic_seed)
    manager.launch()
    trace = []
    for t in range(steps):
        ready = manager.ready_obs_batch
        if not len(ready.env_id):
            break
        batch = manager.step_batch(ready.env_id, (ready.env_id + t) % 3)
        done_infos = [batch.info[row] for row in np.flatnonzero(batch.done)]
        trace.append((*arrays_of(batch), done_infos))
    return trace


def assert_same_trace(got, expected):
    assert len(got) == len(expected)
    for step, (a, b) in enumerate(zip(got, expected, strict=True)):
        for x, y in zip(a[:-1], b[:-1], strict=True):
            np.testing.assert_array_equal(x, y, err_msg=f"step {step}")
        assert a[-1] == b[-1], f"step {step}"


@pytest.mark.parametrize("dynamic_seed", [True, False])
def test_sub_envs_give_the_trajectories_of_the_envs_themselves(make_manager, dynamic_seed):
    """Ids, seeds, auto-reset with the final observation, truncation and episode returns, as for BaseEnvs."""
    plain = create_env_manager(manager_cfg("base"), [partial(CountingEnv, {"limit": 4})] * 6)
    with plain:
        expected = run(plain, 40, dynamic_seed=dynamic_seed)
    manager = make_manager(mixed_fns(limit=4))
    assert manager.env_num == 6
    got = run(manager, 40, dynamic_seed=dynamic_seed)
    assert_same_trace(got, expected)
    assert any(infos and infos[0]["truncated"] for *_, infos in got)  # the limit was reached


def test_dict_api_and_nested_observations(make_manager):
    manager = make_manager([batch_fn(2, nested=True), batch_fn(2, nested=True)])
    plain = make_manager([partial(CountingEnv, {"nested": True})] * 4)
    for each in (manager, plain):
        each.seed(3)
        each.launch()
    for t in range(12):
        ready, expected = manager.ready_obs, plain.ready_obs
        assert sorted(ready) == sorted(expected)
        np.testing.assert_array_equal(ready[1]["pair"][1], expected[1]["pair"][1])
        actions = {env_id: (env_id + t) % 3 for env_id in ready}
        got, want = manager.step(actions), plain.step(actions)
        for env_id, timestep in want.items():
            np.testing.assert_array_equal(got[env_id].obs["vec"], timestep.obs["vec"])
            assert got[env_id].done == timestep.done and got[env_id].info == timestep.info
            assert got[env_id].reward.dtype == np.float32


def test_same_seeds_give_the_trajectory_of_the_batch_env_stepped_directly(make_manager):
    env = CartPoleBatchEnv(dict(num_envs=4))
    env.seed(11)
    obs = env.reset()
    direct = []
    for t in range(120):
        actions = (np.arange(4) + t // 3) % 2
        step = env.step(actions)
        direct.append((step.obs.copy(), step.reward.copy(), step.terminated.copy(), step.truncated.copy()))
        obs = step.obs.copy()
        if step.done.any():
            obs[step.done] = env.reset(np.flatnonzero(step.done))
    manager = make_manager([partial(CartPoleBatchEnv, dict(num_envs=4))])
    manager.seed(11)
    manager.launch()
    for t, (obs, reward, terminated, truncated) in enumerate(direct):
        ready = manager.ready_obs_batch
        batch = manager.step_batch(ready.env_id, (ready.env_id + t // 3) % 2)
        np.testing.assert_array_equal(batch.obs, obs)
        np.testing.assert_array_equal(batch.reward, reward)
        np.testing.assert_array_equal(batch.terminated, terminated)
        np.testing.assert_array_equal(batch.truncated, truncated)
    assert any(step[2].any() for step in direct)


def test_episode_num_counts_each_sub_env(make_manager):
    manager = make_manager(mixed_fns(), episode_num=2)
    manager.seed(0)
    manager.launch()
    episodes = np.zeros(6, dtype=int)
    while not manager.done:
        ready = manager.ready_obs_batch
        batch = manager.step_batch(ready.env_id, np.zeros(len(ready.env_id), dtype=np.int64))
        episodes[batch.env_id] += batch.done
    assert episodes.tolist() == [2] * 6 and manager.ready_obs == {}


def test_without_auto_reset_sub_envs_wait_for_their_reset(make_manager):
    manager = make_manager([batch_fn(3)], auto_reset=False)
    manager.seed(0)
    manager.launch()
    while len(manager.ready_obs_id) == 3:
        manager.step({env_id: 0 for env_id in manager.ready_obs})
    waiting = sorted(set(range(3)) - set(manager.ready_obs_id))
    with pytest.raises(ValueError, match=f"env {waiting[0]} is not ready"):
        manager.step({waiting[0]: 0})
    manager.reset({env_id: {} for env_id in waiting})
    assert manager.ready_obs_id == [0, 1, 2]


def test_a_failing_batch_env_is_reported_naming_every_id_it_hosts(make_manager):
    manager = make_manager([partial(CountingEnv, {}), batch_fn(3, fail_step_at=1, limit=100)])
    manager.seed(0)
    manager.launch()
    manager.step({env_id: 0 for env_id in range(4)})
    with pytest.raises(EnvError, match=r"CountingBatchEnv\(num_envs=3\) hosting env ids 1\.\.3 .*step failure"):
        manager.step({env_id: 0 for env_id in range(4)})


def test_a_failing_batch_env_is_renewed_with_abnormal_steps(make_manager):
    manager = make_manager([batch_fn(2, fail_step_at=1)], step_error="abnormal")
    manager.seed(0)
    manager.launch()
    manager.step({0: 0, 1: 0})
    timesteps = manager.step({0: 0, 1: 0})
    for timestep in timesteps.values():
        assert timestep.done and timestep.info["abnormal"] and "hosting env ids 0..1" in timestep.info["error"]
    assert manager.ready_obs_id == [0, 1]  # renewed and reset: the next episodes run
    assert all(obs[0] == 0 for obs in manager.ready_obs.values())


@pytest.mark.parametrize("step_error", ["raise", "abnormal"])
def test_a_failed_auto_reset_of_a_batch_env_keeps_the_true_final_transitions(make_manager, step_error):
    # limit=1: every step ends an episode (a truncation); sub-env 1's second reset (the auto-reset) fails, and
    # with it the batch env's one reset call for env ids 0 and 1. Env 2 is a plain env beside it.
    batch = partial(
        BatchOfEnvs,
        dict(env_fns=[partial(CountingEnv, dict(limit=1)), partial(CountingEnv, dict(limit=1, fail_reset_at=2))]),
    )
    manager = make_manager([batch, partial(CountingEnv, dict(limit=1))], step_error=step_error)
    manager.seed(0)
    manager.launch()
    with pytest.raises(
        EnvError, match=r"env 0 failed in reset: batch env .* hosting env ids 0\.\.1 .*reset 2 fails"
    ) as raised:
        manager.step({0: 2, 1: 2, 2: 2})
    results = raised.value.results
    assert sorted(results) == [0, 1, 2] and sorted(raised.value.errors) == [0, 1]
    for timestep in results.values():  # every env's real last step: counter 1, reward action + 1, truncated
        assert timestep.done and timestep.truncated and "abnormal" not in timestep.info
        assert timestep.obs[0] == 1.0 and timestep.reward[0] == 3.0
    assert {env_id: status.name for env_id, status in manager.env_state.items()} == {
        0: "NEEDS_RESET",
        1: "NEEDS_RESET",
        2: "READY",
    }
    assert manager.ready_obs_id == [2]  # never handed out without a reset
    manager.reset({0: {}, 1: {}})
    assert manager.ready_obs_id == [0, 1, 2]


def test_reset_params_for_a_sub_env_are_refused(make_manager):
    manager = make_manager(mixed_fns())
    with pytest.raises(
        ValueError, match=r"reset_param for env 4: it is sub-env 0 of a batch env hosting env ids 4\.\.5"
    ):
        manager.launch({4: {"offset": 1.0}})
    manager.launch({3: {"offset": 100.0}})  # the CountingEnv takes them
    assert manager.ready_obs[3][0] == 100.0


def test_sub_envs_read_their_batch_env_attributes(make_manager):
    manager = make_manager([batch_fn(3), batch_fn(2)])
    manager.launch()
    assert manager.num_envs == [3, 3, 3, 2, 2]


class CallCountingBatchEnv(CountingBatchEnv):
    """A batch env with a method that counts its calls (a save, a render)."""

    def bump(self, by: int = 1) -> int:
        self.calls = getattr(self, "calls", 0) + by
        return self.calls


def test_a_method_of_a_batch_env_runs_once_per_call_for_all_its_ids(make_manager):
    manager = make_manager([partial(CallCountingBatchEnv, dict(num_envs=3)), partial(CountingEnv, {}), batch_fn(2)])
    manager.launch()
    assert manager.call_env_method("bump", env_ids=[0, 1, 2]) == [1, 1, 1]
    assert manager.call_env_method("bump", 10, env_ids=[2, 0]) == [11, 11]


class NeedsResetToCloseBatchEnv(CountingBatchEnv):
    """A batch env whose close() fails before its first reset (it closes what reset builds)."""

    def _reset(self, env_ids):
        self.simulator = "built"
        return super()._reset(env_ids)

    def _close(self) -> None:
        del self.simulator  # AttributeError before the first reset
        super()._close()


def test_a_batch_env_whose_close_fails_before_any_reset_is_counted_with_a_warning_naming_it(make_manager):
    with pytest.warns(
        UserWarning, match=r"NeedsResetToCloseBatchEnv\(num_envs=2\) raised while closing before any reset"
    ) as caught:
        manager = make_manager([partial(NeedsResetToCloseBatchEnv, dict(num_envs=2)), partial(CountingEnv, {})])
    assert caught[0].filename.endswith("conftest.py")  # the line that made the manager, not one of ding-env's
    assert manager.env_num == 3
    manager.seed(0)
    manager.launch()
    assert manager.ready_obs_id == [0, 1, 2]


class ShortInfoBatchEnv(CountingBatchEnv):
    """A batch env whose info has fewer rows than the sub-envs it stepped, from its second step on."""

    def _step(self, actions, env_ids):
        record = super()._step(actions, env_ids)
        self.steps = getattr(self, "steps", 0) + 1
        return record._replace(info={"x": np.arange(1)}) if self.steps > 1 else record


@pytest.mark.parametrize("step_error", ["raise", "abnormal"])
def test_a_batch_env_info_without_a_row_per_sub_env_fails_that_batch_env_alone(make_manager, step_error):
    manager = make_manager(
        [partial(CountingEnv, {}), partial(ShortInfoBatchEnv, dict(num_envs=3))], step_error=step_error
    )
    manager.seed(0)
    manager.launch()
    manager.step({env_id: 0 for env_id in range(4)})
    expected = r"ShortInfoBatchEnv.* hosting env ids 1\.\.3 .*info\['x'\] must be an array with one row per .* \(3\)"
    if step_error == "raise":
        with pytest.raises(EnvError, match=expected) as raised:
            manager.step({env_id: 0 for env_id in range(4)})
        assert raised.value.env_id == 1
        assert manager.ready_obs_id == [0]  # env 0 stepped on; the batch env's ids need a reset
        manager.reset({env_id: {} for env_id in (1, 2, 3)})
    else:
        timesteps = manager.step({env_id: 0 for env_id in range(4)})
        assert not timesteps[0].done and timesteps[0].obs[0] == 2
        assert all(timesteps[env_id].info["abnormal"] for env_id in (1, 2, 3))
        assert re.search(expected, timesteps[1].info["error"])
    assert manager.ready_obs_id == [0, 1, 2, 3]


def test_sub_envs_draw_random_actions_as_a_base_env_does(make_manager):
    """A batch env has no random_action: each sub-env draws from its own sampler, seeded with its seed."""
    manager = make_manager(mixed_fns())
    manager.seed(5)
    manager.launch()
    got = [manager.random_action() for _ in range(6)]
    for env_id in (0, 1, 2, 4, 5):  # the batch envs' sub-envs; env 3 is a CountingEnv
        sampler = gym.spaces.Discrete(3)
        sampler.seed(5 + env_id)  # as BaseEnv.random_action seeds its space with the env's seed
        assert [actions[env_id] for actions in got] == [sampler.sample() for _ in range(6)], env_id
    assert all(actions.keys() == set(range(6)) and 0 <= actions[3] < 3 for actions in got)
    manager.seed(5)  # seeded again, each sub-env's draws start over, as a BaseEnv's do
    assert [manager.random_action()[0] for _ in range(6)] == [actions[0] for actions in got]


def test_seeding_some_sub_envs_of_a_batch_env_is_refused_and_whole_batch_envs_are_taken(make_manager):
    manager = make_manager(mixed_fns())
    manager.seed(5)
    manager.launch()
    # Its seed stream restarts for all its sub-envs at once: env 1's episodes would start over, unasked.
    with pytest.raises(
        ValueError, match=r"seed\(\) names some env ids of the batch env hosting env ids 0\.\.2.*\[1, 2\]"
    ):
        manager.seed({0: 100})
    manager.seed({3: 7})  # the CountingEnv on its own
    manager.seed({0: 1, 1: 2, 2: 3, 4: 4, 5: 5})
    manager.reset()
    assert len(manager.ready_obs) == 6


def test_an_attribute_of_a_batch_env_is_set_for_all_its_sub_envs_with_one_value(make_manager):
    manager = make_manager([batch_fn(3), batch_fn(2)])
    manager.launch()
    with pytest.raises(
        ValueError, match=r"names some env ids of the batch env hosting env ids 0\.\.2.*set \[1, 2\] too"
    ):
        manager.set_env_attr("tag", "a", env_ids=[0])
    with pytest.raises(
        ValueError, match=r"gives the sub-envs of the batch env hosting env ids 3\.\.4 .* different values"
    ):
        manager.set_env_attr("tag", ["a", "a", "a", "b", "c"])
    manager.set_env_attr("tag", ["a", "a", "a", np.zeros(2), np.zeros(2)])  # arrays compared by their elements
    manager.set_env_attr("goal", [{"p": np.zeros(2), "w": float("nan")} for _ in range(5)])  # and nested ones
    assert manager.tag[:3] == ["a"] * 3 and all(np.array_equal(tag, np.zeros(2)) for tag in manager.tag[3:])


@pytest.mark.parametrize("manager_type", ["base", "subprocess"])
def test_a_lockstep_batch_env_steps_all_its_sub_envs_or_none(manager_type):
    fns = [partial(LockstepCountingBatchEnv, dict(num_envs=2)), partial(CountingEnv, {})]
    with create_env_manager(manager_cfg(manager_type), fns) as manager:
        manager.seed(0)
        manager.launch()
        with pytest.raises(ValueError, match=r"env ids 0\.\.1 are a lockstep batch env: step all of them together"):
            manager.step({0: 0, 2: 0})
        for _ in range(10):
            manager.step({2: 1})
            manager.step({0: 0, 1: 0})
        assert manager.ready_obs_id == [0, 1, 2]


def test_a_lockstep_batch_env_needs_a_manager_that_keeps_it_running():
    fns = [partial(LockstepCountingBatchEnv, dict(num_envs=2))]
    with pytest.raises(ConfigError, match="lockstep batch env"):
        create_env_manager(manager_cfg("async_subprocess"), fns)
    with pytest.raises(ConfigError, match="episode_num=inf"):
        create_env_manager(manager_cfg("base", episode_num=2), fns)


def test_workers_host_whole_batch_envs():
    with create_env_manager(manager_cfg("subprocess", num_workers=3), mixed_fns()) as manager:
        manager.launch()
        assert [worker.env_ids for worker in manager.workers] == [[0, 1, 2], [3], [4, 5]]
    with create_env_manager(manager_cfg("subprocess", num_workers=2), [batch_fn(5)]) as manager:
        manager.launch()
        assert [worker.env_ids for worker in manager.workers] == [[0, 1, 2, 3, 4]]


class ReusedInfoBatchEnv(CountingBatchEnv):
    """A ``CountingBatchEnv`` whose info has an array row per sub-env, written in place at every step."""

    def _step(self, actions, env_ids):
        record = super()._step(actions, env_ids)
        if not hasattr(self, "counts"):
            self.counts = np.zeros((self.num_envs, 2))
        self.counts += 1
        return record._replace(info={**record.info, "count": self.counts[: len(record.reward)]})


def test_an_info_row_that_is_an_array_is_the_callers_own(make_manager):
    manager = make_manager([partial(ReusedInfoBatchEnv, dict(num_envs=2))])
    manager.launch()
    first = manager.step_batch([0, 1], np.zeros(2, dtype=np.int64))
    manager.step_batch([0, 1], np.zeros(2, dtype=np.int64))
    assert [info["count"].tolist() for info in first.info] == [[1.0, 1.0], [1.0, 1.0]]


def test_a_config_file_of_a_wrapper_type_with_batch_serves_its_batch_env(tmp_path):
    from ding_env.checker.target import resolve_target
    from ding_env.env.batch_env import BaseBatchEnv

    config = tmp_path / "cartpole_batch.py"
    config.write_text("main_config = dict(env=dict(type='cartpole', batch=4))\n")
    env_fn, cfg = resolve_target(str(config), batch_envs=True)
    env = env_fn()
    assert isinstance(env, BaseBatchEnv) and env.num_envs == 4 and cfg is None
    env.close()


class HalfRewardBatchEnv(CartPoleBatchEnv):
    """Declares int64 rewards and gives halves: a reward its space cannot hold."""

    def _transition(self, env_ids, obs, reward, *args, **kwargs):
        return super()._transition(env_ids, obs, np.asarray(reward) * 0.5, *args, **kwargs)

    @property
    def reward_space(self):
        return gym.spaces.Box(-10, 10, (1,), np.int64)


def test_a_reward_its_integer_reward_space_cannot_hold_fails_the_batch_env_not_a_silent_cast(make_manager):
    manager = make_manager([partial(HalfRewardBatchEnv, dict(num_envs=2))])
    manager.seed(0)
    manager.launch()
    with pytest.raises(
        EnvError,
        match=r"batch env CartPoleBatchEnv.*hosting env ids 0\.\.1.*reward array\(\[0\.5 0\.5\].*does not fit the "
        r"reward space's dtype int64",
    ):
        manager.step_batch(np.arange(2), np.zeros(2, dtype=np.int64))


class HugeRewardBatchEnv(CartPoleBatchEnv):
    """Gives float64 rewards beyond its float32 reward space's range, or integers float32 cannot keep exactly."""

    def __init__(self, cfg, reward=1e39):
        super().__init__(cfg)
        self.given_reward = reward

    def _transition(self, env_ids, obs, reward, *args, **kwargs):
        given = np.broadcast_to(np.asarray(self.given_reward), len(reward))  # one value, or one per sub-env
        return super()._transition(env_ids, obs, given, *args, **kwargs)


@pytest.mark.parametrize(
    "reward, message",
    [
        (1e39, r"reward array\(\[1\.e\+39 1\.e\+39\].*is beyond the reward space's dtype float32"),
        (2**24 + 1, r"reward array\(\[16777217 16777217\].*is not exact in the reward space's dtype float32"),
        # A NaN beside it hid the overflow: the check asked for every given reward to be finite.
        ([1e39, np.nan], r"reward array\(\[1\.e\+39 nan\].*is beyond the reward space's dtype float32"),
    ],
)
def test_a_reward_its_float32_reward_space_would_change_fails_the_batch_env_not_a_silent_cast(
    make_manager, reward, message
):
    # It became inf (or the nearest float32) in the rows without a word. Numpy's warning of the overflow is
    # not raised in its place (as an error, here: every process the manager starts inherits the filter).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        manager = make_manager([partial(HugeRewardBatchEnv, dict(num_envs=2), reward=reward)])
        manager.seed(0)
        manager.launch()
        with pytest.raises(EnvError, match=r"batch env CartPoleBatchEnv.*hosting env ids 0\.\.1.*" + message):
            manager.step_batch(np.arange(2), np.zeros(2, dtype=np.int64))


def test_env_calls_reach_a_batch_env_renewed_after_an_abnormal_step(make_manager):
    # They reached the batch env it replaced, closed.
    manager = make_manager(as_batch_envs(counting_fns(2, fail_step_at=2)), step_error="abnormal")
    manager.seed(0)
    manager.launch()
    manager.step({0: 0, 1: 0})
    manager.step({0: 0, 1: 0})
    assert all(timestep.info["abnormal"] for timestep in manager.step({0: 0, 1: 0}).values())  # renewed and reset
    assert manager.sub_env_steps() == [[0, 0], [0, 0]]  # the new env's sub-envs, reset and not stepped yet


def test_an_abnormal_step_of_some_sub_envs_leaves_the_others_in_their_episodes(make_manager):
    # The batch env was renewed: env 0, not stepped, was left in a new batch env never reset.
    fns = [partial(CountingEnv, {"limit": 100}), partial(CountingEnv, {"limit": 100, "fail_step_at": 1})]
    manager = make_manager(as_batch_envs(fns), step_error="abnormal")
    manager.seed(0)
    manager.launch()
    manager.step({0: 0})
    manager.step({0: 0})
    manager.step({1: 0})
    failed = manager.step({1: 0})  # env 1's second step raises
    assert failed[1].done and failed[1].info["abnormal"]
    assert manager.ready_obs[1][0] == 0.0  # reset: its next episode is ready
    assert manager.step({0: 0})[0].obs[0] == 3.0  # env 0's third step of its episode
    assert manager.step({1: 0})[1].obs[0] == 1.0


class NumericInfoBatchEnv(CartPoleBatchEnv):
    """CartPole sub-envs whose info has a row per sub-env of every numeric kind, in forms that change over time.

    ``big`` is an int beyond float64's exact range on some rows; every fourth step adds a key, every fifth makes
    one key masked on some rows (a key those sub-envs did not report); with ``clash`` the info has its own
    ``truncated`` key, which a done row's final info overwrites.
    """

    config: ClassVar[dict] = dict(num_envs=3, max_episode_steps=7, clash=False)

    def _step(self, actions, env_ids):
        record = super()._step(actions, env_ids)
        self.calls = getattr(self, "calls", 0) + 1
        steps = self._steps.copy() if env_ids is None else self._steps[env_ids]
        info = {
            "step": steps,
            "big": np.where(steps % 3 == 0, 2**60 + steps, steps),
            "half": (steps / 2).astype(np.float32),
            "even": steps % 2 == 0,
            "small": (steps % 7).astype(np.uint8),
            "total": steps * 0.25,
        }
        if self.calls % 4 == 0:
            info["fourth"] = np.full(len(steps), -1.5)
        if self.calls % 5 == 0:
            info["half"] = np.ma.array(info["half"], mask=steps % 2 == 1)
        if self._cfg.clash:
            info["truncated"] = steps > 100
        return record._replace(info=info)


def _typed_infos(infos):
    """Each info's items with their types; repr keeps 1 apart from 1.0 and True."""
    return [[(key, type(value).__name__, repr(value)) for key, value in info.items()] for info in infos]


@pytest.mark.parametrize("clash", [False, True])
def test_batch_env_infos_of_every_numeric_kind_arrive_as_in_the_base_manager(clash):
    """Workers store a batch env's info rows (and done rows' final infos) at once: the same values, types, keys."""
    fns = [partial(NumericInfoBatchEnv, dict(num_envs=3, clash=clash)), partial(NumericInfoBatchEnv, dict(num_envs=2))]
    traces = {}
    for manager_type in ("base", "subprocess"):
        with create_env_manager(manager_cfg(manager_type, num_workers=2), fns) as manager:
            manager.seed(7)
            manager.launch()
            actions = np.random.default_rng(0).integers(0, 2, (40, 5))
            traces[manager_type] = [_typed_infos(manager.step_batch(np.arange(5), actions[t]).info) for t in range(40)]
    assert traces["subprocess"] == traces["base"]
    rows = [row for step in traces["base"] for row in step]
    assert any(("eval_episode_return", "float", "7.0") in row for row in rows)  # truncated episodes
    assert any(key == "big" and int(value) > 2**53 for row in rows for key, _, value in row)
    assert any("half" not in dict((key, None) for key, *_ in row) for row in rows)  # masked rows


def test_the_final_info_schema_is_final_infos_own():
    from ding_env.env.timestep import final_info
    from ding_env.env_manager.backends.info_table import FINAL_SCHEMA, schema_of

    assert schema_of(final_info(None, 2.0, True)) == FINAL_SCHEMA

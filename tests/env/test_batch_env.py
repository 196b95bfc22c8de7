"""The batch-env contract (BaseBatchEnv), through dizoo's numpy CartPoleBatchEnv.

CartPoleBatchEnv's sub-envs must be Gymnasium's CartPole-v1 step for step: the same seeds give the
same observations, rewards, terminations and truncations as Gymnasium's CartPole-v1 reset with the
seed at every episode (static seeds) or at the first one (dynamic seeds).
"""

import pickle
import re

import gymnasium as gym
import numpy as np
import pytest
import torch

from ding_env import BaseBatchEnv
from ding_env.errors import ConfigError, EnvStateError
from ding_env.testing import BatchEnvContractTests
from dizoo.classic_control.cartpole.envs import CartPoleBatchEnv


class GymnasiumCartPole:
    """Gymnasium's CartPole-v1, seeded as a batch env seeds a sub-env: at every reset (static seeds) or once."""

    def __init__(self, seed, dynamic, max_episode_steps):
        self.env = gym.make("CartPole-v1", max_episode_steps=max_episode_steps)
        self.seed, self.dynamic, self.seeded = seed, dynamic, False

    def reset(self):
        seed = None if self.dynamic and self.seeded else self.seed
        self.seeded, self.episode_return = True, 0.0
        return self.env.reset(seed=seed)[0]

    def step(self, action):
        """Gymnasium's step; ``truncated`` may be True beside ``terminated`` (a terminal state at the time limit)."""
        obs, reward, terminated, truncated, _ = self.env.step(int(action))
        self.episode_return += reward
        return obs, reward, terminated, truncated


def run_against_gymnasium(batch, seeds, dynamic, steps, max_episode_steps=500):
    """Step the batch env and Gymnasium's CartPole-v1 alike; every row must equal its env's step."""
    envs = [GymnasiumCartPole(seed, dynamic, max_episode_steps) for seed in seeds]
    rng = np.random.default_rng(0)
    assert np.array_equal(batch.reset(), np.stack([env.reset() for env in envs]))
    ends = truncations = both = 0
    for _ in range(steps):
        actions = rng.integers(0, 2, batch.num_envs)
        record = batch.step(actions)
        for row, env in enumerate(envs):
            obs, reward, terminated, truncated = env.step(actions[row])
            assert np.array_equal(record.obs[row], obs) and record.reward[row, 0] == reward
            # A terminal state is a termination, at the time limit too: nothing to bootstrap from.
            assert (record.terminated[row], record.truncated[row]) == (terminated, truncated and not terminated)
            if terminated or truncated:
                assert record.episode_return[row] == env.episode_return
                ends += 1
                truncations += truncated and not terminated
                both += terminated and truncated
        ended = np.flatnonzero(record.done)
        if len(ended):
            assert np.array_equal(batch.reset(ended), np.stack([envs[row].reset() for row in ended]))
    return ends, truncations, both


@pytest.mark.parametrize("dynamic", [True, False])
def test_cartpole_batch_env_is_gymnasium_cartpole_step_for_step(dynamic):
    batch = CartPoleBatchEnv(dict(num_envs=6, max_episode_steps=40))
    batch.seed(7, dynamic_seed=dynamic)
    ends, truncations, both = run_against_gymnasium(batch, range(7, 13), dynamic, steps=400, max_episode_steps=40)
    # Every kind of end was compared: terminal states, time limits, and a terminal state at the time limit.
    assert ends > 40 and truncations > 0 and both > 0


def test_per_sub_env_seeds_equal_separate_envs_with_those_seeds():
    seeds = [3, 100, 42]
    batch = CartPoleBatchEnv(dict(num_envs=3))
    batch.seed(seeds)
    run_against_gymnasium(batch, seeds, dynamic=True, steps=150)


def test_unseeded_sub_envs_start_differently():
    batch = CartPoleBatchEnv(dict(num_envs=4))
    obs = batch.reset()
    assert len({row.tobytes() for row in obs}) == 4


def test_stepping_some_sub_envs_leaves_the_others_as_they_are():
    actions = np.random.default_rng(1).integers(0, 2, (8, 3))  # CartPole episodes last longer than 8 steps
    together = CartPoleBatchEnv(dict(num_envs=3))
    together.seed(5)
    together.reset()
    apart = CartPoleBatchEnv(dict(num_envs=3))
    apart.seed(5)
    apart.reset()
    for step in actions:
        expected = together.step(step).obs
        # Sub-envs 2 and 0 in reverse order, then 1 alone: rows follow env_ids.
        pair = apart.step(step[[2, 0]], env_ids=[2, 0])
        lone = apart.step(step[[1]], env_ids=np.array([1]))
        assert np.array_equal(pair.obs, expected[[2, 0]]) and np.array_equal(lone.obs, expected[[1]])
        assert pair.terminated.shape == (2,) and lone.reward.shape == (1, 1)


def test_a_sub_env_whose_episode_ended_must_be_reset_before_stepping_again():
    batch = CartPoleBatchEnv(dict(num_envs=2, max_episode_steps=3))
    batch.seed(0)
    batch.reset()
    for _ in range(3):
        record = batch.step(np.array([0, 1]))
    assert record.truncated.all() and not record.terminated.any()
    with pytest.raises(EnvStateError, match=r"sub-envs \[0, 1\] need reset"):
        batch.step(np.array([0, 1]))
    with pytest.raises(EnvStateError, match=r"sub-envs \[1\] need reset"):
        batch.step(np.array([0]), env_ids=[1])
    batch.reset([1])
    assert batch.step(np.array([0]), env_ids=[1]).obs.shape == (1, 4)


def test_step_before_reset_and_after_close_is_refused():
    batch = CartPoleBatchEnv(dict(num_envs=2))
    with pytest.raises(EnvStateError, match="need reset"):
        batch.step(np.array([0, 0]))
    batch.reset()
    batch.close()
    with pytest.raises(EnvStateError, match="need reset"):
        batch.step(np.array([0, 0]))
    batch.close()  # twice is allowed
    assert batch.reset().shape == (2, 4)  # and it can start over


@pytest.mark.parametrize(
    "env_ids, message",
    [
        ([0, 0], "distinct"),
        ([3], r"\[0, 3\)"),
        ([-1], r"\[0, 3\)"),
        ([[0, 1]], "flat sequence"),
        (["a"], "flat sequence"),
    ],
)
def test_bad_env_ids_are_refused_naming_them(env_ids, message):
    batch = CartPoleBatchEnv(dict(num_envs=3))
    with pytest.raises(ValueError, match=message):
        batch.reset(env_ids)


def test_bad_actions_are_refused_naming_the_sub_envs():
    batch = CartPoleBatchEnv(dict(num_envs=3))
    batch.reset()
    with pytest.raises(ValueError, match=r"expected 3 stacked actions.*shape \(2,\)"):
        batch.step(np.array([0, 1]))
    with pytest.raises(ValueError, match=r"sub-envs \[2\] got"):
        batch.step(np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="must be 0 or 1"):
        batch.step(np.array([0.5, 1.0, 0.0]))


@pytest.mark.parametrize("actions", [[1], 1, [1, 0], np.array(1), {"a": np.zeros(2, np.int64)}])
def test_actions_that_are_not_one_row_per_sub_env_are_refused_whatever_their_type(actions):
    batch = CartPoleBatchEnv(dict(num_envs=3))
    batch.reset()
    with pytest.raises(ValueError, match=r"expected 3 stacked actions \(one row per stepped sub-env\)"):
        batch.step(actions)
    assert batch.step([1, 0, 1]).obs.shape == (3, 4)  # a list of one action per sub-env is taken
    assert batch.step((1, 0, 1)).obs.shape == (3, 4)  # a tuple too, for a space that is not a Tuple
    assert batch.step(torch.zeros(3, dtype=torch.long)).obs.shape == (3, 4)  # and a tensor of 3 rows


def test_a_reset_and_a_step_of_no_sub_env_do_nothing_and_return_no_rows():
    batch = CartPoleBatchEnv(dict(num_envs=3))
    batch.seed(0)
    obs = batch.reset()
    assert batch.reset(np.flatnonzero(np.zeros(3, bool))).shape == (0, 4)  # no sub-env ended: nothing to reset
    step = batch.step(np.zeros(0, np.int64), env_ids=[])
    assert step.obs.shape == (0, 4) and step.reward.shape == (0, 1) and step.done.shape == (0,)
    np.testing.assert_allclose(batch.step(np.zeros(3, np.int64)).obs[:, 0], obs[:, 0] + 0.02 * obs[:, 1], atol=1e-6)


def test_an_unknown_config_key_is_refused_with_the_key_meant():
    with pytest.raises(ConfigError, match=r"unknown key 'num_env' .*did you mean 'num_envs'"):
        CartPoleBatchEnv(dict(num_env=64))


class ShortInfoCartPole(CartPoleBatchEnv):
    def _step(self, actions, env_ids):
        record = super()._step(actions, env_ids)
        return record._replace(info={"speed": np.zeros(2)})


def test_an_info_that_is_not_one_row_per_stepped_sub_env_is_refused_naming_its_key():
    batch = ShortInfoCartPole(dict(num_envs=3))
    batch.reset()
    with pytest.raises(ValueError, match=r"info\['speed'\] must be an array with one row per stepped sub-env \(3\)"):
        batch.step(np.zeros(3, np.int64))


class RecordFieldCartPole(CartPoleBatchEnv):
    """Returns ``cfg.field`` of its step record replaced by ``cfg.value``."""

    config = dict(CartPoleBatchEnv.config, field="reward", value=None)

    def _step(self, actions, env_ids):
        return super()._step(actions, env_ids)._replace(**{self._cfg.field: self._cfg.value})


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("reward", np.float32(7), "reward must be an array of 3 rows of shape (1,)"),  # spread to every sub-env
        ("reward", np.ones((1, 1), np.float32), "reward must be an array of 3 rows of shape (1,)"),
        ("terminated", np.zeros(1, bool), "terminated must be a (3,) bool array"),
        ("truncated", False, "truncated must be a (3,) bool array"),
        ("terminated", np.zeros(3, np.int64), "terminated must be a (3,) bool array"),  # an index, not a mask
        ("episode_return", np.zeros(2), "episode_return must be an array of 3 rows"),
    ],
)
def test_a_step_record_field_without_one_row_per_sub_env_is_refused_naming_it(field, value, expected):
    batch = RecordFieldCartPole(dict(num_envs=3, field=field, value=value))
    batch.reset()
    with pytest.raises(ValueError, match=re.escape(f"CartPoleBatchEnv(num_envs=3).step(): BatchStep.{expected}")):
        batch.step(np.zeros(3, np.int64))


@pytest.mark.parametrize(
    "seed, error, message",
    [
        ([1, 2], ValueError, "one seed per sub-env"),
        ([1, -2, 3], ValueError, "sub-env 1"),
        (-1, ValueError, ">= 0"),
        (True, TypeError, "expected an int"),
        (1.5, TypeError, "expected an int"),
    ],
)
def test_bad_seeds_are_refused(seed, error, message):
    with pytest.raises(error, match=message):
        CartPoleBatchEnv(dict(num_envs=3)).seed(seed)


@pytest.mark.parametrize("num_envs", [0, 2.0, True, None])
def test_num_envs_must_be_a_positive_int(num_envs):
    with pytest.raises(ConfigError, match="num_envs"):
        CartPoleBatchEnv(dict(num_envs=num_envs))


def test_static_seeds_replay_each_sub_envs_start_and_dynamic_ones_do_not():
    batch = CartPoleBatchEnv(dict(num_envs=3))
    batch.seed(11, dynamic_seed=False)
    first = batch.reset()
    assert np.array_equal(batch.reset([2, 0]), first[[2, 0]])
    assert np.array_equal(batch.reset(), first)
    batch.seed(11, dynamic_seed=True)
    episodes = [batch.reset() for _ in range(3)]
    assert len({episode[1].tobytes() for episode in episodes}) == 3  # a new start per episode
    batch.seed(11, dynamic_seed=True)
    assert all(np.array_equal(batch.reset(), episode) for episode in episodes)  # drawn reproducibly


def test_the_record_row_as_a_timestep_carries_truncation_and_the_return():
    batch = CartPoleBatchEnv(dict(num_envs=2, max_episode_steps=2))
    batch.seed(0)
    batch.reset()
    batch.step(np.array([1, 1]))
    record = batch.step(np.array([1, 1]))
    timestep = record.timestep(1)
    assert timestep.done is True and timestep.truncated and not timestep.terminated
    assert timestep.info == {"truncated": True, "eval_episode_return": 2.0}
    assert timestep.reward.shape == (1,) and timestep.reward.dtype == np.float32
    assert np.array_equal(timestep.obs, record.obs[1]) and not np.shares_memory(timestep.obs, record.obs)


def test_a_batch_env_pickles_before_its_first_reset_and_the_copy_runs_the_same():
    batch = CartPoleBatchEnv(dict(num_envs=3))
    batch.seed(9)
    copy = pickle.loads(pickle.dumps(batch))
    actions = np.random.default_rng(0).integers(0, 2, (20, 3))
    for env in (batch, copy):
        env.reset()
    for step in actions:
        a, b = batch.step(step), copy.step(step)
        assert np.array_equal(a.obs, b.obs) and np.array_equal(a.done, b.done)
        if a.done.any():
            break


def test_the_global_rng_is_never_touched():
    state = np.random.get_state()[1].copy()
    batch = CartPoleBatchEnv(dict(num_envs=3))
    batch.reset()
    batch.step(np.array([0, 1, 0]))
    assert np.array_equal(np.random.get_state()[1], state)


def test_spaces_are_those_of_one_sub_env():
    batch = CartPoleBatchEnv(dict(num_envs=5))
    reference = gym.make("CartPole-v1")
    assert batch.observation_space == reference.observation_space
    assert batch.action_space == gym.spaces.Discrete(2)
    assert batch.reward_space.shape == (1,)
    assert isinstance(batch, BaseBatchEnv)


class TestCartPoleBatchEnvContract(BatchEnvContractTests):
    env_cls = CartPoleBatchEnv
    env_cfg = dict(num_envs=4, max_episode_steps=50)

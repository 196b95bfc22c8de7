"""Each preprocessing wrapper emits data inside the spaces it declares."""

import gymnasium as gym
import numpy as np
import pytest

from ding_env.env_wrappers import (
    ActionDiscretizeWrapper,
    ActionRepeatWrapper,
    ClipRewardWrapper,
    EvalEpisodeReturnWrapper,
    ObservationClipWrapper,
    ObsNormWrapper,
    ObsTransposeWrapper,
    RewardNormWrapper,
    ScaledFloatFrameWrapper,
    SparseRewardWrapper,
    TimeLimitWrapper,
)
from tests.envs import ImageEnv


def run(env, steps=12):
    obs, _ = env.reset(seed=0)
    env.action_space.seed(0)
    observations, rewards = [obs], []
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        observations.append(obs)
        rewards.append(reward)
        if terminated or truncated:
            obs, _ = env.reset()
            observations.append(obs)
    return observations, rewards


@pytest.mark.parametrize(
    "make",
    [
        lambda: ScaledFloatFrameWrapper(ImageEnv()),
        lambda: ObsTransposeWrapper(ImageEnv()),
        lambda: ObservationClipWrapper(gym.make("MountainCar-v0"), -0.5, 0.5),
        lambda: ObsNormWrapper(gym.make("CartPole-v1")),
    ],
    ids=["scaled_float", "transpose", "observation_clip", "obs_norm"],
)
def test_observations_stay_in_declared_space(make):
    env = make()
    observations, _ = run(env)
    for obs in observations:
        assert env.observation_space.contains(np.asarray(obs, dtype=env.observation_space.dtype)), obs


def test_transpose_is_channel_first():
    env = ObsTransposeWrapper(ImageEnv())
    assert env.observation_space.shape == (3, 6, 5) and run(env)[0][0].shape == (3, 6, 5)


def test_reward_wrappers():
    assert set(run(ClipRewardWrapper(ImageEnv()))[1]) <= {-1.0, 0.0, 1.0}
    assert set(run(SparseRewardWrapper(ImageEnv()))[1]) <= {0.0, 1.0}
    assert all(np.isfinite(run(RewardNormWrapper(gym.make("CartPole-v1")))[1]))


def test_eval_episode_return_reports_the_raw_sum_on_done():
    env = ClipRewardWrapper(EvalEpisodeReturnWrapper(ImageEnv()))
    env.reset(seed=0)
    for _ in range(5):
        *_, terminated, truncated, info = env.step(0)
    assert terminated and info["eval_episode_return"] == sum(t - 2.0 for t in range(1, 6))


def test_action_repeat_sums_rewards_and_stops_at_done():
    env = ActionRepeatWrapper(ImageEnv(), action_repeat=3)
    env.reset(seed=0)
    assert env.step(0)[1] == (-1.0 + 0.0 + 1.0)
    _, reward, terminated, *_ = env.step(0)
    assert terminated and reward == 2.0 + 3.0


def test_action_discretize_maps_indices_onto_the_bounds():
    seen = []

    class Record(gym.ActionWrapper):
        def action(self, action):
            seen.append(float(np.asarray(action).reshape(-1)[0]))
            return action

    env = ActionDiscretizeWrapper(Record(gym.make("Pendulum-v1")), num_actions=5)
    assert env.action_space == gym.spaces.Discrete(5)
    env.reset(seed=0)
    for index in range(5):
        env.step(index)
    assert seen == [-2.0, -1.0, 0.0, 1.0, 2.0]


def test_time_limit_wrapper_truncates():
    env = TimeLimitWrapper(gym.make("CartPole-v1", max_episode_steps=None), max_limit=3)
    env.reset(seed=0)
    results = [env.step(i % 2) for i in range(3)]
    assert results[-1][3] is True and results[-1][2] is False

"""The 'gym_hybrid' env type: DI-engine's hybrid Dict action (type, mask, args), in every manager."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from ding_env import create_env_manager
from ding_env.checker import check_env
from ding_env.errors import ConfigError
from ding_env.registry import get_vec_env_setting
from dizoo.gym_hybrid.envs import GymHybridEnv, MovingEnv
from tests.conftest import manager_cfg
from tests.trajectories import assert_same_records, run_alone, run_in_manager


def hybrid_actions(steps: int, env_num: int, seed: int) -> list[list[dict]]:
    space = GymHybridEnv().action_space
    space.seed(seed)
    return [[space.sample() for _ in range(env_num)] for _ in range(steps)]


def test_the_type_takes_di_engines_action_with_args_scaled_from_minus_one_to_one():
    # It took {'type', 'mask', 'args'}: the actions of DI-engine's hybrid policies were refused.
    env = GymHybridEnv()
    space = env.action_space
    assert isinstance(space, gym.spaces.Dict) and sorted(space) == ["action_args", "action_type"]
    assert space["action_type"] == gym.spaces.Discrete(3)
    assert space["action_args"] == gym.spaces.Box(-1.0, 1.0, (2,), np.float32)  # DI-engine's act_scale=True
    speeds = []
    for acceleration in (-1.0, 0.0, 1.0):
        env.seed(0)
        env.reset()
        timestep = env.step({"action_type": np.int64(0), "action_args": np.array([acceleration, 0.0], np.float32)})
        speeds.append(float(timestep.obs[2]))
    assert speeds == [0.0, 0.25, 0.5]  # [-1, 1] mapped to [0, 1], times the largest acceleration
    unscaled = GymHybridEnv({"env_id": "Moving-v0", "act_scale": False}).action_space["action_args"]
    np.testing.assert_array_equal(unscaled.low, [0, -1])


def test_the_moving_env_is_gym_hybrids_moving_v0():
    # It was an env of its own under that id: no step penalty, a goal reached at any speed, turns of up to pi.
    env = MovingEnv()
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)  # Gymnasium's generator for seed 0; Gym-Hybrid draws the target first
    target = rng.uniform([-0.9, -0.9, 0.1], [0.9, 0.9, 0.1])[:2]
    x, y, heading = rng.uniform([-1, -1, 0], [1, 1, 2 * np.pi])
    distance = np.hypot(x - target[0], y - target[1])
    expected = [x, y, 0, np.cos(heading), np.sin(heading), *target, distance, 0, 0]
    np.testing.assert_allclose(obs, np.array(expected, np.float32))
    obs, reward, terminated, truncated, _ = env.step((0, np.array([0.5, 0.0])))  # accelerate: speed 0.5 * 0.5
    x, y = x + 0.005 * 0.25 * np.cos(heading), y + 0.005 * 0.25 * np.sin(heading)
    moved = np.hypot(x - target[0], y - target[1])
    assert obs[2] == np.float32(0.25) and (terminated, truncated) == (False, False)
    assert reward == pytest.approx(distance - moved - 0.001)  # the distance gained, less the step penalty
    obs, *_ = env.step((1, np.array([0.0, 3.0])))  # turn, clipped to 1: a quarter turn
    np.testing.assert_allclose(obs[3:5], [np.cos(heading + np.pi / 2), np.sin(heading + np.pi / 2)], atol=1e-6)
    obs, *_ = env.step((2, np.zeros(2)))  # break: 0.25 - 0.1
    assert obs[2] == np.float32(0.15)


def test_episodes_end_stopped_at_the_target_off_the_field_or_after_the_time_limit():
    env = MovingEnv()
    env.reset(seed=0)
    env.position, env.target, env.heading, env.speed = np.array([0.0, 0.0]), np.array([0.05, 0.0]), 0.0, 0.05
    _, reward, terminated, truncated, _ = env.step((2, np.zeros(2)))  # break to a stop within the target
    assert (terminated, truncated) == (True, False) and reward == pytest.approx(1 - 0.001)
    env.position, env.speed = np.array([0.999, 0.0]), 1.0
    _, reward, terminated, truncated, _ = env.step((0, np.array([1.0, 0.0])))  # off the field
    assert (reward, terminated, truncated) == (-1.0, True, False)
    env.reset(seed=1)
    ends = [env.step((2, np.zeros(2)))[1:4] for _ in range(201)]  # standing still
    assert not any(terminated or truncated for _, terminated, truncated in ends[:200])
    assert ends[200] == (-1.0, False, True)  # Gym-Hybrid's -1 at the step after the 200th, a time limit


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess", "base_v2", "subprocess_v2"])
def test_hybrid_actions_in_every_manager_as_on_its_own(manager_type):
    env_fns = [GymHybridEnv] * 2
    actions = hybrid_actions(200, 2, seed=0)
    expected = run_alone(env_fns, 5, actions)
    with create_env_manager(manager_cfg(manager_type), env_fns) as manager:
        assert_same_records(run_in_manager(manager, 5, actions), expected)
    assert sum(record[0] == "reset" for rows in expected for record in rows) > 2  # episodes ended and restarted


def test_checker_passes_clean():
    report = check_env(GymHybridEnv, episodes=2, max_steps=500)
    assert report.findings == [], report.format()


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({"env_wrapper": "gym_hybrid_default"}, r"is DingEnvWrapper's \{'type', 'mask', 'args'\} action"),
        ({"obs_plus_prev_action_reward": True}, "its hybrid Dict action has no array form there"),
    ],
)
def test_keys_that_would_change_the_types_action_form_are_refused(cfg, message):
    # env_wrapper='gym_hybrid_default' (the type's default before) crashed unpacking the preset's Dict.
    with pytest.raises(ConfigError, match=message):
        GymHybridEnv(cfg)


def test_a_batch_of_the_type_is_refused_when_the_section_is_read():
    # It built a vector env stepping the raw Tuple action, with act_scale silently off.
    with pytest.raises(ConfigError, match=r"'batch'=2: env type 'gym_hybrid' \(GymHybridEnv\) builds no batch envs"):
        get_vec_env_setting({"type": "gym_hybrid", "batch": 2, "collector_env_num": 2, "evaluator_env_num": 2})

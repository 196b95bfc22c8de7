"""The 'gym_hybrid' env type: DI-engine's hybrid Dict action (type, mask, args), in every manager."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from ding_env import create_env_manager
from ding_env.checker import check_env
from dizoo.gym_hybrid.envs import GymHybridEnv, MovingEnv
from tests.conftest import manager_cfg
from tests.trajectories import assert_same_records, run_alone, run_in_manager


def hybrid_actions(steps: int, env_num: int, seed: int) -> list[list[dict]]:
    space = GymHybridEnv().action_space
    space.seed(seed)
    return [[space.sample() for _ in range(env_num)] for _ in range(steps)]


def test_hybrid_action_space_is_di_engines_dict():
    env = GymHybridEnv()
    space = env.action_space
    assert isinstance(space, gym.spaces.Dict) and list(space) == ["args", "mask", "type"]
    assert space["type"] == gym.spaces.Discrete(3)
    assert space["args"].shape == (2,) and space["args"].dtype == np.float32
    assert space["mask"].dtype == np.int64
    env.seed(0)
    env.reset()
    timestep = env.step({"type": 0, "mask": np.array([1, 0]), "args": np.array([1.0, 0.0], np.float32)})
    assert timestep.obs[2] == pytest.approx(0.2)  # accelerated to full speed
    assert timestep.info["action_type"] == 0


def test_episodes_end_at_the_target_off_the_field_or_at_the_time_limit():
    env = MovingEnv()
    env.reset(seed=0)
    env.target = env.position + np.array([0.15, 0.0])
    env.heading, env.speed = 0.0, 0.0
    _, reward, terminated, truncated, _ = env.step((0, np.array([1.0, 0.0])))  # 0.2 along x: within 0.1 of it
    assert (reward, terminated, truncated) == (1.0, True, False)
    env.reset(seed=1)
    for _ in range(200):
        *_, terminated, truncated, _ = env.step((2, np.zeros(2)))  # standing still
    assert truncated and not terminated


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess", "base_v2", "subprocess_v2"])
def test_hybrid_actions_in_every_manager_as_on_its_own(manager_type):
    env_fns = [GymHybridEnv] * 2
    actions = hybrid_actions(60, 2, seed=0)
    expected = run_alone(env_fns, 5, actions)
    with create_env_manager(manager_cfg(manager_type), env_fns) as manager:
        assert_same_records(run_in_manager(manager, 5, actions), expected)
    assert sum(record[0] == "reset" for rows in expected for record in rows) > 2  # episodes ended and restarted


def test_checker_passes_clean():
    report = check_env(GymHybridEnv, episodes=2, max_steps=500)
    assert report.findings == [], report.format()

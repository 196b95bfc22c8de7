"""MuJoCo through DingEnvWrapper: float32, act_scale, truncation at the time limit."""

import numpy as np
import pytest

pytest.importorskip("mujoco", reason="the mujoco extra (make test installs it)")

from ding_env import DingEnvWrapper  # noqa: E402
from ding_env.wrappers.family import MUJOCO, family_of_env_id  # noqa: E402
from dizoo.mujoco.envs import MujocoEnv  # noqa: E402


def test_family_and_float32():
    assert family_of_env_id("HalfCheetah-v5") == MUJOCO
    env = MujocoEnv({"env_id": "HalfCheetah-v5"})
    obs = env.reset()
    assert obs.dtype == np.float32 and env.observation_space.dtype == np.float32
    assert env.action_space.low.min() == -1.0 and env.action_space.high.max() == 1.0


def test_time_limit_is_truncation_at_1000_steps():
    env = MujocoEnv({"env_id": "HalfCheetah-v5"})
    env.seed(0)
    env.reset()
    steps = 0
    while True:
        timestep = env.step(env.random_action())
        steps += 1
        if timestep.done:
            break
    assert steps == 1000 and timestep.truncated and timestep.info["truncated"] is True
    assert isinstance(timestep.info["eval_episode_return"], float)


def test_act_scale_maps_to_bounds():
    env = DingEnvWrapper(cfg={"env_id": "Hopper-v5", "act_scale": True, "env_wrapper": "mujoco_default"})
    env.reset()
    raw = env.env.action_space
    action = env._convert_action(np.ones(raw.shape, dtype=np.float32))
    np.testing.assert_allclose(action, raw.high)

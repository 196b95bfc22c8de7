"""MuJoCo through DingEnvWrapper: float32, act_scale, truncation at the time limit."""

import numpy as np
import pytest

pytest.importorskip("mujoco", reason="the mujoco extra (make test installs it)")

from ding_env import DingEnvWrapper  # noqa: E402
from ding_env.env_wrappers.family import MUJOCO, family_of_env_id  # noqa: E402
from ding_env.errors import ConfigError  # noqa: E402
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


# The env section of DI-engine's compiled halfcheetah_sac_config, with its MuJoCo keys switched on.
DI_ENGINE_HALFCHEETAH = dict(
    env_id="HalfCheetah-v5",
    collector_env_num=1,
    evaluator_env_num=8,
    n_evaluator_episode=8,
    stop_value=12000,
    action_clip=True,
    delay_reward_step=3,
    norm_obs=dict(use_norm=True),
    norm_reward=dict(use_norm=True, reward_discount=0.9),
    save_replay_gif=False,
    replay_path_gif=None,
    replay_path=None,
    action_bins_per_branch=None,
    cfg_type="MujocoEnvDict",
)


def test_di_engine_mujoco_keys_mean_what_they_mean_there():
    env = MujocoEnv(DI_ENGINE_HALFCHEETAH)
    plain = MujocoEnv({"env_id": "HalfCheetah-v5"})
    for each in (env, plain):
        each.seed(0, dynamic_seed=False)
        each.reset()
    rewards, plain_return = [], 0.0
    while True:
        timestep = env.step(np.full(6, 5.0, np.float32))  # action_clip: 5 acts as 1
        plain_return += float(plain.step(np.ones(6, np.float32)).reward[0])
        rewards.append(float(timestep.reward[0]))
        if timestep.done:
            break
    assert len(rewards) == 1000 and all(r == 0.0 for i, r in enumerate(rewards) if i % 3 != 2 and i < 999)
    # The delayed, normalised rewards are the learner's; the evaluator's return is the raw game's.
    assert timestep.info["eval_episode_return"] == pytest.approx(plain_return, rel=1e-6)
    chain = str(env.env)  # Gymnasium shows a chain as <Outer<Inner<...>>>
    assert "DelayRewardWrapper<RewardNormWrapper<ObsNormWrapper<EvalEpisodeReturnWrapper" in chain, chain
    discrete = MujocoEnv({"env_id": "HalfCheetah-v5", "action_bins_per_branch": 5})
    assert discrete.action_space.nvec.tolist() == [5] * 6
    with pytest.raises(ConfigError, match="save_replay_gif=True"):
        MujocoEnv(dict(DI_ENGINE_HALFCHEETAH, save_replay_gif=True))

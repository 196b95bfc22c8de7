"""PettingZooEnv and the 'petting_zoo' env type: DI-engine's multi-agent convention, in every manager."""

from __future__ import annotations

import subprocess
import sys
from functools import partial

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the pettingzoo extra is not installed (make test installs it)")
pytest.importorskip("mpe2", reason="the pettingzoo extra is not installed (make test installs it)")

from mpe2 import simple_spread_v3  # noqa: E402

from ding_env import DingEnvWrapper, PettingZooEnv, create_env_manager  # noqa: E402
from ding_env.errors import ConfigError  # noqa: E402
from dizoo.petting_zoo.config.ptz_simple_spread_config import main_config  # noqa: E402
from dizoo.petting_zoo.envs import SimpleSpreadEnv  # noqa: E402
from tests.conftest import manager_cfg  # noqa: E402
from tests.trajectories import assert_same_records, run_alone, run_in_manager  # noqa: E402
from tests.wrappers.pettingzoo_envs import MixedSpacesEnv, RelayEnv  # noqa: E402

SPREAD_CFG = {"n_agent": 3, "n_landmark": 3, "max_cycles": 6}


def test_simple_spread_observation_action_and_team_reward():
    env = SimpleSpreadEnv(SPREAD_CFG)
    space = env.observation_space
    assert space["agent_state"].shape == (3, 18) and space["global_state"].shape == (30,)  # DI-engine's
    assert space["action_mask"].shape == (3, 5)
    assert env.action_space == gym.spaces.MultiDiscrete([5, 5, 5])
    assert env.reward_space.shape == (1,)  # DI-engine's team reward
    env.seed(0, dynamic_seed=False)
    obs = env.reset()
    assert space.contains(obs) and list(obs) == list(space)
    np.testing.assert_array_equal(obs["action_mask"], np.ones((3, 5), np.float32))
    total = 0.0
    for step in range(6):
        timestep = env.step(env.random_action())
        assert timestep.reward.shape == (1,) and timestep.reward.dtype == np.float32
        assert space.contains(timestep.obs)
        total += float(timestep.reward[0])
        assert timestep.done == (step == 5)
    assert timestep.truncated  # MPE's max_cycles is a time limit
    assert timestep.info["eval_episode_return"] == pytest.approx(total)
    # static seed: the same start again
    np.testing.assert_array_equal(env.reset()["agent_state"], obs["agent_state"])
    env.close()


def test_simple_spreads_team_reward_is_di_engines_sum_of_shared_reward_and_own_collisions():
    # It was mpe2's reward per agent, 0.5 * shared + 0.5 * own collisions (local_ratio): half DI-engine's
    # sum over agents of shared + own. Per agent (team_reward=False), the same states give exactly that half.
    team, per_agent = SimpleSpreadEnv(SPREAD_CFG), SimpleSpreadEnv(dict(SPREAD_CFG, team_reward=False))
    assert per_agent.reward_space.shape == (3,)
    actions = np.random.default_rng(0).integers(0, 5, (6, 3))
    for env in (team, per_agent):
        env.seed(0, dynamic_seed=False)
        env.reset()
    for action in actions:
        team_step, agent_step = team.step(action), per_agent.step(action)
        np.testing.assert_array_equal(team_step.obs["agent_state"], agent_step.obs["agent_state"])
        assert team_step.reward[0] == pytest.approx(2 * float(agent_step.reward.astype(np.float64).sum()), rel=1e-6)
    assert team_step.info["eval_episode_return"] == pytest.approx(2 * agent_step.info["eval_episode_return"])


def test_simple_spread_has_di_engines_agent_alone_states():
    # DI-engine's CollaQ configs read agent_alone_state and agent_alone_padding_state: a KeyError here.
    env = SimpleSpreadEnv(SPREAD_CFG)
    env.seed(0)
    obs = env.reset()
    agent_state = obs["agent_state"]  # own velocity and position, 3 landmarks, 2 other agents, 2 messages
    assert env.observation_space["agent_alone_state"].shape == obs["agent_alone_state"].shape == (3, 14)
    np.testing.assert_array_equal(obs["agent_alone_state"], np.delete(agent_state, np.s_[10:14], axis=1))
    padded = agent_state.copy()
    padded[:, 10:14] = 0  # the other agents' relative positions
    np.testing.assert_array_equal(obs["agent_alone_padding_state"], padded)
    assert env.observation_space.contains(obs)


def test_di_engine_observation_options_fit_its_model_shapes():
    n_agent = n_landmark = 3
    # ptz_simple_spread_mappo_config's model: agent_obs_shape and global_obs_shape, as DI-engine computes them
    agent_obs_shape = 2 + 2 + n_landmark * 2 + (n_agent - 1) * 2 + (n_agent - 1) * 2
    global_obs_shape = agent_obs_shape + n_agent * (2 + 2) + n_landmark * 2 + n_agent * (n_agent - 1) * 2
    env = SimpleSpreadEnv(dict(SPREAD_CFG, agent_specific_global_state=True))
    env.seed(0)
    obs = env.reset()
    assert obs["global_state"].shape == env.observation_space["global_state"].shape == (n_agent, global_obs_shape)
    np.testing.assert_array_equal(obs["global_state"][:, :agent_obs_shape], obs["agent_state"])
    velocities = obs["agent_state"][:, 0:2].reshape(-1)  # every agent's velocity is in the global state
    np.testing.assert_array_equal(obs["global_state"][1, agent_obs_shape + 12 : agent_obs_shape + 18], velocities)
    only = SimpleSpreadEnv(dict(SPREAD_CFG, agent_obs_only=True))
    only.seed(0)
    assert only.observation_space.shape == (n_agent, agent_obs_shape)
    np.testing.assert_array_equal(only.reset(), obs["agent_state"])


def test_continuous_actions_are_one_box_row_per_agent():
    env = SimpleSpreadEnv(dict(SPREAD_CFG, continuous_actions=True, max_cycles=3))
    assert env.action_space == gym.spaces.Box(0.0, 1.0, (3, 5), np.float32)
    env.seed(0)
    env.reset()
    timesteps = [env.step(env.random_action()) for _ in range(3)]
    assert [timestep.done for timestep in timesteps] == [False, False, True]
    assert timesteps[-1].reward.shape == (1,) and timesteps[-1].obs["action_mask"].shape == (3, 5)


def test_agents_leaving_early_keep_their_rows_and_the_episode_ends_when_all_are_done():
    env = PettingZooEnv(RelayEnv())
    assert env.agents == ["runner", "walker"]
    env.seed(3)
    obs = env.reset()
    offset = obs["agent_state"][0, 0]
    np.testing.assert_array_equal(obs["action_mask"], [[1, 1, 0], [1, 1, 0]])  # the env's own masks
    np.testing.assert_array_equal(obs["global_state"], [0.0])  # the env's state()
    first = env.step(np.array([1, 2]))
    np.testing.assert_array_equal(first.reward, [2.0, 3.0])
    second = env.step(np.array([0, 0]))  # the runner terminates here
    assert not second.done
    third = env.step(np.array([2, 1]))  # the runner's action is ignored: it has left
    np.testing.assert_array_equal(third.reward, [0.0, 2.0])
    np.testing.assert_array_equal(third.obs["agent_state"][0], [2 + offset, 0])  # its last observation
    np.testing.assert_array_equal(third.obs["action_mask"][0], [0, 0, 0])  # and no action allowed
    last = env.step(np.array([0, 0]))  # the walker is cut: every agent is done
    assert last.done and not last.truncated  # the runner's end was a termination
    assert last.info["eval_episode_return"] == pytest.approx(2 + 3 + 1 + 1 + 2 + 1)
    assert PettingZooEnv(RelayEnv(walker_limit=1)).reward_space.shape == (2,)


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess", "base_v2", "subprocess_v2"])
def test_simple_spread_runs_in_every_manager_as_on_its_own(manager_type):
    env_fns = [partial(SimpleSpreadEnv, SPREAD_CFG)] * 2
    actions = list(np.random.default_rng(0).integers(0, 5, (14, 2, 3)))  # two episodes of 6 steps, and some
    expected = run_alone(env_fns, 10, actions)
    with create_env_manager(manager_cfg(manager_type), env_fns) as manager:
        assert_same_records(run_in_manager(manager, 10, actions), expected)


def test_ding_env_wrapper_points_pettingzoo_envs_to_pettingzoo_env():
    for env in (simple_spread_v3.parallel_env(), simple_spread_v3.env()):
        with pytest.raises(TypeError, match=r"PettingZoo multi-agent env: wrap it with ding_env.PettingZooEnv"):
            DingEnvWrapper(env)


def test_bad_inputs_are_named():
    with pytest.raises(TypeError, match="got the AEC env .*aec_to_parallel"):
        PettingZooEnv(simple_spread_v3.env())
    with pytest.raises(TypeError, match="takes a PettingZoo parallel env, got CartPoleEnv"):
        PettingZooEnv(gym.make("CartPole-v1").unwrapped)
    with pytest.raises(TypeError, match="runner has Discrete\\(3\\), walker has Discrete\\(4\\)"):
        PettingZooEnv(MixedSpacesEnv()).action_space  # noqa: B018
    with pytest.raises(ConfigError, match="env_family/env_id expected 'mpe'"):
        SimpleSpreadEnv({"env_id": "pistonball_v6"})
    with pytest.raises(ConfigError, match="n_landmark expected 3, got 4"):
        SimpleSpreadEnv({"n_landmark": 4})
    with pytest.raises(ValueError, match=r"one action per agent \(3\)"):
        env = SimpleSpreadEnv(SPREAD_CFG)
        env.reset()
        env.step(np.zeros(2, np.int64))


def test_the_config_builds_collector_and_evaluator_envs():
    from ding_env.run_config import build_managers, load_run_config

    collector, evaluator = build_managers(load_run_config("dizoo/petting_zoo/config/ptz_simple_spread_config.py", []))
    with collector, evaluator:
        collector.launch()
        assert collector.env_num == main_config.env.collector_env_num
        ready = collector.ready_obs_batch
        batch = collector.step_batch(ready.env_id, np.zeros((len(ready.env_id), 3), np.int64))
        assert batch.reward.shape == (len(ready.env_id), 1)


def test_ding_env_check_passes_on_the_simple_spread_config():
    config = "dizoo/petting_zoo/config/ptz_simple_spread_config.py"
    completed = subprocess.run(
        [sys.executable, "-m", "ding_env", "check", config], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert "passed:" in completed.stdout and " 0 errors" in completed.stdout


@pytest.mark.parametrize("manager_type", ["base", "subprocess"])
def test_act_scale_maps_continuous_actions_from_minus_one_to_one_as_di_engine(manager_type):
    # DI-engine's ptz_simple_spread_atoc config sets act_scale=True; the key was refused as unknown.
    def trajectory(cfg, action):
        with create_env_manager({"type": manager_type}, [partial(SimpleSpreadEnv, cfg)]) as manager:
            manager.seed(0)
            manager.launch()
            assert manager.action_space == gym.spaces.Box(-1.0 if cfg.get("act_scale") else 0.0, 1.0, (3, 5))
            return [manager.step({0: np.full((3, 5), action, np.float32)})[0].obs["agent_state"] for _ in range(3)]

    scaled = trajectory(dict(continuous_actions=True, act_scale=True), -0.5)
    raw = trajectory(dict(continuous_actions=True), 0.25)
    assert all(np.array_equal(a, b) for a, b in zip(scaled, raw, strict=True))
    with pytest.raises(ConfigError, match="act_scale=True maps continuous actions; set continuous_actions=True"):
        SimpleSpreadEnv(dict(act_scale=True))

"""DI-engine's configs name their env modules by DI-engine's paths: those of the built-in types import and run."""

from __future__ import annotations

import pytest

from ding_env.errors import ConfigError
from ding_env.run import run_job
from ding_env.run_config import load_run_config

# The env sections of DI-engine 0.5.3's ptz_simple_spread_mappo_config.py and gym_hybrid_pdqn_config.py, as they are.
DI_ENGINE_CONFIGS = {
    "petting_zoo": """
main_config = dict(
    exp_name='ptz_simple_spread_mappo_seed0',
    env=dict(
        env_family='mpe', env_id='simple_spread_v2', n_agent=3, n_landmark=3, max_cycles=25, agent_obs_only=False,
        agent_specific_global_state=True, continuous_actions=False, collector_env_num=2, evaluator_env_num=1,
        n_evaluator_episode=1, stop_value=0,
    ),
)
create_config = dict(
    env=dict(import_names=['dizoo.petting_zoo.envs.petting_zoo_simple_spread_env'], type='petting_zoo'),
    env_manager=dict(type='subprocess'),
)
""",
    "gym_hybrid": """
main_config = dict(
    exp_name='gym_hybrid_pdqn_seed0',
    env=dict(collector_env_num=2, evaluator_env_num=1, act_scale=True, env_id='Moving-v0', n_evaluator_episode=1,
             stop_value=1.8),
)
create_config = dict(
    env=dict(type='gym_hybrid', import_names=['dizoo.gym_hybrid.envs.gym_hybrid_env']),
    env_manager=dict(type='subprocess'),
)
""",
}


@pytest.mark.parametrize("env_type", sorted(DI_ENGINE_CONFIGS))
def test_di_engine_configs_of_built_in_types_run_as_they_are(tmp_path, env_type):
    path = tmp_path / f"{env_type}_config.py"
    path.write_text(DI_ENGINE_CONFIGS[env_type])
    summary = run_job(load_run_config(str(path), []), steps=60, eval_episodes=1, manager_type="base")
    assert summary.collect_steps >= 60 and len(summary.evaluation.returns) == 1


def test_gym_hybrids_envs_this_type_lacks_are_named():
    from dizoo.gym_hybrid.envs.gym_hybrid_env import GymHybridEnv

    with pytest.raises(ConfigError, match="env_id 'Sliding-v0' is one of Gym-Hybrid's envs this type does not have"):
        GymHybridEnv({"env_id": "Sliding-v0"})

"""MPE simple_spread with 3 agents: collector and evaluator envs, in DI-engine's main_config / create_config shape."""

from dizoo.config_maker import make_env_config

# The stop value is the team return: every agent's rewards summed over the 25 steps.
main_config, create_config = make_env_config(
    "petting_zoo",
    "dizoo.petting_zoo.envs",
    stop_value=0,
    collector_env_num=4,
    evaluator_env_num=2,
    n_evaluator_episode=4,
    # DI-engine's game id (mpe2's simple_spread_v3 runs it), 3 agents and 3 landmarks.
    env_id="simple_spread_v2",
    n_agent=3,
    n_landmark=3,
)

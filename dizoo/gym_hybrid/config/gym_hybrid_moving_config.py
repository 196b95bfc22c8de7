"""The hybrid-action moving env: collector and evaluator envs, in DI-engine's main_config / create_config shape."""

from dizoo.config_maker import make_env_config

# Reaching the target scores 1 plus the distance covered; leaving the field -1 plus it.
main_config, create_config = make_env_config(
    "gym_hybrid",
    "dizoo.gym_hybrid.envs",
    stop_value=1.5,
    collector_env_num=4,
    evaluator_env_num=2,
    n_evaluator_episode=4,
)

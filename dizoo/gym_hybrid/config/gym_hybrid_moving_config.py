"""The hybrid-action moving env: collector and evaluator envs, in DI-engine's main_config / create_config shape."""

from dizoo.config_maker import make_env_config

# An episode's return is the distance covered, less 0.001 a step, plus 1 for stopping on the target
# (-1 for leaving the field or running past 200 steps): DI-engine's configs stop at 1.8.
main_config, create_config = make_env_config(
    "gym_hybrid",
    "dizoo.gym_hybrid.envs",
    stop_value=1.8,
    collector_env_num=4,
    evaluator_env_num=2,
    n_evaluator_episode=4,
)

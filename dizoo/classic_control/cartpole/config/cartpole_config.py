"""CartPole-v1: collector and evaluator envs, in DI-engine's main_config / create_config shape."""

from dizoo.classic_control.classic_config import make_classic_control_config

main_config, create_config = make_classic_control_config("cartpole", stop_value=195)

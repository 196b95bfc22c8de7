"""MiniGrid-DoorKey-5x5-v0 (the minigrid type's default id): collector and evaluator envs, DI-engine-shaped."""

from dizoo.classic_control.classic_config import make_classic_control_config

main_config, create_config = make_classic_control_config("minigrid", stop_value=0.96, import_name="dizoo.minigrid.envs")
# DI-engine's key: an episode ends (truncated) after this many steps.
main_config.env.max_step = 100

"""HalfCheetah-v5: collector and evaluator envs, in DI-engine's main_config / create_config shape."""

from dizoo.mujoco.config.mujoco_config import make_mujoco_config

main_config, create_config = make_mujoco_config("HalfCheetah-v5", stop_value=11000)

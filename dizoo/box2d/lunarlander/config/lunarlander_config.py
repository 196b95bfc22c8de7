"""LunarLander-v3 (discrete actions): collector and evaluator envs, in DI-engine's main_config / create_config shape."""

from dizoo.classic_control.classic_config import make_classic_control_config

main_config, create_config = make_classic_control_config(
    "lunarlander", stop_value=200, import_name="dizoo.box2d.lunarlander.envs"
)

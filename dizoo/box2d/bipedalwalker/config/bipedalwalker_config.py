"""BipedalWalker-v3: collector and evaluator envs, in DI-engine's main_config / create_config shape."""

from dizoo.classic_control.classic_config import make_classic_control_config

main_config, create_config = make_classic_control_config(
    "bipedalwalker", stop_value=300, import_name="dizoo.box2d.bipedalwalker.envs"
)

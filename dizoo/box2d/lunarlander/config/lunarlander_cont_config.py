"""LunarLanderContinuous-v3 (two continuous engines): the lunarlander env type with its continuous id."""

from dizoo.classic_control.classic_config import make_classic_control_config

main_config, create_config = make_classic_control_config(
    "lunarlander", stop_value=200, import_name="dizoo.box2d.lunarlander.envs"
)
# The continuous game under its own id (the same as make_kwargs=dict(continuous=True) on LunarLander-v3).
main_config.env.env_id = "LunarLanderContinuous-v3"
main_config.exp_name = "lunarlander_cont"

"""HalfCheetah-v5: ``ding-env run configs/halfcheetah.py``."""

from dizoo.mujoco.config.mujoco_config import make_mujoco_config

# Every key is documented in dizoo/mujoco/config/mujoco_config.py; override with --set.
main_config, create_config = make_mujoco_config("HalfCheetah-v5", stop_value=11000)

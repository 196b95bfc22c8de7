"""Ready-made ding_env envs and configs, one folder per family and env."""

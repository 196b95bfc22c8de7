"""Imported through a DI-engine wrapper spec's ``import_names``: registers a wrapper as a user module would."""

import gymnasium as gym

from ding_env.env_wrappers import ENV_WRAPPER_REGISTRY


@ENV_WRAPPER_REGISTRY.register("double_reward", force_overwrite=True)
class DoubleRewardWrapper(gym.RewardWrapper):
    def reward(self, reward):
        return 2 * reward

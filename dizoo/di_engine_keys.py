"""DI-engine's extra env config keys, applied as the wrappers they stand for.

DI-engine's own env classes read these keys from their configs; ours declare the
ones that apply to them (in their class ``config``) and take :class:`DIEngineKeys`
as a base, which wraps their Gymnasium env with :func:`apply_di_engine_keys`, so
DI-engine configs load with their meaning.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from ding_env.env_wrappers import (
    ActionDiscretizeWrapper,
    DelayRewardWrapper,
    EvalEpisodeReturnWrapper,
    ObsNormWrapper,
    ObsPlusPrevActRewWrapper,
    RewardNormWrapper,
)

# DI-engine's discrete Pendulum (continuous=False) has this many actions.
DISCRETE_ACTIONS = 11


def apply_di_engine_keys(env: gym.Env, cfg: Any) -> gym.Env:
    """Wrap ``env`` as the DI-engine keys in ``cfg`` ask, innermost first.

    * ``norm_obs=dict(use_norm=True)``: observations normalised by a running mean and variance;
    * ``norm_reward=dict(use_norm=True, reward_discount=0.99)``: rewards scaled by the std of the
      discounted return;
    * ``delay_reward_step=N`` (N > 1): rewards summed over N steps and paid at once;
    * ``action_bins_per_branch=N``, or ``continuous=False`` (N = 11): a grid of N actions per
      action dimension, spread evenly over its bounds;
    * ``obs_plus_prev_action_reward=True``: observations ``{'obs', 'prev_action', 'prev_reward_extrinsic'}``.

    When rewards are normalised or delayed, the raw game return is summed before that, so the
    evaluation return stays the game's.
    """
    norm_reward = _uses(cfg.get("norm_reward"))
    delay = cfg.get("delay_reward_step") or 0
    if norm_reward or delay > 1:
        env = EvalEpisodeReturnWrapper(env)
    if _uses(cfg.get("norm_obs")):
        env = ObsNormWrapper(env)
    if norm_reward:
        env = RewardNormWrapper(env, reward_discount=cfg.norm_reward.get("reward_discount", 0.99))
    if delay > 1:
        env = DelayRewardWrapper(env, delay)
    bins = cfg.get("action_bins_per_branch") or (DISCRETE_ACTIONS if cfg.get("continuous") is False else None)
    if bins:
        env = ActionDiscretizeWrapper(env, num_actions=bins)
    if cfg.get("obs_plus_prev_action_reward"):
        env = ObsPlusPrevActRewWrapper(env)
    return env


class DIEngineKeys:
    """Mixed in before ``DingEnvWrapper``: the env it builds is wrapped as the DI-engine keys of its config ask."""

    def _build_env(self) -> gym.Env:
        return apply_di_engine_keys(super()._build_env(), self._cfg)


def _uses(norm: Any) -> bool:
    return bool(norm) and bool(norm.get("use_norm", False))

"""Gymnasium's MuJoCo envs as env type 'mujoco': float32 observations, actions in [-1, 1].

The 1000-step time limit is reported as truncation (``info['truncated']``),
so learners bootstrap there. DI-engine's MuJoCo config keys (``action_clip``,
``delay_reward_step``, ``norm_obs``, ``norm_reward``, ``action_bins_per_branch``)
mean what they mean there, so its configs load as they are.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ding_env import ENV_REGISTRY, DingEnvWrapper
from ding_env.errors import ConfigError


@ENV_REGISTRY.register("mujoco")
class MujocoEnv(DingEnvWrapper):
    """A MuJoCo env; ``env_id`` picks it (``'HalfCheetah-v5'`` by default)."""

    config: ClassVar[dict] = dict(
        DingEnvWrapper.config,
        env_id="HalfCheetah-v5",
        env_wrapper="mujoco_default",
        act_scale=True,
        # DI-engine's keys. Rewards summed over this many steps are paid at once (0 or 1: every step).
        delay_reward_step=0,
        # dict(use_norm=True): observations normalised by a running mean and variance.
        norm_obs=None,
        # dict(use_norm=True, reward_discount=0.99): rewards scaled by the discounted return's std.
        norm_reward=None,
        # N: actions are one index in range(N) per action dimension, spread evenly over its bounds (BDQ).
        action_bins_per_branch=None,
        # DI-engine's GIF replays are not made here: replay_path (or enable_save_replay) records MP4s.
        save_replay_gif=False,
        replay_path_gif=None,
    )

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg=cfg)
        if self._cfg.save_replay_gif:
            raise ConfigError(
                f"{self!r}: save_replay_gif=True (GIF replays) is not supported; "
                "set replay_path or call enable_save_replay(path) to record MP4s"
            )
        specs = di_engine_wrapper_specs(self._cfg)
        if specs and self._cfg.env_wrapper == "mujoco_default":
            self._cfg.env_wrapper = specs


def di_engine_wrapper_specs(cfg: Any) -> list[dict]:
    """The wrappers DI-engine's MuJoCo env applies for ``cfg``, as wrapper specs, innermost first.

    When rewards are normalised or delayed, the raw game return is summed before that.
    """
    specs = []
    if _uses(cfg.norm_obs):
        specs.append(dict(name="obs_norm"))
    if _uses(cfg.norm_reward):
        discount = cfg.norm_reward.get("reward_discount", 0.99)
        specs.append(dict(name="reward_norm", kwargs=dict(reward_discount=discount)))
    if cfg.delay_reward_step and cfg.delay_reward_step > 1:
        specs.append(dict(name="delay_reward", kwargs=dict(delay_reward_step=cfg.delay_reward_step)))
    if cfg.action_bins_per_branch:
        specs.append(dict(name="action_discretize", kwargs=dict(num_actions=cfg.action_bins_per_branch)))
    if any(spec["name"] in ("reward_norm", "delay_reward") for spec in specs):
        specs.insert(0, dict(name="eval_episode_return"))
    return specs


def _uses(norm: Any) -> bool:
    return bool(norm) and bool(norm.get("use_norm", False))

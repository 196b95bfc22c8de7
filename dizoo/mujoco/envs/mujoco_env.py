"""Gymnasium's MuJoCo envs as env type 'mujoco': float32 observations, actions in [-1, 1].

The 1000-step time limit is reported as truncation (``info['truncated']``),
so learners bootstrap there. DI-engine's MuJoCo config keys mean what they
mean there (see ``dizoo.di_engine_keys``), so its configs load as they are.
"""

from __future__ import annotations

from typing import ClassVar

from ding_env import ENV_REGISTRY, DingEnvWrapper
from ding_env.errors import ConfigError
from dizoo.di_engine_keys import DIEngineKeys


@ENV_REGISTRY.register("mujoco")
class MujocoEnv(DIEngineKeys, DingEnvWrapper):
    """A MuJoCo env; ``env_id`` picks it (``'HalfCheetah-v5'`` by default)."""

    config: ClassVar[dict] = dict(
        DingEnvWrapper.config,
        env_id="HalfCheetah-v5",
        env_wrapper="mujoco_default",
        act_scale=True,
        # DI-engine's keys (see dizoo.di_engine_keys); action_clip is DingEnvWrapper's own.
        delay_reward_step=0,
        norm_obs=None,
        norm_reward=None,
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

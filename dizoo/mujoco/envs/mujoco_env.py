"""Gymnasium's MuJoCo envs as env type 'mujoco': float32 observations, actions in [-1, 1].

The 1000-step time limit is reported as truncation (``info['truncated']``),
so learners bootstrap there.
"""

from __future__ import annotations

from typing import ClassVar

from ding_env import ENV_REGISTRY, DingEnvWrapper


@ENV_REGISTRY.register("mujoco")
class MujocoEnv(DingEnvWrapper):
    """A MuJoCo env; ``env_id`` picks it (``'HalfCheetah-v5'`` by default)."""

    config: ClassVar[dict] = dict(
        DingEnvWrapper.config, env_id="HalfCheetah-v5", env_wrapper="mujoco_default", act_scale=True
    )

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg=cfg)

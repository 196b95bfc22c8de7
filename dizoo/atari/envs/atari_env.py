"""ALE games as env type 'atari': ``DingEnvWrapper`` with the Atari preset.

Collector envs (``is_train=True``) end an episode per life lost and clip
rewards to their sign; evaluator envs play whole games with raw rewards. Both
observe ``(4, 84, 84)`` ``uint8`` frame stacks; ``info['eval_episode_return']``
is always the raw game score.
"""

from __future__ import annotations

from typing import ClassVar

from ding_env import ENV_REGISTRY, DingEnvWrapper
from dizoo.di_engine_keys import DIEngineKeys


@ENV_REGISTRY.register("atari")
class AtariEnv(DIEngineKeys, DingEnvWrapper):
    """An ALE game; ``env_id`` picks it (``'ALE/Pong-v5'`` by default)."""

    config: ClassVar[dict] = dict(
        DingEnvWrapper.config,
        env_id="ALE/Pong-v5",
        env_wrapper="atari_default",
        # DI-engine's key (see dizoo.di_engine_keys), for R2D2-style learners.
        obs_plus_prev_action_reward=False,
    )

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg=cfg)

"""MPE's simple_spread (from the mpe2 package) as env type 'petting_zoo', with DI-engine's config keys.

``N`` agents learn to cover ``N`` landmarks while avoiding each other. Observations
follow DI-engine's multi-agent convention (``agent_state``, ``global_state``,
``action_mask``; see ``ding_env.wrappers.multi_agent``), the reward has one entry per
agent, and the episode is truncated after ``max_cycles`` steps.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

from ding_env import ENV_REGISTRY, PettingZooEnv
from ding_env.errors import ConfigError

# DI-engine's configs name the game by its PettingZoo id; mpe2 ships its current version.
SIMPLE_SPREAD_IDS = ("simple_spread_v2", "simple_spread_v3")


@ENV_REGISTRY.register("petting_zoo")
class SimpleSpreadEnv(PettingZooEnv):
    """MPE simple_spread behind the ``BaseEnv`` contract, configured with DI-engine's ``petting_zoo`` keys."""

    config: ClassVar[dict] = dict(
        # DI-engine's game family and id: MPE's simple_spread.
        env_family="mpe",
        env_id="simple_spread_v2",
        # Agents (and as many landmarks: simple_spread has one per agent).
        n_agent=3,
        n_landmark=3,
        # Steps per episode; the last one is reported as truncated.
        max_cycles=25,
        # Box(0, 1, (5,)) actions per agent instead of Discrete(5).
        continuous_actions=False,
        # Weight of each agent's own collision penalty against the shared reward.
        local_ratio=0.5,
    )

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg=cfg)
        cfg = self._cfg
        if cfg.env_family != "mpe" or cfg.env_id not in SIMPLE_SPREAD_IDS:
            raise ConfigError(
                f"petting_zoo env: env_family/env_id expected 'mpe' and one of {SIMPLE_SPREAD_IDS}, "
                f"got {cfg.env_family!r}/{cfg.env_id!r}"
            )
        if cfg.n_landmark != cfg.n_agent:
            raise ConfigError(
                f"petting_zoo env: simple_spread has one landmark per agent; n_landmark expected {cfg.n_agent}, "
                f"got {cfg.n_landmark}"
            )

    def _build_env(self) -> Any:
        try:
            simple_spread = importlib.import_module("mpe2.simple_spread_v3")
        except ImportError as error:
            raise ImportError(
                f"env type 'petting_zoo' needs mpe2 ({error}); install it with: pip install 'ding-env[pettingzoo]'"
            ) from error
        cfg = self._cfg
        return simple_spread.parallel_env(
            N=cfg.n_agent,
            max_cycles=cfg.max_cycles,
            continuous_actions=cfg.continuous_actions,
            local_ratio=cfg.local_ratio,
        )

"""One ``DingEnvWrapper`` subclass per classic-control env, fixed to its Gymnasium id."""

from __future__ import annotations

from typing import Any, ClassVar

from ding_env import DingEnvWrapper
from dizoo.di_engine_keys import DIEngineKeys


class GymIdEnv(DIEngineKeys, DingEnvWrapper):
    """A ``DingEnvWrapper`` whose ``env_id`` defaults to the class's ``gym_id``.

    Subclasses set ``gym_id`` and register themselves; their config accepts
    every ``DingEnvWrapper`` key, DI-engine's ``obs_plus_prev_action_reward``, and
    the DI-engine keys in the subclass's ``di_engine_keys`` (see ``dizoo.di_engine_keys``).
    """

    gym_id: ClassVar[str] = ""
    di_engine_keys: ClassVar[dict] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.config = dict(
            DingEnvWrapper.config, env_id=cls.gym_id, obs_plus_prev_action_reward=False, **cls.di_engine_keys
        )

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg=cfg)

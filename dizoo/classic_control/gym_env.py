"""One ``DingEnvWrapper`` subclass per classic-control env, fixed to its Gymnasium id."""

from __future__ import annotations

from typing import Any, ClassVar

from ding_env import DingEnvWrapper


class GymIdEnv(DingEnvWrapper):
    """A ``DingEnvWrapper`` whose ``env_id`` defaults to the class's ``gym_id``.

    Subclasses set ``gym_id`` and register themselves; their config accepts
    every ``DingEnvWrapper`` key.
    """

    gym_id: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.config = dict(DingEnvWrapper.config, env_id=cls.gym_id)

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg=cfg)

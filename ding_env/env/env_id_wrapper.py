"""``EnvIdWrapper``: the env of an env section that names a Gymnasium id (``env_id``) and no ``type``.

A registered type is built from its config alone (``env_fn(cfg)``); ``DingEnvWrapper`` takes an env
first. This subclass takes only the config, so a section such as ``dict(env_id='Acrobot-v1',
collector_env_num=8, ...)`` builds ``DingEnvWrapper(cfg=section)`` envs in ``ding-env run``, as
``ding-env check`` and ``ding-env serve`` read the same section.
"""

from __future__ import annotations

from ding_env.env.ding_env_wrapper import DingEnvWrapper


class EnvIdWrapper(DingEnvWrapper):
    """``DingEnvWrapper(cfg=cfg)``: every ``DingEnvWrapper`` key, with ``env_id`` required."""

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg=cfg)

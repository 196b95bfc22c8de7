"""DI-engine's ``ding.envs.env_manager.ding_env_manager``: ``setup_ding_env_manager``."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ding_env.config import check_caller
from ding_env.env_manager.base_env_manager import BaseEnvManagerV2
from ding_env.env_manager.subprocess_env_manager import SubprocessEnvManagerV2


def setup_ding_env_manager(
    env: Any, env_num: int, context: str | None = None, debug: bool = False, caller: str = "collector"
) -> BaseEnvManagerV2 | SubprocessEnvManagerV2:
    """``env_num`` clones of a ``DingEnvWrapper`` in a V2 manager, as DI-engine's task pipelines set them up.

    Args:
        env: A ``DingEnvWrapper``; each env of the manager is ``env.clone(caller)``.
        env_num: How many envs.
        context: The subprocess manager's start method (None: its default).
        debug: ``BaseEnvManagerV2`` (every env in this process) instead of ``SubprocessEnvManagerV2``.
        caller: 'collector' or 'evaluator': the preprocessing of the clones.

    Raises:
        ConfigError: For another caller, or a context that is not a start method.
    """
    check_caller(caller, "setup_ding_env_manager")
    manager_cls: Callable = BaseEnvManagerV2 if debug else SubprocessEnvManagerV2
    cfg = manager_cls.default_config()
    if context is not None and not debug:
        cfg.context = context
    return manager_cls([partial(env.clone, caller) for _ in range(env_num)], cfg)

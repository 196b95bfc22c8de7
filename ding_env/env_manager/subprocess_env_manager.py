"""DI-engine's ``ding.envs.env_manager.subprocess_env_manager`` import path: the subprocess managers."""

from ding_env.env_manager.async_subprocess import AsyncSubprocessEnvManager
from ding_env.env_manager.di_engine_state import EnvState
from ding_env.env_manager.shm_buffer import ShmBuffer
from ding_env.env_manager.subprocess import SyncSubprocessEnvManager
from ding_env.env_manager.treetensor_managers import SubprocessEnvManagerV2

__all__ = ["AsyncSubprocessEnvManager", "EnvState", "ShmBuffer", "SubprocessEnvManagerV2", "SyncSubprocessEnvManager"]

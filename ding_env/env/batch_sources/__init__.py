"""Batch envs from other libraries: EnvPool's pools and Gymnasium's vector envs, as ``BaseBatchEnv``.

Neither library is imported until a batch env is reset (or its spaces are read).
"""

from ding_env.env.batch_sources.envpool_env import EnvPoolBatchEnv
from ding_env.env.batch_sources.gym_vector_env import GymVectorBatchEnv

__all__ = ["EnvPoolBatchEnv", "GymVectorBatchEnv"]

"""check_batch_env finds what breaks the batch-env contract, and passes dizoo's CartPoleBatchEnv."""

import numpy as np

from ding_env.checker import check_batch_env
from ding_env.env.batch_env import BatchStep
from dizoo.classic_control.cartpole.envs import CartPoleBatchEnv

CFG = dict(num_envs=3, max_episode_steps=20)


class SharedBufferBatchEnv(CartPoleBatchEnv):
    """Returns the same observation array every step."""

    def _step(self, actions, env_ids):
        record = super()._step(actions, env_ids)
        buffer = self.__dict__.setdefault("_buffer", np.zeros_like(record.obs))
        buffer[...] = record.obs
        return record._replace(obs=buffer)


class GlobalRngBatchEnv(CartPoleBatchEnv):
    """Starts its episodes from numpy's global generator, whatever the seeds."""

    def _reset(self, env_ids):
        obs = super()._reset(env_ids)
        return obs + np.random.uniform(-0.01, 0.01, obs.shape).astype(np.float32)


class BothFlagsBatchEnv(CartPoleBatchEnv):
    """Reports its time limit as terminated and truncated at once, bypassing BaseBatchEnv._transition."""

    def _step(self, actions, env_ids):
        record = super()._step(actions, env_ids)
        return BatchStep(record.obs, record.reward, record.done, record.done, record.episode_return, record.info)


class UnpicklableBatchEnv(CartPoleBatchEnv):
    def __init__(self, cfg=None):
        super().__init__(cfg)
        self._lock = __import__("threading").Lock()


def errors_of(env_cls):
    report = check_batch_env(env_cls, CFG, steps=60)
    return {finding.check: finding.message for finding in report.errors}


def test_a_conforming_batch_env_has_no_findings():
    report = check_batch_env(CartPoleBatchEnv, CFG, steps=60)
    assert report.findings == [] and len(report.checks) == 5


def test_observations_sharing_memory_between_steps_are_found():
    assert "share memory" in errors_of(SharedBufferBatchEnv)["check_batch_outputs"]


def test_episode_starts_from_the_global_rng_are_found():
    assert "different trajectories" in errors_of(GlobalRngBatchEnv)["check_batch_seeds"]


def test_a_row_both_terminated_and_truncated_is_found():
    assert "both terminated and truncated" in errors_of(BothFlagsBatchEnv)["check_batch_outputs"]


def test_a_batch_env_that_does_not_pickle_before_reset_is_found():
    assert "pickling" in errors_of(UnpicklableBatchEnv)["check_batch_construction"]

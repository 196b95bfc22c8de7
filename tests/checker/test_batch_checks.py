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
    assert report.findings == [] and len(report.checks) == 7
    # Headed "ding-env check ...", a command the CLI refuses for a batch env.
    target = "dizoo.classic_control.cartpole.envs.cartpole_batch_env:CartPoleBatchEnv"
    assert report.format().splitlines()[0] == f"ding_env.checker.check_batch_env({target})"


def test_observations_sharing_memory_between_steps_are_found():
    assert "share memory" in errors_of(SharedBufferBatchEnv)["check_batch_outputs"]


def test_episode_starts_from_the_global_rng_are_found():
    assert "different trajectories" in errors_of(GlobalRngBatchEnv)["check_batch_seeds"]


def test_a_row_both_terminated_and_truncated_is_found():
    assert "both terminated and truncated" in errors_of(BothFlagsBatchEnv)["check_batch_outputs"]


def test_a_batch_env_that_does_not_pickle_before_reset_is_found():
    assert "pickling" in errors_of(UnpicklableBatchEnv)["check_batch_construction"]


class CloseFailsBeforeResetBatchEnv(CartPoleBatchEnv):
    """Its close() fails on an env never reset."""

    def _close(self) -> None:
        if not getattr(self, "_was_reset", False):
            raise AttributeError("'NoneType' object has no attribute 'fill'")

    def _reset(self, env_ids):
        self._was_reset = True
        return super()._reset(env_ids)


def test_a_close_that_fails_before_any_reset_is_the_close_checks_finding_not_constructions():
    # It was reported as "constructing the batch env raised", and every other check was left out.
    report = check_batch_env(CloseFailsBeforeResetBatchEnv, CFG, steps=60)
    errors = {finding.check: finding.message for finding in report.errors}
    assert list(errors) == ["check_batch_close_twice"] and "close()" in errors["check_batch_close_twice"]
    assert len(report.checks) == 7


class TimeLimitAsTerminationBatchEnv(CartPoleBatchEnv):
    """Reports its time limit as a termination."""

    def _step(self, actions, env_ids):
        record = super()._step(actions, env_ids)
        return record._replace(terminated=record.done, truncated=np.zeros_like(record.truncated))


class NeverEndsBatchEnv(CartPoleBatchEnv):
    """Declares max_episode_steps and never ends an episode."""

    def _step(self, actions, env_ids):
        record = super()._step(actions, env_ids)
        never = np.zeros_like(record.terminated)
        return record._replace(terminated=never, truncated=never.copy())


class GlobalSeedInResetBatchEnv(CartPoleBatchEnv):
    def _reset(self, env_ids):
        np.random.seed(123)
        return super()._reset(env_ids)


class ShortObsBatchEnv(CartPoleBatchEnv):
    def _step(self, actions, env_ids):
        record = super()._step(actions, env_ids)
        return record._replace(obs=record.obs[:-1])


def test_what_the_one_env_checker_finds_is_found_in_a_batch_env_too():
    # Each passed every batch check; the one-env checker finds them in a BaseEnv.
    assert (
        "ended at the time limit (20 steps) as a termination"
        in errors_of(TimeLimitAsTerminationBatchEnv)["check_batch_time_limit"]
    )
    assert (
        "ran past the time limit the env declares (max_episode_steps=20)"
        in errors_of(NeverEndsBatchEnv)["check_batch_time_limit"]
    )
    state = np.random.get_state()
    assert "global numpy" in errors_of(GlobalSeedInResetBatchEnv)["check_batch_global_rng"]
    assert all(np.array_equal(a, b) for a, b in zip(np.random.get_state(), state, strict=True))  # yours put back


def test_an_observation_short_of_rows_is_a_finding_not_a_crash():
    # The checker itself raised IndexError reading the rows.
    report = check_batch_env(ShortObsBatchEnv, CFG, steps=60)
    assert report.errors[0].check == "check_batch_outputs"
    # Said of the env's step, where it gave them, not as an exception the env raised at the checker's line.
    message = report.errors[0].message
    assert "its step obs has [2] rows, expected 3" in message and " raised " not in message
    assert f"at {__file__}:" in message and "one row per sub-env" in report.errors[0].hint
    # Reported once: the checks that would only repeat it are skipped, naming it.
    assert report.skipped == dict.fromkeys(
        ["check_batch_seeds", "check_batch_time_limit", "check_batch_global_rng"], "check_batch_outputs"
    )


class Float64ObsBatchEnv(CartPoleBatchEnv):
    def _reset(self, env_ids):
        return super()._reset(env_ids).astype(np.float64)


def test_an_observation_of_another_dtype_is_named_so():
    # It said the row "is not in observation_space", with no word of the dtype the managers' message names.
    message = errors_of(Float64ObsBatchEnv)["check_batch_outputs"]
    assert "reset obs row 0 must have dtype float32, got float64" in message

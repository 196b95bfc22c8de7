"""For each check, an env it catches and the good env it passes."""

import random
from typing import ClassVar

import numpy as np
import pytest

from ding_env.checker import CHECKS, EnvCheckError, check_all, check_array_space, check_env
from ding_env.checker.rollout import CheckContext
from ding_env.testing import EnvContractTests
from tests.checker import broken_envs as gallery
from tests.envs import pendulum_fn

CHECK_BY_NAME = {check.__name__: check for check in CHECKS}

CAUGHT = [
    ("check_spaces", gallery.Float64SpaceEnv, "error", "dtype float64"),
    ("check_reset_obs", gallery.Float64ObsEnv, "error", "must have dtype float32"),
    ("check_reset_obs", gallery.GymResetEnv, "error", "reset() returned (obs, info), Gymnasium's form: a ndarray and"),
    ("check_reset_obs", gallery.OutOfBoundsObsEnv, "error", "outside its Box bounds"),
    ("check_reset_obs", gallery.RaisingResetEnv, "error", "simulator failed to start"),
    ("check_step_output", gallery.ZeroDimRewardEnv, "error", "reward must be an array of shape (1,)"),
    ("check_step_output", gallery.NumpyBoolDoneEnv, "error", "done must be a Python bool, got numpy.bool"),
    (
        "check_step_output",
        gallery.MissingReturnEnv,
        "error",
        "eval_episode_return'] on done must be a Python float, got none (the key is missing)",
    ),
    ("check_step_output", gallery.NeverEndsEnv, "warning", "did not end within"),
    ("check_step_output", gallery.PlainTupleStepEnv, "error", "PlainTupleStepEnv.step() returned a tuple of 4"),
    ("check_obs_memory", gallery.PlainTupleStepEnv, "error", "not a BaseEnvTimestep"),
    ("check_obs_memory", gallery.SharedBufferEnv, "error", "share memory"),
    ("check_obs_memory", gallery.WritesReturnedObsEnv, "error", "changed, in place, an observation"),
    ("check_random_action", gallery.RandomActionNEnv, "error", "outside Discrete(n=2, start=0): [0, 1]"),
    ("check_random_action", gallery.ConstantRandomActionEnv, "error", "the same action 50 times"),
    ("check_static_seed", gallery.UnseededRngEnv, "error", "different"),
    ("check_dynamic_seed", gallery.UnseededRngEnv, "error", "diverged"),
    # A numpy-scalar observation was no part of the trajectories compared: the unseeded draws went unseen.
    ("check_static_seed", gallery.UnseededScalarObsEnv, "error", "different"),
    ("check_dynamic_seed", gallery.UnseededScalarObsEnv, "error", "diverged"),
    ("check_subprocess", gallery.WorkerDependentEnv, "error", "differs between a worker process and this process"),
    ("check_global_rng", gallery.GlobalSeedEnv, "error", "global numpy"),
    ("check_global_rng", gallery.GlobalSeedInResetEnv, "error", "global numpy"),
    ("check_lazy_init", gallery.UnpicklableEnv, "error", "(its attribute '_lock', set before the first reset)"),
    ("check_lazy_init", gallery.EagerEnv, "error", "_init_flag"),
    ("check_time_limit", gallery.TimeLimitAsTerminationEnv, "error", "as a termination"),
    ("check_time_limit", gallery.RarelyAtItsTimeLimitEnv, "error", "as a termination, 2 of them"),
    (
        "check_time_limit",
        gallery.IgnoresItsTimeLimitEnv,
        "error",
        "past the time limit the env declares (max_episode_steps=20)",
    ),
    ("check_step_output", gallery.IntReturnEnv, "warning", "must be a Python float, got int"),
    # Said to be missing, though there; a dtype given a fix about bounds; one (1,) reward told to be (1,) again.
    ("check_step_output", gallery.NumpyBoolTruncatedEnv, "warning", "must be a Python bool, got numpy.bool"),
    ("check_step_output", gallery.Float64RewardEnv, "error", "reward must have dtype float32, got float64"),
    ("check_step_output", gallery.TeamRewardForAgentsEnv, "error", "reward must be an array of shape (3,)"),
]


def _run(check_name, env_cls, **kwargs):
    ctx = CheckContext(env_cls, episodes=3, max_steps=kwargs.get("max_steps", 200), seed=0)
    return CHECK_BY_NAME[check_name](ctx)


@pytest.mark.parametrize(("check_name", "env_cls", "severity", "text"), CAUGHT, ids=lambda v: getattr(v, "__name__", v))
def test_check_catches_its_broken_env(check_name, env_cls, severity, text):
    findings = _run(check_name, env_cls)
    assert any(f.severity == severity and text in f.message for f in findings), findings
    assert all(f.hint for f in findings if f.severity == "error")


@pytest.mark.parametrize("check_name", sorted(CHECK_BY_NAME))
def test_good_env_passes_every_check(check_name):
    assert _run(check_name, gallery.GoodEnv) == []


@pytest.mark.parametrize("check_name", ["check_static_seed", "check_dynamic_seed", "check_subprocess"])
def test_a_nan_in_the_same_place_of_two_runs_is_not_a_difference(check_name):
    assert _run(check_name, gallery.NanObsEnv) == []


@pytest.mark.parametrize(
    "env_cls, cause",
    [(gallery.Float64ObsEnv, "check_reset_obs"), (gallery.ListInfoEnv, "check_step_output")],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_the_subprocess_check_failing_on_output_already_named_is_a_skip(env_cls, cause):
    report = check_env(env_cls, episodes=2)
    assert report.skipped == {"check_subprocess": cause}
    assert "check_subprocess" not in {finding.check for finding in report.findings}
    # Output the managers take: the subprocess check runs and passes, whatever the output checks said.
    report = check_env(gallery.ZeroDimRewardEnv, episodes=2)
    assert report.skipped == {} and {f.check for f in report.findings} == {"check_step_output"}


@pytest.mark.parametrize("di_engine", [False, True])
def test_spaces_still_none_after_reset_are_one_error_and_the_checks_that_need_them_skip(di_engine):
    report = check_env(gallery.SpacelessEnv, episodes=1, di_engine=di_engine)
    assert {error.check for error in report.errors} == {"check_spaces"}
    assert any(
        "observation_space, action_space, reward_space are None after reset()" in e.message for e in report.errors
    )
    assert set(report.skipped) == set(report.checks) - {"check_spaces"}
    assert set(report.skipped.values()) == {"check_spaces"}


def test_a_list_observation_is_one_finding_per_check_with_its_count_and_no_check_crashes():
    report = check_env(gallery.ListObsEnv, episodes=2)
    (step_finding,) = [finding for finding in report.findings if finding.check == "check_step_output"]
    assert "step obs must be a numpy array" in step_finding.message and step_finding.count > 1
    assert not any("seeded rollouts raised" in finding.message for finding in report.findings)


def test_episodes_cut_at_max_steps_are_no_seeding_failure_for_an_env_that_goes_on_after_a_cut():
    assert _run("check_static_seed", gallery.GoesOnAfterACutEnv, max_steps=3) == []
    assert _run("check_static_seed", gallery.UnseededRngEnv, max_steps=3)  # still caught when cut


def test_an_env_drawing_its_starts_from_the_global_rng_is_told_so_by_the_static_seed_check():
    # Its fix said to seed the simulator with self._next_episode_seed(), which the env does already.
    (finding,) = _run("check_static_seed", gallery.GlobalDrawEnv)
    assert "resets gave different starting observations" in finding.message
    assert finding.hint.startswith("reset() draws from the global numpy (np.random.seed / np.random.*) RNG")
    assert "self._next_episode_seed()" in _run("check_static_seed", gallery.UnseededRngEnv)[0].hint  # not global


@pytest.mark.parametrize("env_cls", [gallery.CloseRaisesEnv, gallery.CloseRaisesAfterResetEnv])
def test_a_close_that_raises_is_check_close_twices_finding_and_the_other_checks_run(env_cls):
    # It was reported as the construction (or the reset) failing, and every other check was skipped.
    report = check_env(env_cls, episodes=2)
    errors = [finding for finding in report.findings if finding.severity == "error"]
    assert [finding.check for finding in errors] == ["check_close_twice"]
    assert "boom in close" in errors[0].message
    # Only check_subprocess follows from it (a manager's close() would raise it): every other check ran.
    assert set(report.skipped) <= {"check_subprocess"} and len(report.checks) - len(report.skipped) >= 10


def test_episodes_cut_before_the_envs_own_time_limit_are_told_to_raise_max_steps():
    # Pendulum's episodes end at its 200-step limit: "add a time limit" was the fix given.
    (finding,) = _run("check_step_output", pendulum_fn, max_steps=50)
    assert finding.message.startswith("an episode did not end within 50 steps")
    assert finding.hint == "its time limit (200 steps) is past them: raise --max-steps to 200 to see its episodes end"
    (finding,) = _run("check_step_output", NoTimeLimitEnv, max_steps=50)
    assert finding.hint == "add a time limit (reported as truncation) or raise --max-steps"


class NoTimeLimitEnv(gallery.NeverEndsEnv):
    config: ClassVar[dict] = dict(max_episode_steps=None)


def test_a_global_reseed_to_a_constant_is_caught_after_the_other_checks_ran_the_env():
    # The checks before check_global_rng leave the global state the env's np.random.seed(123) sets.
    findings = check_env(gallery.GlobalSeedInResetEnv, episodes=2).findings
    assert [f.check for f in findings if f.severity == "error"] == ["check_global_rng"], findings


def test_the_global_rng_check_gives_the_callers_global_states_back():
    np.random.seed(7)
    random.seed(7)
    numpy_state, python_state = np.random.get_state(), random.getstate()
    assert _run("check_global_rng", gallery.GlobalSeedEnv)  # the env seeds numpy's global RNG
    assert random.getstate() == python_state
    assert all(np.array_equal(x, y) for x, y in zip(np.random.get_state(), numpy_state, strict=True))
    check_env(gallery.GlobalSeedInResetEnv, episodes=1)  # every check runs it: the states still come back
    assert all(np.array_equal(x, y) for x, y in zip(np.random.get_state(), numpy_state, strict=True))


def test_a_time_limit_reported_as_gym_did_is_a_truncation_as_in_the_managers():
    assert _run("check_time_limit", gallery.GymTimeLimitEnv) == []


def test_an_obs_that_differs_from_its_space_points_at_the_declared_space_too():
    (finding,) = _run("check_reset_obs", gallery.Float64ObsEnv)
    assert (
        "declare the space as the env returns it" in finding.hint
        and "or return what the space declares" in finding.hint
    )
    (finding,) = _run("check_reset_obs", gallery.OutOfBoundsObsEnv)
    assert "clip the observations into the declared bounds" in finding.hint


@pytest.mark.parametrize("di_engine", [False, True])
def test_the_checker_hands_actions_as_the_managers_do(di_engine):
    from ding_env import BaseEnvManager

    report = check_env(gallery.DictActionAssertingEnv, episodes=2, max_steps=40, di_engine=di_engine)
    assert report.passed, report.format()
    with BaseEnvManager([gallery.DictActionAssertingEnv] * 2, {}) as manager:  # the same env runs in a manager
        manager.seed(0)
        manager.launch()
        space = manager.action_space
        for _ in range(40):
            manager.step({env_id: space.sample() for env_id in manager.ready_obs_id})


def test_report_and_step_cap():
    report = check_env(gallery.NeverEndsEnv, episodes=1, max_steps=50, subprocess=False)
    assert report.passed and report.warnings
    text = report.format()
    assert "[WARN] check_step_output" in text and "fix:" in text and text.splitlines()[-1].startswith("passed")
    broken = check_env(gallery.Float64ObsEnv, subprocess=False)
    assert not broken.passed and "FAILED" in broken.format()
    assert broken.to_dict()["passed"] is False


def test_a_warning_that_di_engine_mode_accepts_hides_no_later_error():
    # check_step_output's error, accepted as a warning in DI-engine mode, still counted as a failure: the
    # subprocess check's own error was shown as "[skip] check_subprocess (not run: check_step_output failed)".
    report = check_env(gallery.ProcessDependentDIEngineEnv, {"max_episode_steps": 30}, episodes=2, di_engine=True)
    assert "check_subprocess" not in report.skipped
    assert [finding.check for finding in report.errors] == ["check_subprocess"]
    assert "differs between a worker process and this process" in report.errors[0].message


def test_di_engine_compatible_entry_points_raise():
    check_all(gallery.GoodEnv())
    with pytest.raises(EnvCheckError, match="must have dtype float32"):
        check_all(gallery.Float64ObsEnv())
    with pytest.raises(AssertionError, match="share memory"):
        check_all(gallery.SharedBufferEnv())
    import gymnasium as gym
    import numpy as np

    check_array_space(np.int64(2), gym.spaces.Discrete(3), "action")
    with pytest.raises(EnvCheckError, match=r"outside Discrete\(n=3, start=0\)"):
        check_array_space(np.int64(3), gym.spaces.Discrete(3), "action")


class TestGoodEnvContract(EnvContractTests):
    env_cls = gallery.GoodEnv


def test_contract_mixin_fails_a_broken_env():
    class Broken(EnvContractTests):
        env_cls = gallery.SharedBufferEnv

    with pytest.raises(AssertionError, match="share memory"):
        Broken().test_obs_memory()


def test_an_env_without_random_action_passes_its_check():
    """random_action() is optional: DI-engine's envs that subclass gym.Env have none, and the managers never call it."""
    from tests.envs import DIEngineGymSubclassEnv

    assert _run("check_random_action", DIEngineGymSubclassEnv) == []


def test_a_terminal_state_reached_on_the_last_allowed_step_is_no_error():
    # One episode ending at the time limit as a termination was an error, whose fix (report it as truncation)
    # would have learners bootstrap past a true terminal state.
    assert _run("check_time_limit", gallery.TerminalOnLastStepEnv) == []  # its other episodes truncate there
    # With no episode truncated at the limit, one termination there is worth a look, not an error.
    (finding,) = _run("check_time_limit", lambda: gallery.TerminalOnLastStepEnv({"truncate_later": False}))
    assert finding.severity == "warning"
    assert "ended at the time limit (5 steps) as a termination, and none there as a truncation" in finding.message


def test_the_fix_given_for_a_reward_fits_its_problem():
    # A float64 reward was told to declare the bounds its rewards take; one team reward for three agents was told
    # to return np.array([r]), which it did, and transition, which takes one reward.
    (dtype,) = [f for f in _run("check_step_output", gallery.Float64RewardEnv) if "dtype" in f.message]
    assert "np.array([r], dtype=np.float32)" in dtype.hint and "bounds" not in dtype.hint
    (shape,) = _run("check_step_output", gallery.TeamRewardForAgentsEnv)
    assert "one reward per agent" in shape.hint and "(3,)" in shape.hint

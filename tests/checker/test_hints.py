"""A finding's fix hint names what is wrong and where to fix it: the method, and what to change there."""

import inspect

import pytest

from ding_env.checker import check_env
from ding_env.cli import main
from tests.checker import broken_envs as gallery


def seed_source(env_cls: type) -> str:
    """``file:line`` of the class's own ``seed``, as the findings name it."""
    return f"{inspect.getsourcefile(env_cls.seed)}:{inspect.getsourcelines(env_cls.seed)[1]}"


def finding_of(env_cls: type, check: str):
    report = check_env(env_cls, episodes=3, max_steps=200, subprocess=False)
    (finding,) = [finding for finding in report.findings if finding.check == check]
    return finding


@pytest.mark.parametrize(
    ("env_cls", "check", "dynamic", "severity", "consequence"),
    [
        (gallery.DropsDynamicSeedEnv, "check_dynamic_seed", True, "error", "collector envs repeat one episode"),
        (
            gallery.ForcesDynamicSeedEnv,
            "check_static_seed",
            False,
            "error",
            "evaluator envs do not replay their episode",
        ),
    ],
    ids=["drops_true", "drops_false"],
)
def test_a_seed_that_drops_dynamic_seed_is_named_with_its_seed(env_cls, check, dynamic, severity, consequence):
    # Both envs have randomness (another seed gives other episodes): collectors would repeat one episode, and
    # evaluators would not replay theirs. A deterministic env is only warned (the next test).
    finding = finding_of(env_cls, check)
    assert finding.severity == severity
    assert f"{env_cls.__name__}.seed() at {seed_source(env_cls)} dropped dynamic_seed={dynamic}" in finding.message
    assert finding.hint.startswith("in seed(self, seed, dynamic_seed=True), pass the argument on: super().seed(")
    assert consequence in finding.hint and "in reset()" not in finding.hint


def test_a_seed_that_keeps_nothing_is_named_with_the_call_to_make():
    # The finding said only that resets gave different starts, with a hint about reset().
    report = check_env(gallery.IgnoresSeedEnv, episodes=3, max_steps=200, subprocess=False)
    (finding,) = [finding for finding in report.findings if "different starting observations" in finding.message]
    assert finding.severity == "error"
    assert (
        f"IgnoresSeedEnv.seed() at {seed_source(gallery.IgnoresSeedEnv)} kept neither the seed nor dynamic_seed=False"
        in finding.message
    )
    assert finding.hint.startswith("in seed(self, seed, dynamic_seed=True), call super().seed(seed, dynamic_seed)")
    assert "evaluator envs do not replay their episode" in finding.hint


def test_a_deterministic_env_passing_a_constant_dynamic_seed_passes_with_a_warning_naming_its_seed():
    report = check_env(gallery.DeterministicEnv, episodes=3, max_steps=200, subprocess=False)
    assert report.passed, report.errors
    (finding,) = [finding for finding in report.findings if "every episode was the same" in finding.message]
    assert finding.severity == "warning"
    assert f"DeterministicEnv.seed() at {seed_source(gallery.DeterministicEnv)} dropped dynamic_seed=True" in (
        finding.message
    )
    assert "if the env had randomness" in finding.hint


def test_a_close_failing_after_the_seed_probe_is_a_finding_of_its_own_beside_the_dropped_seed():
    env_cls = gallery.ForcesDynamicSeedCloseFailsEnv
    report = check_env(env_cls, episodes=3, max_steps=200, subprocess=False)
    findings = [finding for finding in report.findings if finding.check == "check_static_seed"]
    (dropped,) = [finding for finding in findings if "dropped dynamic_seed" in finding.message]
    assert f"{env_cls.__name__}.seed() at {seed_source(env_cls)} dropped dynamic_seed=False" in dropped.message
    assert dropped.severity == "error"
    (closing,) = [finding for finding in findings if finding.message.startswith(f"{env_cls.__name__}.close()")]
    assert closing.severity == "error"
    assert "seeded with dynamic_seed=False and never reset raised AttributeError" in closing.message
    assert f" at {inspect.getsourcefile(env_cls.close)}:" in closing.message
    assert closing.hint.startswith("close() must work on an env in any state")


def test_a_seed_without_dynamic_seed_is_named_as_the_seed_call_failing():
    report = check_env(gallery.SeedWithoutDynamicSeedEnv, episodes=2, subprocess=False)
    (error,) = report.errors
    where = seed_source(gallery.SeedWithoutDynamicSeedEnv)
    assert error.message == (
        "seeding the env raised TypeError: SeedWithoutDynamicSeedEnv.seed() got an unexpected keyword argument "
        f"'dynamic_seed' at {where}"
    )
    assert "def seed(self, seed, dynamic_seed=True)" in error.hint and "super().seed(seed, dynamic_seed)" in error.hint


def test_every_episode_the_same_with_the_flag_kept_points_at_reset_and_stays_a_warning():
    # An env may be deterministic: without proof that seed() dropped the flag, this is a warning.
    finding = finding_of(gallery.ReplaysBaseSeedEnv, "check_dynamic_seed")
    assert finding.severity == "warning" and "every episode was the same" in finding.message
    assert finding.hint.startswith("in reset(), seed the simulator with self._next_episode_seed()")


def test_an_unseeded_rng_is_named_when_two_envs_of_one_dynamic_seed_diverge():
    findings = check_env(gallery.UnseededRngEnv, episodes=3, subprocess=False).findings
    (finding,) = [finding for finding in findings if "diverged" in finding.message]
    assert "never from unseeded RNGs" in finding.hint


@pytest.mark.parametrize("env_cls", [gallery.NanRewardEnv, gallery.BoundedNanRewardEnv])
def test_a_nan_reward_is_an_error_pointing_at_step_whatever_the_reward_space(env_cls):
    finding = finding_of(env_cls, "check_step_output")
    assert finding.severity == "error" and finding.message.startswith("reward holds NaN: array([nan]")
    assert finding.first_step == 3
    assert "find where step() computes it and return a finite number" in finding.hint
    assert "declare reward_space" not in finding.hint


def test_a_nan_observation_points_at_the_code_that_computed_it_not_at_clipping():
    finding = finding_of(gallery.NanObsEnv, "check_step_output")
    assert finding.severity == "error" and finding.message.startswith("step obs holds NaN")
    assert "reset() / step()" in finding.hint and not finding.hint.startswith("clip")


@pytest.mark.parametrize(
    ("env_cls", "code", "fix"),
    [
        ("ForcesDynamicSeedEnv", 1, "fix: in seed(self, seed, dynamic_seed=True), pass the argument on"),
        ("DeterministicEnv", 0, "fix: in seed(self, seed, dynamic_seed=True), pass the argument on"),
        ("NanRewardEnv", 1, "fix: step() computed a NaN reward"),
    ],
)
def test_the_cli_prints_the_same_hints(capsys, env_cls, code, fix):
    assert main(["check", f"tests.checker.broken_envs:{env_cls}", "--episodes", "3"]) == code
    assert fix in capsys.readouterr().out


def test_a_deterministic_gymnasium_env_in_ding_env_wrapper_is_not_told_to_change_its_reset():
    # The warning told a DingEnvWrapper user to seed the simulator with self._next_episode_seed() in reset().
    import gymnasium as gym
    import numpy as np

    from ding_env import DingEnvWrapper

    class Corridor(gym.Env):
        observation_space = gym.spaces.Box(0.0, 10.0, (1,), np.float32)
        action_space = gym.spaces.Discrete(2)

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            self.position = 0.0
            return np.zeros(1, np.float32), {}

        def step(self, action):
            self.position += 1.0
            return np.full(1, self.position, np.float32), 1.0, self.position >= 5, False, {}

    report = check_env(lambda: DingEnvWrapper(Corridor()), episodes=3, max_steps=50, subprocess=False)
    hints = [finding.hint for finding in report.findings if finding.check == "check_dynamic_seed"]
    assert hints and all("the env is deterministic (nothing to fix)" in hint for hint in hints)
    assert not any("_next_episode_seed" in hint for hint in hints)


def test_an_error_raised_inside_a_library_points_at_the_envs_line_that_called_it():
    # The finding gave the library's line (json/decoder.py), not the env's.
    finding = next(
        f for f in check_env(gallery.RaisesInALibraryEnv, episodes=1).findings if f.check == "check_reset_obs"
    )
    line = next(
        number
        for number, text in enumerate(inspect.getsource(gallery).splitlines(), 1)
        if "the line a finding must point at" in text
    )
    assert f"at {inspect.getsourcefile(gallery)}:{line} (raised in " in finding.message
    assert "json" in finding.message.split("(raised in ")[1]


def test_one_info_per_player_is_told_to_go_in_one_dict():
    # DI-engine's two-player envs return a tuple of infos; the fix said to return {} when there is nothing to say.
    report = check_env(gallery.PerPlayerInfoEnv, episodes=1, max_steps=50, subprocess=False)
    (finding,) = [finding for finding in report.errors if finding.check == "check_step_output"]
    assert finding.message.startswith("info must be a dict, got tuple")
    assert finding.hint == "one dict per player goes in one dict: {'player_0': ..., 'player_1': ...}"


def test_a_seed_kept_under_a_name_of_its_own_beside_a_global_draw_gets_the_global_rng_fix():
    # The seed probe named the seed() as keeping nothing and asked for super().seed, which would not fix it.
    report = check_env(gallery.OwnSeedGlobalDrawEnv, episodes=3, max_steps=200, subprocess=False)
    (finding,) = [finding for finding in report.findings if "different starting observations" in finding.message]
    assert "kept neither" not in finding.message
    assert finding.hint.startswith("reset() draws from the global numpy")

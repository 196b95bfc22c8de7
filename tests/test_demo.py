"""`ding-env demo` with a user's env types: imported, selected by name, and cut when they never end."""

import math

import pytest

from ding_env.cli import main
from ding_env.demo import run_demo
from tests.test_cli import ding_env_command

USER_ENVS = """
import gymnasium as gym, numpy as np
from ding_env import ENV_REGISTRY, BaseEnv, BaseEnvTimestep
from tests.envs import CountingBatchEnv, CountingEnv

ENV_REGISTRY.register("user_counting", CountingEnv)
ENV_REGISTRY.register("user_batch", CountingBatchEnv)  # a batch env type, as one registers it to serve it


@ENV_REGISTRY.register("never_ends")
class NeverEnds(BaseEnv):
    def seed(self, seed, dynamic_seed=True):
        pass

    def reset(self):
        return np.zeros(1, np.float32)

    def step(self, action):
        return BaseEnvTimestep(np.zeros(1, np.float32), np.ones(1, np.float32), False, {})

    def close(self):
        pass

    def __repr__(self):
        return "NeverEnds()"

    observation_space = property(lambda self: gym.spaces.Box(0, 1, (1,), np.float32))
    action_space = property(lambda self: gym.spaces.Discrete(2))
    reward_space = property(lambda self: gym.spaces.Box(0, 1, (1,), np.float32))


@ENV_REGISTRY.register("step_fails")
class StepFails(NeverEnds):
    def step(self, action):
        raise RuntimeError("my step bug")


@ENV_REGISTRY.register("needs_cfg")
class NeedsCfg(NeverEnds):  # DI-engine's way: __init__ takes the cfg and reads its keys
    config = dict(episode_length=3)

    def __init__(self, cfg):
        self._length = cfg.episode_length

    def reset(self):
        self._t = 0
        return np.zeros(1, np.float32)

    def step(self, action):
        self._t += 1
        done = self._t >= self._length
        info = {"eval_episode_return": float(self._t)} if done else {}
        return BaseEnvTimestep(np.zeros(1, np.float32), np.ones(1, np.float32), done, info)
"""


@pytest.fixture
def user_envs(tmp_path):
    (tmp_path / "user_envs.py").write_text(USER_ENVS)
    return tmp_path


def table(stdout: str) -> dict[str, list[str]]:
    """The demo's result table: ``{env type: its columns}``."""
    rows = stdout.split("-----", 1)[1].split("\n\n", 1)[0].splitlines()[1:]  # the rows end at a blank line
    return {line.split()[0]: line.split() for line in rows}


def test_demo_runs_only_the_named_types_of_an_imported_module(user_envs):
    result = ding_env_command(
        "demo", "--import", "user_envs", "user_counting", "cartpole", "--episodes", "2", "--envs", "2", cwd=user_envs
    )
    assert result.returncode == 0, result.stderr
    rows = table(result.stdout)
    assert set(rows) == {"user_counting", "cartpole"}
    assert int(rows["user_counting"][1]) >= 2  # episodes
    assert "2 env types" in result.stdout


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess"])
def test_demo_runs_a_batch_env_type_as_one_batch_env(user_envs, manager_type):
    # It failed with "type object 'CountingBatchEnv' has no attribute 'create_collector_env_cfg'".
    result = ding_env_command(
        "demo", "--import", "user_envs", "user_batch", "--episodes", "2", "--manager", manager_type, cwd=user_envs
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert int(table(result.stdout)["user_batch"][1]) >= 2  # episodes of its sub-envs


def test_demo_cuts_a_type_that_never_ends_and_goes_on_with_the_others(user_envs):
    result = ding_env_command(
        "demo", "--import", "user_envs", "never_ends", "user_counting", "--max-steps", "40", cwd=user_envs
    )
    assert result.returncode == 0, result.stderr
    assert "never_ends: no episode ended" in result.stdout and "cut at 40 steps" in result.stdout
    rows = table(result.stdout)
    assert rows["never_ends"][1:3] == ["0", "40"]  # episodes, steps
    assert int(rows["user_counting"][1]) >= 3


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess"])
def test_the_step_cap_is_exact_whatever_the_number_of_envs(manager_type):
    # 7 steps of 4 envs: the last step takes 3 envs (it took all 4, ending at 8, before).
    (row,) = run_demo(["cartpole"], episodes=1000, env_num=4, manager_type=manager_type, seed=0, max_steps=7)
    assert row.cut and row.steps == 7


def test_run_demo_reports_a_cut_row_without_a_return():
    (row,) = run_demo(["cartpole"], episodes=1000, env_num=2, manager_type="base", seed=0, max_steps=10)
    assert row.cut and row.steps == 10 and row.episodes < 1000
    assert math.isnan(row.mean_return) or row.episodes > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no_such_type"], "unknown env type 'no_such_type'"),
        (["--import", "no_such_module"], "cannot import 'no_such_module'"),
        (["--max-steps", "0"], "--max-steps must be >= 1, got 0"),
        (["--episodes", "0"], "--episodes must be >= 1, got 0"),
        (["--seed", "-1"], "--seed must be >= 0, got -1"),
    ],
)
def test_demo_refuses_bad_arguments_naming_them(user_envs, args, message):
    result = ding_env_command("demo", *args, cwd=user_envs)
    assert result.returncode == 2
    assert message in result.stderr


def test_demo_command_stops_at_exactly_max_steps(capsys):
    # 4 envs and --max-steps 7: the last manager step takes 3 envs, not all 4 (the table said 8 before).
    assert main(["demo", "cartpole", "--episodes", "1000", "--envs", "4", "--max-steps", "7"]) == 0
    out = capsys.readouterr().out
    assert "cut at 7 steps, --max-steps 7" in out
    row = table(out)["cartpole"]
    assert row[2] == "7" and row[-1] == "cut"  # steps, and the cut mark


@pytest.mark.parametrize("manager_type", ["base", "subprocess"])
def test_a_failing_type_is_one_line_and_a_failed_row_and_the_other_types_still_run(user_envs, manager_type):
    # A traceback ended the demo at the failing type before, and the table was lost.
    args = (
        "demo",
        "--import",
        "user_envs",
        "step_fails",
        "user_counting",
        "--episodes",
        "2",
        "--manager",
        manager_type,
    )
    result = ding_env_command(*args, cwd=user_envs)
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    line = USER_ENVS.splitlines().index('        raise RuntimeError("my step bug")') + 1
    failure = [text for text in result.stdout.splitlines() if text.startswith("step_fails: failed: ")]
    assert len(failure) == 1 and "RuntimeError: my step bug" in failure[0]
    assert failure[0].endswith(f"(at {user_envs / 'user_envs.py'}:{line})")
    rows = table(result.stdout)
    assert rows["step_fails"][-1] == "failed" and int(rows["user_counting"][1]) >= 2
    assert "2 env types" in result.stdout and "1 failed (step_fails; --verbose shows the tracebacks)" in result.stdout
    verbose = ding_env_command("--verbose", *args, cwd=user_envs)
    assert verbose.returncode == 1 and f'user_envs.py", line {line}, in step' in verbose.stdout


def test_an_env_class_that_needs_a_cfg_runs_on_its_default_config(user_envs):
    # Built without a cfg before: a TypeError (missing 'cfg') from the demo's check of the type's extras.
    result = ding_env_command("demo", "--import", "user_envs", "needs_cfg", "--episodes", "2", cwd=user_envs)
    assert result.returncode == 0, result.stderr
    rows = table(result.stdout)
    assert int(rows["needs_cfg"][1]) >= 2 and float(rows["needs_cfg"][3]) == 3.0  # episodes, mean return

"""`ding-env run`'s main job: an exact collection step count, and an evaluation that cannot hang on an episode."""

import os
import pickle
import re
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest

from ding_env import BaseEnv, create_env_manager
from ding_env.cli import main
from ding_env.collector import collect
from ding_env.env.timestep import termination, transition
from ding_env.errors import EnvDataError, EpisodeStepLimitError
from ding_env.evaluator import evaluate
from ding_env.policies import RandomPolicy
from ding_env.run import default_eval_max_steps, run_job
from ding_env.run_config import load_run_config
from tests.conftest import ALL_MANAGER_TYPES, manager_cfg
from tests.envs import CountingEnv, LockstepCountingBatchEnv

REPO = Path(__file__).resolve().parents[1]


class EndlessEnv(BaseEnv):
    """Ends its episodes after ``length`` steps; ``length=None``: never (no termination, no time limit)."""

    config: ClassVar[dict] = dict(length=None)

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        self._seed = seed

    def reset(self) -> np.ndarray:
        self._t = 0
        return np.zeros(1, np.float32)

    def step(self, action: Any) -> Any:
        self._t += 1
        obs = np.full(1, self._t, np.float32)
        if self._cfg.length is not None and self._t >= self._cfg.length:
            return termination(obs, 1.0, float(self._t))
        return transition(obs, 1.0)

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"EndlessEnv(length={self._cfg.length})"

    observation_space = property(lambda self: gym.spaces.Box(0, np.inf, (1,), np.float32))
    action_space = property(lambda self: gym.spaces.Discrete(2))
    reward_space = property(lambda self: gym.spaces.Box(0, 1, (1,), np.float32))


def _launched(manager_type: str, lengths: list[int | None]):
    fns = [partial(EndlessEnv, dict(length=length)) for length in lengths]
    manager = create_env_manager(manager_cfg(manager_type), fns)
    manager.seed(0)
    manager.launch()
    return manager


@pytest.mark.parametrize("manager_type", ALL_MANAGER_TYPES)
def test_evaluate_ends_an_episode_that_never_ends_with_an_error_naming_the_env_and_the_bound(manager_type):
    with _launched(manager_type, [3, None]) as manager:
        policy = RandomPolicy(manager.action_space, 0)
        with pytest.raises(EpisodeStepLimitError, match=r"evaluator env 1 ran 20 steps in one episode") as raised:
            evaluate(manager, policy, 4, seed=0, max_episode_steps=20)
        assert raised.value.env_id == 1 and raised.value.max_episode_steps == 20
        assert "max_episode_steps=20" in str(raised.value) and "time limit" in str(raised.value)
        copy = pickle.loads(pickle.dumps(raised.value))  # as a process pool hands it back
        assert (copy.env_id, copy.max_episode_steps, str(copy)) == (1, 20, str(raised.value))


@pytest.mark.parametrize("manager_type", ALL_MANAGER_TYPES)
def test_an_episode_that_ends_at_the_bound_counts_and_progress_sees_every_step(manager_type):
    with _launched(manager_type, [20, 5]) as manager:
        seen = []
        result = evaluate(
            manager, RandomPolicy(manager.action_space, 0), 4, seed=0, max_episode_steps=20, on_step=seen.append
        )
        assert sorted(result.returns) == [5.0, 5.0, 20.0, 20.0]
        assert seen == sorted(seen) and seen[-1] == result.steps == 50


class NoReturnEnv(EndlessEnv):
    """Ends its episodes without info['eval_episode_return']."""

    def step(self, action: Any) -> Any:
        timestep = super().step(action)
        timestep.info.pop("eval_episode_return", None)
        return timestep


@pytest.mark.parametrize("manager_type", ALL_MANAGER_TYPES)
def test_evaluate_names_the_env_whose_episode_ended_without_its_return(manager_type):
    # It was a bare KeyError: 'eval_episode_return', naming neither the env nor what to return.
    fns = [partial(EndlessEnv, dict(length=3)), partial(NoReturnEnv, dict(length=3))]
    with create_env_manager(manager_cfg(manager_type), fns) as manager:
        manager.launch()
        with pytest.raises(EnvDataError, match=r"env 1 .* without info\['eval_episode_return'\]"):
            evaluate(manager, RandomPolicy(manager.action_space, 0), 4, seed=0)


@pytest.mark.parametrize("bound", [0, 2.5])
def test_evaluate_refuses_a_bound_that_is_not_a_count(bound):
    with _launched("base", [3]) as manager, pytest.raises(ValueError, match="max_episode_steps must be an int >= 1"):
        evaluate(manager, RandomPolicy(manager.action_space, 0), 1, max_episode_steps=bound)


@pytest.mark.parametrize("n_steps", [0, -5, 2.5, True])
def test_collect_refuses_a_step_count_that_is_not_a_count_at_the_call(n_steps):
    # It collected nothing (0, -5) or stepped past a fraction (2.5), silently, once iterated.
    with _launched("base", [3]) as manager:
        with pytest.raises(ValueError, match=rf"collect: n_steps must be an int >= 1 or None .*got {n_steps!r}"):
            collect(manager, RandomPolicy(manager.action_space, 0), n_steps)
        assert (
            sum(len(batch.env_id) for batch in collect(manager, RandomPolicy(manager.action_space, 0), np.int64(2)))
            == 2
        )


ENDLESS_CONFIG = """
config = dict(
    exp_name='endless',
    env=dict(type='endless', import_names=['endless_env'], collector_env_num=2, evaluator_env_num=2,
             n_evaluator_episode=2, max_episode_steps=4),
)
"""
ENDLESS_MODULE = """
import gymnasium as gym
import numpy as np
from ding_env import ENV_REGISTRY, BaseEnv
from ding_env.env.timestep import transition


@ENV_REGISTRY.register('endless')
class EndlessEnv(BaseEnv):  # declares a time limit and never keeps it
    config = dict(max_episode_steps=4)

    def seed(self, seed, dynamic_seed=True):
        pass

    def reset(self):
        return np.zeros(1, np.float32)

    def step(self, action):
        return transition(np.zeros(1, np.float32), 1.0)

    def close(self):
        pass

    def __repr__(self):
        return 'EndlessEnv()'

    observation_space = property(lambda self: gym.spaces.Box(0, 1, (1,), np.float32))
    action_space = property(lambda self: gym.spaces.Discrete(2))
    reward_space = property(lambda self: gym.spaces.Box(0, 1, (1,), np.float32))
"""


@pytest.mark.parametrize(("flags", "bound"), [((), 40), (("--eval-max-steps", "7"), 7)])
def test_run_fails_on_an_evaluation_episode_that_never_ends_naming_the_env_and_the_bound(tmp_path, flags, bound):
    (tmp_path / "endless_env.py").write_text(ENDLESS_MODULE)
    (tmp_path / "cfg.py").write_text(ENDLESS_CONFIG)
    args = ["run", "cfg.py", "--steps", "10", "--manager", "base", *flags]
    result = subprocess.run(
        [sys.executable, "-m", "ding_env", *args],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert f"EpisodeStepLimitError: evaluator env 0 ran {bound} steps in one episode" in result.stderr
    assert f"(the evaluation's bound, max_episode_steps={bound}; 0 of 2 episodes done)" in result.stderr
    assert "ding-env run --eval-max-steps N sets the bound (default: 10 x the env's time limit" in result.stderr


def test_run_refuses_an_eval_max_steps_below_one(capsys):
    assert main(["run", "configs/cartpole.py", "--eval-max-steps", "0"]) == 2
    assert "--eval-max-steps must be >= 1, got 0" in capsys.readouterr().err


@pytest.mark.parametrize("manager_type", ALL_MANAGER_TYPES)
@pytest.mark.parametrize("n_steps", [1, 7, 9])
def test_collect_takes_exactly_the_steps_asked_for(manager_type, n_steps):
    fns = [partial(CountingEnv, dict(limit=4))] * 3
    with create_env_manager(manager_cfg(manager_type), fns) as manager:
        manager.seed(0)
        manager.launch()
        batches = list(collect(manager, RandomPolicy(manager.action_space, 0), n_steps))
        assert sum(len(batch.env_id) for batch in batches) == n_steps
        # The last step took the lowest ready ids; the others are still ready, none is left in flight.
        assert batches[-1].env_id.tolist() == list(range(n_steps % 3 or 3))
        assert manager.ready_obs_batch.env_id.tolist() == [0, 1, 2]


def test_collect_takes_exactly_the_steps_asked_for_with_envs_in_flight():
    # wait_num=1 and one slow env: the async manager returns before every env sent an action has stepped.
    fns = [partial(CountingEnv, dict(limit=3)), partial(CountingEnv, dict(limit=3, step_sleep=0.02))]
    with create_env_manager(dict(type="async_subprocess", wait_num=1, step_wait_timeout=60), fns) as manager:
        manager.seed(0)
        manager.launch()
        assert sum(len(batch.env_id) for batch in collect(manager, RandomPolicy(manager.action_space, 0), 13)) == 13


# The async manager refuses a lockstep batch env (tests/env_manager/test_batch_hosting.py).
@pytest.mark.parametrize("manager_type", [t for t in ALL_MANAGER_TYPES if t != "async_subprocess"])
def test_collect_and_evaluate_step_every_sub_env_of_a_lockstep_batch_env(manager_type):
    # A lockstep batch env takes all its sub-envs' actions or none: collect and evaluate see it on the manager.
    fns = [partial(LockstepCountingBatchEnv, dict(num_envs=4, env_cfg=dict(limit=3)))]
    with create_env_manager(manager_cfg(manager_type), fns) as manager:
        manager.seed(0)
        manager.launch()
        assert manager.lockstep
        batches = list(collect(manager, RandomPolicy(manager.action_space, 0), 6))
        assert [len(batch.env_id) for batch in batches] == [4, 4]  # all four sub-envs or none: one batch past 6
        assert len(evaluate(manager, RandomPolicy(manager.action_space, 0), 3, max_episode_steps=10).returns) == 3


def test_collect_steps_every_env_of_a_gym_vector_manager():
    fns = [partial(gym.make, "CartPole-v1")] * 2
    with create_env_manager(dict(type="gym_vector"), fns) as manager:
        manager.seed(0)
        manager.launch()
        assert [len(batch.env_id) for batch in collect(manager, RandomPolicy(manager.action_space, 0), 3)] == [2, 2]


@pytest.mark.parametrize("manager_type", ALL_MANAGER_TYPES)
def test_collect_after_the_same_seed_gives_the_same_batches(manager_type):
    # The partial step's envs come from the ready ids alone: no state carried over from earlier calls.
    with create_env_manager(manager_cfg(manager_type), [partial(CountingEnv, dict(limit=5))] * 3) as manager:
        assert not manager.lockstep
        manager.launch()
        runs = []
        for _ in range(2):
            manager.seed(0)
            manager.reset()
            batches = list(collect(manager, RandomPolicy(manager.action_space, 0), 4))
            runs.append([(batch.env_id.tolist(), batch.next_obs.tolist()) for batch in batches])
        assert runs[0] == runs[1]


def _actions_and_rewards_per_env(cfg: dict, fns: list) -> dict[int, list]:
    with create_env_manager(cfg, fns) as manager:
        manager.seed(0)
        manager.launch()
        seen: dict[int, list] = {env_id: [] for env_id in range(len(fns))}
        for batch in collect(manager, RandomPolicy(manager.action_space, 0), 60):
            for env_id, action, reward in zip(batch.env_id.tolist(), batch.action.tolist(), batch.reward, strict=True):
                seen[env_id].append((action, float(reward[0])))
        return seen


@pytest.mark.parametrize("manager_type", ALL_MANAGER_TYPES)
def test_the_random_policy_gives_each_env_its_own_actions_whichever_envs_step_with_it(manager_type):
    # Env 0 is slow: an async manager that returns as soon as one env is ready hands the envs out in the
    # order they finish, in batches of any size. Each env's actions (and so its trajectory) stay the same.
    fns = [partial(CountingEnv, dict(step_sleep=0.003 if env_id == 0 else 0.0)) for env_id in range(3)]
    reference = _actions_and_rewards_per_env(manager_cfg("base"), fns)
    extra = dict(wait_num=1) if manager_type == "async_subprocess" else {}
    seen = _actions_and_rewards_per_env(manager_cfg(manager_type, **extra), fns)
    compared = 0
    for env_id, steps in seen.items():
        common = min(len(steps), len(reference[env_id]))
        assert steps[:common] == reference[env_id][:common], env_id
        compared += common
    # However a loaded machine spreads the 60 steps over the envs (the slow one may step only once), every env
    # steps, and the one that stepped most compares 20 steps at least (the base manager's share).
    assert compared >= 20 and all(seen.values()), seen


def test_run_refuses_a_policy_that_is_not_callable_as_a_usage_error(capsys):
    assert main(["run", "configs/cartpole.py", "--policy", "math:pi", "--steps", "10"]) == 2
    assert "--policy 'math:pi' is 3.141592653589793, not callable: name a function" in capsys.readouterr().err


def test_run_collects_exactly_the_steps_asked_for(capsys):
    args = ["run", "configs/cartpole.py", "--steps", "10", "--manager", "base", "--eval-episodes", "1"]
    assert main([*args, "--set", "env.evaluator_env_num=1"]) == 0
    assert "collect steps        10\n" in capsys.readouterr().out  # 8 envs: 16 before


def test_run_says_why_it_collected_fewer_steps_than_asked(capsys):
    # Collection ends when every collector env ran its episode_num episodes: the summary said "collect steps 112"
    # after "collecting 300 steps", as if nothing were amiss.
    args = ["run", "configs/cartpole.py", "--steps", "300", "--set", "env.manager.episode_num=1"]
    assert main([*args, "--set", "env.n_evaluator_episode=5", "--manager", "base"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("collect steps"))
    assert re.fullmatch(
        r"collect steps +\d+ of 300 \(every collector env ran its env.manager.episode_num episodes\)", line
    )


def test_run_says_what_it_will_do_in_words_that_agree_with_the_counts(capsys):
    args = ["run", "configs/cartpole.py", "--steps", "1", "--manager", "base", "--eval-episodes", "1"]
    assert main([*args, "--set", "env.evaluator_env_num=1"]) == 0
    assert "collecting 1 step, then evaluating 1 episode\n" in capsys.readouterr().err


def test_run_refuses_an_unknown_batch_source_before_building_envs(capsys):
    # It failed in a worker building the batch envs (exit 1), after refusing the env count first.
    args = ["run", "configs/cartpole.py", "--steps", "8", "--set", "env.batch=4", "--set", "env.batch_source='foo'"]
    assert main(args) == 2
    assert "'batch_source': expected one of ('gym_vector', 'envpool'), got 'foo'" in capsys.readouterr().err


def test_run_names_the_env_id_a_config_gives_a_registered_type(capsys):
    # The type runs that id instead of its own: the first line said only "env type 'cartpole'".
    args = ["run", "configs/cartpole.py", "--steps", "1", "--manager", "base", "--eval-episodes", "1"]
    assert main([*args, "--set", "env.evaluator_env_num=1", "--set", "env.env_id='CartPole-v0'"]) == 0
    assert "env type 'cartpole', env_id 'CartPole-v0', seed 0\n" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argument", "value"), [("steps", 0), ("eval_episodes", 0), ("eval_max_steps", 0), ("steps", None)]
)
def test_run_job_refuses_a_count_below_one_naming_it(argument, value):
    # eval_episodes=0 and eval_max_steps=0 silently became the defaults before.
    cfg = load_run_config(str(REPO / "configs" / "cartpole.py"))
    kwargs = {"steps": 10, argument: value}
    with pytest.raises(ValueError, match=rf"run_job: {argument} must be an int >= 1.*got {value!r}"):
        run_job(cfg, **kwargs)


def test_run_job_takes_numpy_integer_counts():
    cfg = load_run_config(str(REPO / "configs" / "cartpole.py"))
    summary = run_job(cfg, steps=np.int64(10), eval_episodes=np.int64(1), manager_type="base")
    assert summary.collect_steps == 10


@pytest.mark.parametrize("manager_type", ["base", "async_subprocess"])
def test_the_evaluation_of_the_random_policy_does_not_depend_on_the_collection_before_it(manager_type):
    # The evaluator's envs drew their actions from the streams collection had advanced: how far depended on the
    # steps collected and, in an async manager, on which envs happened to be ready.
    cfg = load_run_config(str(REPO / "configs" / "cartpole.py"))
    evaluations = [
        sorted(run_job(cfg, steps=steps, eval_episodes=4, manager_type=manager_type).evaluation.returns)
        for steps in (10, 37)
    ]
    assert evaluations[0] == evaluations[1]


SMALL_CONFIG = "config = dict(env=dict(type='cartpole', collector_env_num=1, evaluator_env_num=1, {}))\n"


@pytest.mark.parametrize(("stop_value", "got"), [("'high'", "str 'high'"), ("True", "bool True")])
def test_a_stop_value_that_is_no_number_is_refused_before_anything_runs(tmp_path, capsys, stop_value, got):
    # It passed `ding-env check`, and `run` failed with a TypeError after the whole collection.
    path = tmp_path / "cfg.py"
    path.write_text(SMALL_CONFIG.format(f"stop_value={stop_value}"))
    message = f"{path}: env.stop_value must be a number (the mean evaluation return that counts as solved) or None"
    assert main(["check", str(path)]) == 2
    assert f"ding-env check: {message}, got {got}" in capsys.readouterr().err
    assert main(["run", str(path), "--steps", "10"]) == 2
    err = capsys.readouterr().err
    assert f"ding-env run: {message}, got {got}" in err and "collecting" not in err
    path.write_text(SMALL_CONFIG.format("stop_value=None"))
    assert main(["run", str(path), "--steps", "10", "--set", "env.stop_value=high"]) == 2
    assert f"{message}, got str 'high'" in capsys.readouterr().err


@pytest.mark.parametrize("section", ["manager", "evaluator_manager"])
def test_a_manager_key_error_names_the_file_and_the_manager_section(tmp_path, capsys, section):
    path = tmp_path / "cfg.py"
    path.write_text(SMALL_CONFIG.format("n_evaluator_episode=1"))
    assert main(["run", str(path), "--set", f"env.{section}.step_timout=1"]) == 2
    where = "env.manager" if section == "manager" else "env.evaluator_manager (over env.manager)"
    err = capsys.readouterr().err
    assert f"ding-env run: {path}: {where}: unknown key 'step_timout'" in err and "did you mean 'step_timeout'" in err
    path.write_text(SMALL_CONFIG.format(f"{section}=dict(max_retry=0)"))  # a file's own section, in check too
    assert main(["check", str(path)]) == 2
    assert f"ding-env check: {path}: {where}: env manager config 'max_retry'" in capsys.readouterr().err


def test_the_default_evaluation_bound_is_ten_times_the_envs_own_time_limit():
    # Every built-in type's limit is its Gymnasium id's (CartPole-v1's 500): the bound was always 100000.
    assert default_eval_max_steps(load_run_config("configs/cartpole.py")) == 5000
    shorter = load_run_config("configs/cartpole.py", ["env.make_kwargs={'max_episode_steps': 30}"])
    assert default_eval_max_steps(shorter) == 300
    card_game = load_run_config("configs/card_game.py")  # a BaseEnv of ding-env's dizoo: its section's key
    assert default_eval_max_steps(card_game) == 10 * card_game.env.max_episode_steps


BATCH_TYPE_MODULE = """
from ding_env import ENV_REGISTRY
from tests.envs import CountingBatchEnv

ENV_REGISTRY.register("counting_batch_of_the_tests", CountingBatchEnv)
"""


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_batch_env_type_in_a_config_is_refused_saying_how_to_run_it(tmp_path, command):
    # run failed on an AttributeError (create_collector_env_cfg), and check ran the one-env checks on it.
    # In a process of its own: the type registered stays out of this one's registry (ding-env demo runs every type).
    (tmp_path / "batch_type_module.py").write_text(BATCH_TYPE_MODULE)
    (tmp_path / "batch_cfg.py").write_text(
        "config = dict(env=dict(type='counting_batch_of_the_tests', import_names=['batch_type_module'], num_envs=2, "
        "collector_env_num=1, evaluator_env_num=1))\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "ding_env", command, "batch_cfg.py"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr[-2000:]
    expected = {
        "run": "is a batch env (CountingBatchEnv), which ding-env run does not build",
        "check": "not a BaseEnv subclass: a batch env, which ding_env.checker.check_batch_env",
    }
    assert expected[command] in result.stderr

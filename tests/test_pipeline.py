"""Config-driven collector and evaluator envs, the collection loop, the evaluator and `ding-env run`."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from ding_env.cli import main
from ding_env.collector import collect
from ding_env.errors import ConfigError
from ding_env.evaluator import episode_quota, evaluate
from ding_env.policies import RandomPolicy
from ding_env.run_config import build_managers, load_run_config, unused_sections, validate_run_config
from tests.conftest import balance_action
from tests.porting.test_port import REPO

CONFIGS = ["configs/cartpole.py", "configs/pendulum.py", "configs/card_game.py"]


@pytest.mark.parametrize("path", CONFIGS)
def test_configs_load_and_validate(path):
    cfg = load_run_config(path)
    assert cfg.env.collector_env_num >= 1 and cfg.seed == 0


def test_overrides_and_typos():
    cfg = load_run_config("configs/cartpole.py", ["env.collector_env_num=3", "env.manager.type=base", "seed=7"])
    assert cfg.env.collector_env_num == 3 and cfg.env.manager.type == "base" and cfg.seed == 7
    with pytest.raises(ConfigError, match=r"unknown key 'colector_env_num'.*valid keys: .*collector_env_num"):
        load_run_config("configs/cartpole.py", ["env.colector_env_num=3"])
    with pytest.raises(ConfigError, match=r"unknown key 'auto_rest' in the env manager config"):
        load_run_config("configs/cartpole.py", ["env.manager.auto_rest=False"])
    # DI-engine's class tag is accepted in env sections; replay_path must be a folder
    cfg = load_run_config("configs/cartpole.py", ["env.cfg_type='CartPoleEnvDict'"])
    assert cfg.env.cfg_type == "CartPoleEnvDict"
    with pytest.raises(ConfigError, match="env.replay_path must be a folder path or None, got 3"):
        load_run_config("configs/cartpole.py", ["env.replay_path=3"])
    with pytest.raises(ConfigError, match=r"unknown key 'seeed'.*did you mean 'seed'"):
        validate_run_config({"seeed": 1, "env": {"type": "cartpole"}})
    # sections for other parts (DI-engine's policy, world_model, ...) are left alone and named for a note
    cfg = validate_run_config({"polcy": {}, "world_model": {"lr": 1}, "env": {"type": "cartpole"}})
    assert unused_sections(cfg) == ["polcy", "world_model"]
    with pytest.raises(ConfigError, match="collector_env_num must be an int >= 1, got 0"):
        load_run_config("configs/cartpole.py", ["env.collector_env_num=0"])


def _managers(manager_type="base", **overrides):
    sets = [f"env.{key}={value!r}" for key, value in overrides.items()]
    return build_managers(load_run_config("configs/cartpole.py", sets), manager_type)


def test_collector_dynamic_and_evaluator_static_and_reproducible():
    starts = []
    for _ in range(2):
        collector, evaluator = _managers(collector_env_num=2, evaluator_env_num=2)
        with collector, evaluator:
            collector.launch()
            evaluator.launch()
            first = collector.ready_obs_batch.obs.copy()
            evaluator_first = evaluator.ready_obs_batch.obs.copy()
            evaluator.reset()
            np.testing.assert_array_equal(evaluator_first, evaluator.ready_obs_batch.obs)  # static
            collector.reset()
            assert not np.array_equal(first, collector.ready_obs_batch.obs)  # dynamic
            starts.append((first, evaluator_first))
    np.testing.assert_array_equal(starts[0][0], starts[1][0])
    np.testing.assert_array_equal(starts[0][1], starts[1][1])


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess"])
def test_collection_loop_keeps_true_final_observations(manager_type):
    collector, evaluator = _managers(manager_type, collector_env_num=3)
    evaluator.close()
    with collector:
        collector.launch()
        policy = RandomPolicy(collector.action_space, 0)
        seen_done = 0
        following = {}
        for batch in collect(collector, policy, 600):
            for row, env_id in enumerate(batch.env_id.tolist()):
                if env_id in following:
                    # obs of this transition is the next_obs of the previous one, unless that one ended
                    previous_next, previous_done = following[env_id]
                    if not previous_done:
                        np.testing.assert_array_equal(batch.obs[row], previous_next)
                    else:
                        assert np.abs(batch.obs[row]).max() <= 0.05  # a fresh CartPole reset state
                following[env_id] = (batch.next_obs[row], batch.done[row])
                if batch.done[row]:
                    seen_done += 1
                    # a falling pole: the final obs is outside CartPole's termination bounds
                    x, _, theta, _ = batch.next_obs[row]
                    assert abs(theta) > 0.2094 or abs(x) > 2.4
                    assert batch.terminated[row]
        assert seen_done > 5


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess"])
def test_collection_with_a_torch_device_gives_tensors_of_the_same_transitions(manager_type):
    torch = pytest.importorskip("torch", reason="the torch extra is not installed (make test installs it)")
    runs = []
    for device in (None, "cpu"):
        collector, evaluator = _managers(manager_type, collector_env_num=3)
        evaluator.close()
        seen = []

        def policy(obs, seen=seen):
            seen.append(type(obs))
            leaning_right = obs[:, 2] > 0
            # a tensor policy returns a tensor: the collector hands it back to the manager as numpy
            return leaning_right.long() if isinstance(obs, torch.Tensor) else leaning_right.astype(np.int64)

        with collector:
            collector.launch()
            runs.append((list(collect(collector, policy, 300, device=device)), seen))
    (numpy_batches, numpy_seen), (torch_batches, torch_seen) = runs
    assert set(numpy_seen) == {np.ndarray} and set(torch_seen) == {torch.Tensor}
    fields = ("obs", "action", "reward", "next_obs", "done", "truncated")
    for batch in torch_batches:
        assert all(isinstance(getattr(batch, field), torch.Tensor) for field in fields)
        assert batch.terminated.dtype == torch.bool
    # Per env, the same transitions in the same order (the async manager may group envs differently per run).
    numpy_streams, torch_streams = _per_env_streams(numpy_batches, fields), _per_env_streams(torch_batches, fields)
    for env_id in range(3):
        common = min(len(numpy_streams[env_id]), len(torch_streams[env_id]))
        assert common > 50
        for expected, row in zip(numpy_streams[env_id][:common], torch_streams[env_id][:common], strict=True):
            for field, want, got in zip(fields, expected, row, strict=True):
                np.testing.assert_array_equal(np.asarray(got), want, err_msg=field)


def _per_env_streams(batches, fields):
    streams = {}
    for batch in batches:
        for row, env_id in enumerate(batch.env_id.tolist()):
            streams.setdefault(env_id, []).append([getattr(batch, field)[row] for field in fields])
    return streams


def test_evaluator_runs_exactly_the_requested_episodes_and_is_reproducible():
    assert episode_quota(7, 3).tolist() == [3, 2, 2]
    results = []
    for _ in range(2):
        collector, evaluator = _managers(evaluator_env_num=3)
        collector.close()
        with evaluator:
            evaluator.launch()
            result = evaluate(evaluator, RandomPolicy(evaluator.action_space, 1), 7, stop_value=10, seed=4)
            assert len(result.returns) == 7
            results.append(result)
    assert results[0].returns == results[1].returns
    assert results[0].stop_reached == (results[0].mean >= 10)


def test_evaluator_reaches_stop_value_with_a_good_policy():
    collector, evaluator = _managers(evaluator_env_num=2)
    collector.close()
    with evaluator:
        evaluator.launch()
        result = evaluate(evaluator, lambda obs: np.array([balance_action(o) for o in obs]), 4, stop_value=195)
    assert result.returns == [500.0] * 4 and result.stop_reached


@pytest.mark.parametrize("path", CONFIGS)
def test_cli_run_prints_a_summary(path, capsys):
    assert main(["run", path, "--steps", "300", "--eval-episodes", "2", "--manager", "base"]) == 0
    out = capsys.readouterr().out
    assert "collect throughput" in out and "eval return" in out and "stop value reached" in out


def test_the_summary_says_the_policy_is_random_and_not_expected_to_reach_the_stop_value(capsys):
    assert main(["run", "configs/cartpole.py", "--steps", "300", "--eval-episodes", "2", "--manager", "base"]) == 0
    out = capsys.readouterr().out
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in out.splitlines())
    assert rows["policy"] == "random (uniform actions, no learning: --policy MODULE:CALLABLE runs yours)"
    assert rows["stop value reached"] == "no (stop value 195; a random policy is not expected to reach it)"


def test_cli_run_subprocess_manager(capsys):
    assert main(["run", "configs/cartpole.py", "--steps", "500", "--eval-episodes", "2"]) == 0
    assert "SyncSubprocessEnvManager" in capsys.readouterr().out


def test_cli_run_bad_config_is_a_clear_usage_error(capsys, tmp_path):
    assert main(["run", "configs/cartpole.py", "--set", "env.colector_env_num=3"]) == 2
    assert "did you mean 'collector_env_num'" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "missing.py")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["run", "configs/cartpole.py", "--policy", "no.such:policy"]) == 2
    assert "cannot import module 'no.such'" in capsys.readouterr().err
    # A module name where a list of them is expected (read letter by letter, it was "cannot import 'd'").
    assert main(["run", "configs/cartpole.py", "--set", "env.import_names='dizoo.classic_control'"]) == 2
    expected = "env.import_names: expected a list of module names, got 'dizoo.classic_control' (write ['dizoo."
    assert expected in capsys.readouterr().err
    # An env that cannot record: the same error from every manager, naming the env, without a traceback.
    for manager in ("base", "subprocess"):
        assert main(["run", "configs/card_game.py", "--replay", str(tmp_path), "--manager", manager]) == 1
        err = capsys.readouterr().err
        assert "env 0 failed in enable_save_replay: NotImplementedError: CardGameEnv does not support" in err
        assert "Traceback" not in err


@pytest.mark.parametrize(
    ("path", "module", "steps"), [("configs/pong.py", "ale_py", 200), ("configs/halfcheetah.py", "mujoco", 1000)]
)
def test_cli_runs_the_atari_and_mujoco_configs(path, module, steps, capsys):
    pytest.importorskip(module)
    assert main(["run", path, "--steps", str(steps), "--eval-episodes", "1"]) == 0
    out = capsys.readouterr().out
    assert "SyncSubprocessEnvManager" in out and "eval episodes        1" in out


def test_an_unknown_key_of_a_built_in_env_is_refused_without_sending_the_user_into_ding_envs_code():
    with pytest.raises(ConfigError, match=r"unknown key 'max_step'.*CartPoleEnv is ding-env's own env: it takes only"):
        load_run_config("configs/cartpole.py", ["env.max_step=300"])


def test_an_undeclared_key_of_a_users_env_says_where_to_declare_it(tmp_path):
    (tmp_path / "my_walls.py").write_text(
        "from ding_env.utils import ENV_REGISTRY\n"
        "from tests.envs import CountingEnv\n\n\n"
        "@ENV_REGISTRY.register('my_walls')\n"
        "class MyWalls(CountingEnv):\n"
        "    config = dict(height=2)\n"
    )
    (tmp_path / "walls.py").write_text("config = dict(env=dict(type='my_walls', import_names=['my_walls'], width=3))\n")
    # In a process of its own: the env type registered stays out of this one's registry.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)])}
    done = subprocess.run(
        [sys.executable, "-m", "ding_env", "run", "walls.py"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert re.search(r"unknown key 'width'.*my_walls\.MyWalls\.config: if the env reads 'width'", done.stderr)
    # A pipeline key mistyped is no key for the env to declare: the suggestion alone.
    (tmp_path / "typo.py").write_text(
        "config = dict(env=dict(type='my_walls', import_names=['my_walls'], colector_env_num=2))\n"
    )
    mistyped = subprocess.run(
        [sys.executable, "-m", "ding_env", "run", "typo.py"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert (
        "unknown key 'colector_env_num'" in mistyped.stderr and "(did you mean 'collector_env_num'?)" in mistyped.stderr
    )
    assert "declare it" not in mistyped.stderr
    # A key only loosely like a pipeline key may be the env's own: the advice stays.
    (tmp_path / "own.py").write_text(
        "config = dict(env=dict(type='my_walls', import_names=['my_walls'], env_name=3))\n"
    )
    own = subprocess.run(
        [sys.executable, "-m", "ding_env", "run", "own.py"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert "if the env reads 'env_name', declare it there" in own.stderr


def test_di_engines_env_section_keys_are_taken_or_refused_saying_what_they_are():
    assert load_run_config("configs/cartpole.py", ["env.exp_name='pong_rainbow'"]).env.exp_name == "pong_rainbow"
    with pytest.raises(ConfigError, match=r"key 'collector_batch_size' is the batch size of DI-engine's env_pool"):
        load_run_config("configs/cartpole.py", ["env.collector_batch_size=8"])
    # It said to move the key and to remove it, in one message.
    with pytest.raises(
        ConfigError, match=r"key 'episode_num' .*: move it to env\.manager\.episode_num, where"
    ) as raised:
        load_run_config("configs/cartpole.py", ["env.episode_num=8"])
    assert "remove it" not in str(raised.value)


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess"])
@pytest.mark.parametrize("env_name", ["DictActionEnv", "TupleActionEnv"])
def test_collect_and_evaluate_take_the_random_policys_dict_and_tuple_actions(manager_type, env_name):
    from ding_env import create_env_manager
    from tests import envs
    from tests.conftest import manager_cfg

    env_fn = getattr(envs, env_name)
    with create_env_manager(manager_cfg(manager_type), [env_fn] * 2) as manager:
        manager.seed(0)
        manager.launch()
        policy = RandomPolicy(manager.action_space, 0)
        batches = list(collect(manager, policy, 20))
        actions = [action for batch in batches for action in batch.action]
        assert len(actions) == sum(len(batch.env_id) for batch in batches) >= 20
        assert all(manager.action_space.contains(action) for action in actions)
        result = evaluate(manager, policy, 2, stop_value=None, seed=1)
        assert len(result.returns) == 2


@pytest.mark.parametrize("env_name", ["DictActionEnv", "TupleActionEnv", "CountingEnv"])
def test_evaluate_and_collect_wait_with_a_step_of_no_env_whatever_the_action_space(env_name):
    # One slow env and wait_num=1: the async manager is often stepped with no env while the slow one runs.
    from ding_env import create_env_manager
    from tests import envs

    env_fn = getattr(envs, env_name)
    fns = [lambda: env_fn(dict(limit=3)), lambda: env_fn(dict(limit=3, step_sleep=0.02))]
    with create_env_manager(dict(type="async_subprocess", wait_num=1, step_wait_timeout=60), fns) as manager:
        manager.seed(0)
        manager.launch()
        policy = RandomPolicy(manager.action_space, 0)
        assert sum(len(batch.env_id) for batch in collect(manager, policy, 12)) >= 12
        assert len(evaluate(manager, policy, 4, stop_value=None, seed=1).returns) == 4


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess"])
def test_an_abnormal_episode_has_no_return_and_evaluate_runs_another_in_its_place(manager_type):
    from ding_env import create_env_manager
    from tests.envs import FaultEnv

    fns = [lambda: FaultEnv(dict(limit=3, raise_every=5))] * 2
    cfg = dict(type=manager_type, step_error="abnormal", step_wait_timeout=60)
    with create_env_manager(cfg, fns) as manager:
        manager.seed(0)
        manager.launch()
        policy = RandomPolicy(manager.action_space, 0)
        result = evaluate(manager, policy, 6, stop_value=None, seed=1)
        assert len(result.returns) == 6 and result.abnormal_episodes >= 1
        assert all(np.isfinite(result.returns))


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess", "base_v2", "subprocess_v2"])
@pytest.mark.parametrize("cfg", [dict(auto_reset=False), dict(episode_num=1)], ids=["no_auto_reset", "episode_num"])
def test_collect_and_evaluate_say_when_no_env_can_step_instead_of_spinning_for_ever(manager_type, cfg):
    import numpy as np

    from ding_env import DingEnvWrapper, create_env_manager
    from ding_env.collector import collect
    from ding_env.errors import EnvStateError
    from ding_env.evaluator import evaluate
    from tests.conftest import manager_cfg

    def policy(obs):
        return np.zeros(len(obs), np.int64)

    fns = [lambda: DingEnvWrapper(cfg={"env_id": "CartPole-v1"})] * 2
    with create_env_manager(manager_cfg(manager_type, **cfg), fns) as manager:
        manager.seed(0)
        manager.launch()
        with pytest.raises(EnvStateError, match=r"evaluate\(3 episodes\) after 2: no env can step"):
            evaluate(manager, policy, n_episode=3)
        manager.reset()
        if cfg.get("auto_reset") is False:  # with episode_num, collect ends when every env finished (manager.done)
            with pytest.raises(EnvStateError, match=r"collect\(5000 steps\) after \d+: no env can step"):
                list(collect(manager, policy, n_steps=5000))


@pytest.mark.parametrize("device", [None, "cpu"])
def test_a_policy_that_takes_env_ids_gets_the_env_id_of_each_row(device):
    if device is not None:
        pytest.importorskip("torch", reason="the torch extra is not installed (make test installs it)")
    from ding_env import create_env_manager
    from tests.envs import CountingEnv

    class IdPolicy:
        takes_env_ids = True

        def __init__(self):
            self.given = []

        def __call__(self, obs, env_ids):
            self.given.append(np.asarray(env_ids).tolist())
            return np.zeros(len(env_ids), np.int64)

    with create_env_manager(dict(type="base"), [CountingEnv] * 3) as manager:
        manager.seed(0)
        manager.launch()
        policy = IdPolicy()
        batches = list(collect(manager, policy, 7, device=device))
        assert policy.given == [batch.env_id.tolist() for batch in batches] == [[0, 1, 2], [0, 1, 2], [0]]
        policy.given.clear()
        evaluate(manager, policy, 3, seed=0)
        assert policy.given and all(ids == sorted(set(ids)) for ids in policy.given)

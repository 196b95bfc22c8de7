"""The V2 managers of DI-engine's task pipelines: treetensor timesteps over the managers' own semantics."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from functools import partial
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from ding_env import BaseEnvManager, DingEnvWrapper, create_env_manager, setup_ding_env_manager
from ding_env.errors import ConfigError
from tests.envs import CountingEnv, DictActionEnv, DottedInfoEnv, InfoEnv, cartpole_fn
from tests.support import DI_ENGINE_VENV

with warnings.catch_warnings():  # treevalue registers itself with torch through a deprecated call
    warnings.simplefilter("ignore")
    import treetensor.numpy as tnp
    import treetensor.torch as ttorch

V2_TYPES = ["base_v2", "subprocess_v2"]
REPO = Path(__file__).resolve().parents[2]
DI_ENGINE_PYTHON = DI_ENGINE_VENV / "bin" / "python"


@pytest.fixture(params=V2_TYPES)
def make_v2(request):
    managers = []

    def make(env_fn, **cfg):
        manager = create_env_manager(dict(cfg, type=request.param), env_fn)
        managers.append(manager)
        return manager

    yield make
    for manager in managers:
        manager.close()


def lean_action(obs: np.ndarray) -> int:
    """Push the cart towards the side the pole leans to (the policy of di_engine_pipeline.py)."""
    return int(obs[2] > 0)


def expected_di_engine_results(env_num: int) -> dict:
    """What di_engine_pipeline.py must report, computed with the serial manager's dict API."""
    with BaseEnvManager([cartpole_fn] * env_num, {}) as evaluator:
        evaluator.seed(0, dynamic_seed=False)
        evaluator.launch()
        returns = {env_id: [] for env_id in range(env_num)}
        per_env = 4 // env_num  # DI-engine's VectorEvalMonitor splits the episodes evenly over the envs
        while any(len(done) < per_env for done in returns.values()):
            timesteps = evaluator.step({i: lean_action(obs) for i, obs in evaluator.ready_obs.items()})
            for env_id, timestep in timesteps.items():
                if timestep.done:
                    returns[env_id].append(timestep.info["eval_episode_return"])
    with BaseEnvManager([cartpole_fn] * env_num, {}) as collector:
        collector.seed(0)
        collector.launch()
        lengths, running, steps = [], [0] * env_num, 0
        for _ in range(150):
            timesteps = collector.step({i: lean_action(obs) for i, obs in collector.ready_obs.items()})
            for env_id, timestep in timesteps.items():
                steps += 1
                running[env_id] += 1
                if timestep.done:
                    lengths.append(running[env_id])
                    running[env_id] = 0
    eval_returns = [value for env_returns in returns.values() for value in env_returns[:per_env]]
    return {
        "eval_value": float(np.mean(eval_returns)),
        "env_step": steps,
        "env_episode": len(lengths),
        "episode_lengths": sorted(lengths),
    }


@pytest.mark.parametrize("manager_type", V2_TYPES)
def test_di_engine_task_pipeline_runs_on_the_v2_managers(manager_type):
    # DI-engine runs in its own venv, which `make test` builds (.venv-di-engine).
    result = subprocess.run(
        [str(DI_ENGINE_PYTHON), str(REPO / "tests" / "env_manager" / "di_engine_pipeline.py"), manager_type, "2"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    reported = json.loads(result.stdout.strip().splitlines()[-1])
    expected = expected_di_engine_results(2)
    assert reported == expected
    assert expected["env_episode"] >= 3  # the pipeline saw episodes end, not only steps


def test_v2_timesteps_match_the_dict_api(make_v2):
    fns = [partial(CountingEnv, {"limit": 4})] * 3  # episodes of 3..7 steps cut at 4: both ends occur
    reference = BaseEnvManager(fns, {})
    v2 = make_v2(fns)
    for manager in (reference, v2):
        manager.seed(5)
        manager.launch()
    ends = set()
    for step in range(12):
        assert v2.ready_obs_id == reference.ready_obs_id
        np.testing.assert_array_equal(v2.ready_obs, np.stack(list(reference.ready_obs.values())))
        actions = [(step + env_id) % 3 for env_id in v2.ready_obs_id]
        expected = reference.step(dict(zip(reference.ready_obs_id, actions, strict=True)))
        # A list on even steps, the actions stacked in one array on odd ones.
        got = v2.step(actions if step % 2 == 0 else np.array(actions, dtype=np.int64))
        assert [timestep.env_id.item() for timestep in got] == list(expected)
        for timestep, want in zip(got, expected.values(), strict=True):
            np.testing.assert_array_equal(timestep.obs, want.obs)
            np.testing.assert_array_equal(timestep.reward, want.reward)
            assert bool(timestep.done) is want.done
            assert bool(timestep.truncated) is want.truncated
            assert timestep.info.json() == want.info
            if want.done:
                ends.add(want.truncated)
    reference.close()
    assert ends == {True, False}


def test_v2_ready_obs_is_a_copy_and_stacks_dict_observations(make_v2):
    manager = make_v2([partial(CountingEnv, {"nested": True})] * 2)
    manager.seed(0)
    manager.launch()
    obs = manager.ready_obs
    assert isinstance(obs, tnp.ndarray)
    assert obs.vec.shape == (2, 2) and obs.count.shape == (2,)
    assert obs.pair.shape == (2, 2, 2)  # as DI-engine stacks it: env first, then the tuple
    before = obs.vec.copy()
    timesteps = manager.step([1, 1])
    np.testing.assert_array_equal(obs.vec, before)  # not a view of the managers' buffers
    np.testing.assert_array_equal(manager.ready_obs.vec[:, 0], [1.0, 1.0])
    assert ttorch.as_tensor(manager.ready_obs).vec.shape == (2, 2)  # what DI-engine's inferencer does
    np.testing.assert_array_equal(timesteps[0].obs.pair, np.stack([timesteps[0].obs.vec, -timesteps[0].obs.vec]))


def test_v2_takes_dict_actions_as_a_list_or_as_one_stacked_tree(make_v2):
    manager = make_v2([DictActionEnv] * 2)
    manager.seed(0)
    manager.launch()
    half, one = np.array([0.5], np.float32), np.ones(1, np.float32)
    listed = manager.step([{"push": 2, "scale": half}, {"push": 1, "scale": one}])
    assert [float(t.reward[0]) for t in listed] == [1.0 + 1.0, 1.0 + 1.0]
    stacked = tnp.array({"push": np.array([0, 2]), "scale": np.array([[1.0], [1.5]], np.float32)})
    assert [float(t.reward[0]) for t in manager.step(stacked)] == [2.0, 2.0 + 3.0]


def test_v2_infos_get_identifier_keys_and_convert_to_tensors(make_v2):
    manager = make_v2([InfoEnv] * 2)
    manager.seed(0)
    manager.launch()
    seen = set()
    for _ in range(30):
        for timestep in manager.step([0, 0]):
            seen.update(timestep.info.keys())
            assert "note" not in timestep.info  # strings cannot become tensors
            timestep.tensor()  # what DI-engine's rolloutor does with every timestep
    assert {"x", "frame", "alive", "extra", "truncated", "eval_episode_return"} <= seen


def test_v2_info_keys_become_identifiers_and_strings_are_left_out(make_v2):
    manager = make_v2([DottedInfoEnv] * 2)
    manager.launch()
    for timestep in manager.step([0, 0]):
        info = timestep.info
        assert sorted(info.keys()) == ["TimeLimit_truncated", "_3d", "sub"] and list(info.sub.keys()) == ["a_b"]
        assert (info.TimeLimit_truncated.item(), info._3d.item(), info.sub.a_b.item()) == (True, 1.0, 2)


def test_v2_step_names_the_ready_envs_when_the_action_count_differs(make_v2):
    manager = make_v2([CountingEnv] * 3)
    manager.launch()
    with pytest.raises(ValueError, match=r"expected 3 for envs \[0, 1, 2\], got 2"):
        manager.step([0, 0])
    assert manager.ready_obs_id == [0, 1, 2]  # nothing was stepped


def test_v2_managers_need_treetensor_and_say_how_to_install_it(monkeypatch):
    from ding_env.env_manager import BaseEnvManagerV2

    monkeypatch.setitem(sys.modules, "treetensor.numpy", None)  # as if DI-treetensor were not installed
    with pytest.raises(ImportError, match=r"BaseEnvManagerV2 .* pip install 'ding-env\[treetensor\]'"):
        BaseEnvManagerV2([CountingEnv], {})


@pytest.mark.parametrize("debug", [True, False])
def test_setup_ding_env_manager_runs_clones_of_one_wrapper(debug):
    template = DingEnvWrapper(gym.make("CartPole-v1"))
    manager = setup_ding_env_manager(template, 3, context="spawn", debug=debug, caller="evaluator")
    assert type(manager).__name__ == ("BaseEnvManagerV2" if debug else "SubprocessEnvManagerV2")
    assert debug or manager.config.context == "spawn"
    with manager:
        manager.seed(0)
        manager.launch()
        first = manager.ready_obs
        assert first.shape == (3, 4) and len({tuple(row) for row in first.tolist()}) == 3  # three envs, three seeds
        assert [timestep.env_id.item() for timestep in manager.step([0, 1, 0])] == [0, 1, 2]
    with pytest.raises(ConfigError, match="got 'learner'"):
        setup_ding_env_manager(template, 2, caller="learner")


# Each case imports torch and DI-engine in a fresh interpreter and trains 40 pipeline steps: on a loaded
# two-core machine that passes the suite's 60 s default, so the case gets the subprocess's own bound.
@pytest.mark.timeout(330)
@pytest.mark.parametrize(
    "example, manager",
    [
        ("dqn", "BaseEnvManagerV2"),  # DingEnvWrapper over legacy gym's CartPole-v0, DQN in torch
        ("dqn", "SubprocessEnvManagerV2"),  # the same, its legacy gym envs in worker processes
        ("sac", "BaseEnvManagerV2"),  # DI-engine's own PendulumEnv (its BaseEnv, gym's spaces), SAC in torch
    ],
)
def test_di_engine_examples_run_after_renaming_ding_envs(example, manager, tmp_path):
    # DI-engine's own ding/example/<example>.py (a task pipeline on BaseEnvManagerV2), with `ding.envs`
    # renamed to `ding_env`, the run cut to 40 steps of the pipeline, and the manager swapped for `manager`.
    found = subprocess.run(
        [str(DI_ENGINE_PYTHON), "-c", "import ding, os; print(os.path.dirname(ding.__file__))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert found.returncode == 0, found.stderr[-2000:]
    source = (Path(found.stdout.strip()) / "example" / f"{example}.py").read_text()
    for original in ("from ding.envs import", "BaseEnvManagerV2(", "task.run()"):
        assert original in source
    ported = source.replace("from ding.envs import", "from ding_env import").replace("task.run()", "task.run(40)")
    ported = ported.replace("BaseEnvManagerV2", manager)
    script = tmp_path / f"{example}_ported.py"
    script.write_text(f"import sys\nsys.path.append({str(REPO)!r})\n" + ported)
    result = subprocess.run(
        [str(DI_ENGINE_PYTHON), str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr[-3000:]
    log = result.stdout + result.stderr
    assert "Evaluation: Train Iter(0)" in log and "ding_env" in ported

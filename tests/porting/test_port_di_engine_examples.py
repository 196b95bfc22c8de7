"""DI-engine's example configs (``cfg`` + ``env = ding.envs.gym_env.env``) and its last env-layer modules, ported."""

from __future__ import annotations

import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

from ding_env.common import EnvElement
from ding_env.common.env_element_runner import EnvElementRunner
from ding_env.config import load_config_file
from ding_env.errors import ConfigError
from ding_env.gym_env import env as gym_env
from tests.porting.test_port import REPO, port_json
from tests.support import DI_ENGINE_VENV


def di_engine_example(relative: str):
    found = sorted(DI_ENGINE_VENV.glob(f"lib/python3*/site-packages/ding/config/example/{relative}"))
    assert found, f"DI-engine's venv is missing at {DI_ENGINE_VENV}: `make test` builds .venv-di-engine"
    return found[0]


def run_cli(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "ding_env", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_a_di_engine_example_config_ports_and_runs(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "pendulum.py").write_bytes(di_engine_example("SAC/gym_pendulum_v1.py").read_bytes())
    code, report = port_json("src", "--out", "port", cwd=tmp_path)
    assert code == 0 and report["items"] == [], report["items"]
    ported = (tmp_path / "port" / "pendulum.py").read_text()
    assert "import ding_env.gym_env" in ported and "env = ding_env.gym_env.env" in ported
    done = run_cli("run", "port/pendulum.py", "--steps", "40", "--eval-episodes", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "eval episodes        1" in done.stdout


@pytest.mark.parametrize(
    "example, code, says",
    [
        # The PPOF shape: the policy's settings with env_id at the top; legacy gym's LunarLander-v2, as DI-engine's.
        ("PPOF/gym_lunarlander_v2.py", 0, "not used here: policy"),
        # norm_obs / norm_reward with use_norm False, which DI-engine's gym_env ignored; a MuJoCo v3 id.
        ("DDPG/gym_hopper_v3.py", 1, "Gymnasium registers env_id 'Hopper-v3' but no longer makes it"),
    ],
)
def test_di_engine_example_configs_of_every_shape_load(example, code, says, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "example.py").write_bytes(di_engine_example(example).read_bytes())
    assert port_json("src", "--out", "port", cwd=tmp_path)[0] == 0
    done = run_cli("run", "port/example.py", "--steps", "20", "--eval-episodes", "1", cwd=tmp_path)
    assert done.returncode == code and says in done.stdout + done.stderr, done.stderr
    if code:
        assert "its current version is 'Hopper-v5': set env_id to it" in done.stderr


def test_a_normalisation_that_gym_env_would_not_apply_is_refused(tmp_path):
    path = tmp_path / "normed.py"
    path.write_text(
        "import ding_env.gym_env\n"
        "cfg = dict(env=dict(env_id='Pendulum-v1', norm_obs=dict(use_norm=True), norm_reward=dict(use_norm=False)))\n"
        "env = ding_env.gym_env.env\n"
    )
    with pytest.raises(ConfigError, match=r"normed\.py.*norm_obs=\{'use_norm': True\}.*'mujoco' env type"):
        load_config_file(path)
    with pytest.raises(ConfigError, match="norm_obs"):
        gym_env(dict(env_id="Pendulum-v1", norm_obs=dict(use_norm=True)))
    with pytest.raises(ConfigError, match="norm_reward=1"):
        gym_env(dict(env_id="Pendulum-v1", norm_reward=1))
    for asks_nothing in (dict(use_norm=False), None, False, 0):
        env = gym_env(dict(env_id="Pendulum-v1", norm_obs=asks_nothing, norm_reward=asks_nothing))
        assert env.observation_space.shape == (3,)
        env.close()


PARTIAL_CONFIG = """from functools import partial
import ding.envs.gym_env

cfg = dict(exp_name='lander', env=dict(env_id='LunarLander-v3', collector_env_num=2, evaluator_env_num=1))
env = partial(ding.envs.gym_env.env, continuous=True)
"""


def test_a_partial_of_gym_env_passes_its_keywords_to_gymnasium_make(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lander.py").write_text(PARTIAL_CONFIG)
    code, _ = port_json("src/lander.py", "--out", "port/lander.py", cwd=tmp_path)
    assert code == 0
    section = load_config_file(tmp_path / "port" / "lander.py").env
    assert section.make_kwargs == {"continuous": True}
    env = gym_env(section)
    try:
        assert isinstance(env.action_space, gym.spaces.Box) and env.action_space.shape == (2,)
    finally:
        env.close()


def test_an_example_config_with_another_env_factory_is_refused_naming_it(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text("cfg = dict(env=dict(env_id='CartPole-v1'))\nenv = print\n")
    with pytest.raises(ConfigError, match=r"mine\.py.*'env' must be ding_env\.gym_env\.env.*print"):
        load_config_file(path)


LAST_MODULES = """from ding.envs.env_manager.ding_env_manager import setup_ding_env_manager
from ding.envs.common.env_element_runner import EnvElementRunner
from ding.envs import DingEnvWrapper
import gymnasium as gym

manager = setup_ding_env_manager(DingEnvWrapper(gym.make('CartPole-v1')), 2, debug=True, caller='evaluator')
manager.seed(3)
manager.launch()
print(manager.ready_obs_id, EnvElementRunner.__module__)
manager.close()
"""


def test_di_engines_remaining_env_layer_modules_port_by_the_rename(tmp_path):
    (tmp_path / "uses.py").write_text(LAST_MODULES)
    code, report = port_json("uses.py", "--out", "port/uses.py", cwd=tmp_path)
    assert code == 0 and report["items"] == [], report["items"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "port/uses.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[0,", "1]", "ding_env.common.env_element_runner"]


class _Shape(EnvElement):
    def _init(self, shape):
        self._shape, self._value = shape, {"min": 0, "max": 1, "dtype": np.float32}

    def _details(self):
        return str(self._shape)


class _Runner(EnvElementRunner):
    def _init(self, shape):
        self._core = _Shape(shape)

    def get(self, engine):
        return np.zeros(self._core.info.shape, np.float32)

    def reset(self):
        pass


class _NoCore(_Runner):
    def _init(self, shape):
        self._shape = shape


def test_an_element_runner_describes_itself_by_its_core_and_needs_one():
    runner = _Runner((3,))
    assert runner.info.shape == (3,) and repr(runner) == "EnvElement: (3,)"
    assert runner.get(engine=None).shape == (3,)
    with pytest.raises(AssertionError, match="_NoCore._init must set self._core to an EnvElement, got NoneType"):
        _NoCore((3,))

"""The scan follows gym envs through the port's helpers and wrappers, and reports RecordVideo and Atari ids."""

from __future__ import annotations

from tests.porting.test_port import port_json

# As DI-engine's pomdp env: a helper module makes and wraps the env; the env gets it through a method.
WRAPPERS = """import gym


class FrameStackWrapper(gym.Wrapper):
    def reset(self):
        obs = self.env.reset()
        return obs

    def step(self, action):
        obs, reward, done, info = self.env.step(action)
        return obs, reward, done, info


class SkipWrapper(FrameStackWrapper):
    def reset(self):
        self.env.seed(0)
        return self.env.reset()


def wrap_deepmind(env_id):
    assert 'NoFrameskip' in env_id
    env = gym.make(env_id)
    env = FrameStackWrapper(env)
    return env


def ram_env():
    return gym.make('Pong-ramNoFrameskip-v4')
"""
ENV = """from ding.envs import BaseEnv
from .wrappers import wrap_deepmind


class AtariEnv(BaseEnv):
    def _make_env(self):
        return wrap_deepmind(self._cfg.env_id)

    def reset(self):
        self._env = self._make_env()
        self._env.seed(self._seed)
        obs = self._env.reset()
        return obs

    def step(self, action):
        obs, rew, done, info = self._env.step(action)
        return obs


class OwnEnv(BaseEnv):
    def reset(self):
        self._other = AtariEnv({})
        self._other.seed(0)  # ding-env's BaseEnv.seed: no hazard
        obs = self._other.reset()
        return obs
"""


def hazards(report: dict, path: str) -> dict[int, str]:
    return {
        item["line"]: item["what"] for item in report["items"] if item["path"] == path and item["kind"] == "hazards"
    }


def test_gym_envs_made_by_helpers_and_reached_in_wrappers_are_followed(tmp_path):
    """Only names bound to gym.make(...) in the same module were: none of these was reported."""
    (tmp_path / "atari").mkdir()
    (tmp_path / "atari" / "__init__.py").write_text("")
    (tmp_path / "atari" / "wrappers.py").write_text(WRAPPERS)
    (tmp_path / "atari" / "atari_env.py").write_text(ENV)
    _, report = port_json("atari", "--out", "ported/atari", cwd=tmp_path)
    env, wrappers = hazards(report, "atari_env.py"), hazards(report, "wrappers.py")
    assert "`self._env.seed()`: gym >= 0.26" in env[11] and "`obs = self._env.reset()`" in env[12]
    assert "step() returns 5 values" in env[16]
    assert not {line for line in env if line > 19}  # OwnEnv's calls are ding-env's BaseEnv's
    assert "`obs = self.env.reset()`" in wrappers[6] and "step() returns 5 values" in wrappers[10]
    assert "`self.env.seed()`" in wrappers[16]  # a subclass of a wrapper class of the module
    assert "makes Atari envs" in wrappers[22] and "legacy gym, where ale-py registers none" in wrappers[22]
    ram = next(item for item in report["items"] if item["path"] == "wrappers.py" and item["line"] == 28)
    assert "`gym.make('Pong-ramNoFrameskip-v4')`: no such env in legacy gym" in ram["what"]
    assert "gymnasium.make('ALE/Pong-v5', obs_type='ram', frameskip=1, repeat_action_probability=0.0)" in ram["fix"]


RECORDING = """import gym
import gymnasium


class Env:
    def reset(self):
        self._env = gym.make('Acrobot-v1')
        if self._replay_path is not None:
            self._env = gym.wrappers.RecordVideo(self._env, video_folder=self._replay_path)
        self._rendered = gymnasium.make('CartPole-v1', render_mode='rgb_array')
        self._rendered = gymnasium.wrappers.RecordVideo(self._rendered, video_folder=self._replay_path)
"""


def test_record_video_around_an_env_made_without_a_render_mode_is_a_hazard(tmp_path):
    (tmp_path / "rec_env.py").write_text(RECORDING)
    _, report = port_json("rec_env.py", "--out", "ported/rec_env.py", cwd=tmp_path)
    found = [item for item in report["items"] if "RecordVideo" in item["what"]]
    assert [item["line"] for item in found] == [9]  # not line 11: that env has render_mode='rgb_array'
    assert "self._env is made without render_mode" in found[0]["what"] and "env.replay_path" in found[0]["what"]
    assert "render_mode='rgb_array'" in found[0]["fix"] and "--set env.replay_path=none" in found[0]["fix"]

"""Envs written against the legacy gym API: reset() -> obs, step() -> 4-tuple, seed()."""

import contextlib

import numpy as np
import pytest

from ding_env import DingEnvWrapper
from ding_env.env_wrappers.legacy_gym import is_legacy_env
from tests.envs import Box, Discrete


class LegacyWalk:
    """Random walk: terminates at +-3, or hits a 20-step time limit reported gym-style."""

    observation_space = Box(-10, 10, (1,), np.float64)
    action_space = Discrete(2)

    def __init__(self):
        self.rng = np.random.default_rng()
        self.seeds = []

    def seed(self, seed=None):
        self.seeds.append(seed)
        self.rng = np.random.default_rng(seed)
        return [seed]

    def reset(self):
        self.pos, self.t = float(self.rng.integers(-1, 2)), 0
        return np.array([self.pos])

    def step(self, action):
        self.pos += 1.0 if action == 1 else -1.0
        self.t += 1
        info = {}
        done = abs(self.pos) >= 3
        if self.t >= 20 and not done:
            done, info = True, {"TimeLimit.truncated": True}
        return np.array([self.pos]), 1.0, done, info

    def close(self):
        pass


def test_detected_by_behaviour():
    assert is_legacy_env(LegacyWalk())


def test_legacy_env_follows_the_contract():
    legacy = LegacyWalk()
    env = DingEnvWrapper(legacy)
    env.seed(4, dynamic_seed=False)
    obs = env.reset()
    assert obs.dtype == np.float32 and env.observation_space.dtype == np.float32
    assert legacy.seeds == [4]
    timestep = env.step(1)
    assert timestep.reward.dtype == np.float32 and timestep.done is False


def test_legacy_time_limit_becomes_truncation():
    env = DingEnvWrapper(LegacyWalk())
    env.reset()
    for _ in range(20):
        timestep = env.step(0 if _ % 2 else 1)
        if timestep.done:
            break
    assert timestep.truncated and "TimeLimit.truncated" not in timestep.info


def test_legacy_termination_is_not_truncation():
    env = DingEnvWrapper(LegacyWalk())
    start = env.reset()[0]
    steps = 0
    while True:
        timestep = env.step(1)
        steps += 1
        if timestep.done:
            break
    assert timestep.terminated and timestep.obs[0] == 3.0
    assert steps == 3 - start and timestep.info["eval_episode_return"] == float(steps)


def test_seed_api_false_leaves_an_unseedable_env_unseeded():
    class NoSeed(LegacyWalk):
        seed = None  # an env without a seed() method

    env = DingEnvWrapper(NoSeed(), seed_api=False)  # DI-engine's argument for such envs
    env.seed(4, dynamic_seed=False)
    assert env.reset().shape == (1,) and env.step(1).obs.shape == (1,)
    seeded = DingEnvWrapper(NoSeed())
    seeded.seed(4, dynamic_seed=False)
    with pytest.raises(TypeError, match=r"has no seed\(\) method and its reset\(\) takes no seed, so it cannot be"):
        seeded.reset()


class TransitionalWalk(LegacyWalk):
    """gym 0.22-0.25: reset accepts seed (and return_info) but returns the observation alone."""

    def reset(self, *, seed=None, return_info=False, options=None):
        if seed is not None:
            self.seed(seed)
        return super().reset()


class Gym26Walk(LegacyWalk):
    """gym 0.26: Gymnasium's API (reset -> (obs, info), step -> 5 values) with gym's own spaces, no seed()."""

    seed = None

    def reset(self, *, seed=None, options=None):
        self.rng = np.random.default_rng(seed) if seed is not None else self.rng
        return LegacyWalk.reset(self), {"start": True}

    def step(self, action):
        obs, reward, done, info = LegacyWalk.step(self, action)
        truncated = info.pop("TimeLimit.truncated", False)
        return obs, reward, done and not truncated, truncated, info


@pytest.mark.parametrize("env_cls", [TransitionalWalk, Gym26Walk])
def test_every_gym_generation_runs_and_seeds(env_cls):
    assert is_legacy_env(env_cls())  # a reset that takes seed= does not make it a Gymnasium env
    episodes = []
    for _ in range(2):
        env = DingEnvWrapper(env_cls())
        env.seed(11, dynamic_seed=False)
        first = env.reset()
        assert first.dtype == np.float32 and env.observation_space.contains(first)
        timesteps = [env.step(1)]
        while not timesteps[-1].done:  # +1 each step from -1, 0 or 1 reaches +3 within 4 steps
            timesteps.append(env.step(1))
        assert 2 <= len(timesteps) <= 4 and not timesteps[-1].truncated
        episodes.append([first.tolist()] + [t.obs.tolist() for t in timesteps])
    assert episodes[0] == episodes[1]


def test_gym26_time_limit_stays_a_truncation():
    env = DingEnvWrapper(Gym26Walk())
    env.seed(0)
    env.reset()
    actions = [1, 0] * 10
    timesteps = [env.step(action) for action in actions]
    assert timesteps[-1].done and timesteps[-1].truncated and not any(t.done for t in timesteps[:-1])


def _gym_026_cartpole():
    import warnings

    with warnings.catch_warnings():  # gym 0.26 warns about itself on import
        warnings.simplefilter("ignore")
        import gym

    return DingEnvWrapper(gym.make("CartPole-v1"))


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess"])
@pytest.mark.parametrize("maker", ["DingEnvWrapper", "the env itself"])
def test_gym_026_envs_run_on_numpy_2_in_every_manager(manager_type, maker):
    """gym 0.26's passive env checker calls np.bool8, which numpy 2 removed.

    DingEnvWrapper takes the checker out of the envs it wraps; DI-engine's envs call gym.make themselves,
    and the checker they keep must not fail their first step either.
    """
    pytest.importorskip("gym", reason="legacy gym 0.26 (make test installs it)")
    from ding_env import create_env_manager
    from tests.conftest import manager_cfg
    from tests.envs import OwnGymMakeEnv

    env_fn = _gym_026_cartpole if maker == "DingEnvWrapper" else OwnGymMakeEnv
    with create_env_manager(manager_cfg(manager_type), [env_fn] * 2) as manager:
        manager.seed(0)
        manager.launch()
        episodes = 0
        for _ in range(60):
            timesteps = manager.step({env_id: 0 for env_id in manager.ready_obs_id})
            episodes += sum(timestep.done for timestep in timesteps.values())
        assert episodes >= 2  # pushing left ends CartPole within a few dozen steps


def test_our_wrappers_given_a_legacy_env_speak_gyms_api_back():
    """DI-engine's env code wraps gym.make envs with these wrappers and steps them in four values."""
    from ding_env.env_wrappers import EvalEpisodeReturnWrapper, ObsNormWrapper

    legacy = LegacyWalk()
    env = ObsNormWrapper(EvalEpisodeReturnWrapper(legacy))
    env.seed(5)
    obs = env.reset()
    assert legacy.seeds == [5] and obs.shape == (1,)
    steps = 0
    while True:
        obs, reward, done, info = env.step(0 if steps % 2 else 1)
        steps += 1
        if done:
            break
    assert steps == 20 and info["TimeLimit.truncated"] is True and info["eval_episode_return"] == 20.0
    assert env.reward_range == (-float("inf"), float("inf"))  # read by DI-engine's envs; Gymnasium 1.x dropped it
    assert isinstance(DingEnvWrapper(env).reset(), np.ndarray)  # the chain reads back into Gymnasium's API


def test_gym_026_checker_runs_its_checks_and_numpy_keeps_its_removals():
    """Only gym's checker module gets np.bool8 back once an env is built: its checks run, numpy is unchanged."""
    pytest.importorskip("gym", reason="legacy gym 0.26 (make test installs it)")
    import warnings

    from tests.envs import OwnGymMakeEnv

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import gym
        from gym.utils.passive_env_checker import env_step_passive_checker

    OwnGymMakeEnv()
    env = gym.make("CartPole-v1", disable_env_checker=True)
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="not within the observation space"):  # still reported by the checker
        env.unwrapped.state = np.array([np.nan, 0.0, 0.0, 0.0])
        env_step_passive_checker(env, 0)
    assert not hasattr(np, "bool8")


def test_an_id_only_legacy_gym_has_is_made_there_with_a_warning_and_a_mistyped_one_prints_no_gym_notice():
    import subprocess
    import sys

    pytest.importorskip("gym", reason="legacy gym 0.26 (make test installs it)")
    code = (
        "import warnings\n"
        "from ding_env import DingEnvWrapper\n"
        "try:\n    DingEnvWrapper(cfg={'env_id': 'CartPol-v1'}).reset()\n"
        "except Exception as error:\n    print(type(error).__name__)\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    print(DingEnvWrapper(cfg={'env_id': 'LunarLander-v2'}).reset().shape)\n"
        "print(*[str(warning.message) for warning in caught], sep='\\n')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Gym has been unmaintained" not in result.stderr  # legacy gym's own notice, about itself
    lines = result.stdout.splitlines()
    assert lines[:2] == ["ConfigError", "(8,)"]
    assert any(
        "Gymnasium has no env_id 'LunarLander-v2'" in line and "Please use `LunarLander-v3`" in line for line in lines
    )


@pytest.mark.parametrize(
    ("env_id", "make_kwargs", "current"),
    [
        ("LunarLanderContinuous-v2", {}, "LunarLanderContinuous-v3"),
        ("LunarLander-v2", {"continuous": True}, "LunarLander-v3"),  # the same env
        ("CarRacing-v2", {}, "CarRacing-v3"),
    ],
)
@pytest.mark.parametrize("is_gymnasium", [None, False])
def test_a_legacy_gym_env_that_cannot_step_under_numpy_2_is_refused_naming_gymnasiums_id(
    env_id, make_kwargs, current, is_gymnasium
):
    pytest.importorskip("gym", reason="legacy gym 0.26 (make test installs it)")
    from ding_env.errors import ConfigError

    env = DingEnvWrapper(cfg={"env_id": env_id, "make_kwargs": make_kwargs}, is_gymnasium=is_gymnasium)
    with pytest.warns(UserWarning) if is_gymnasium is None else contextlib.nullcontext():  # "made with legacy gym"
        with pytest.raises(ConfigError, match=f"legacy gym's '{env_id}'.* cannot step under numpy .*'{current}'"):
            env.reset()  # it failed at its first step, deep in Box2D, with a TypeError


def test_legacy_gyms_acrobot_which_cannot_step_under_numpy_2_is_refused_naming_gymnasiums_own():
    # It was made and reset, then its first step failed inside gym: np.float_ was removed in NumPy 2.0.
    pytest.importorskip("gym", reason="legacy gym 0.26 (make test installs it)")
    from ding_env.errors import ConfigError

    env = DingEnvWrapper(cfg={"env_id": "Acrobot-v1"}, is_gymnasium=False)
    refused = r"legacy gym's 'Acrobot-v1' cannot step .*np\.float_.*make it with Gymnasium"
    with pytest.raises(ConfigError, match=refused):
        env.reset()


def test_a_legacy_gym_envs_own_attributes_are_read_and_set_through_the_wrapper():
    pytest.importorskip("gym", reason="legacy gym 0.26 (make test installs it)")
    envs = [DingEnvWrapper(cfg={"env_id": "CartPole-v1"}, is_gymnasium=False) for _ in range(2)]
    for env in envs:
        env.seed(0, dynamic_seed=False)
    starts = [env.reset() for env in envs]
    np.testing.assert_array_equal(*starts)
    assert envs[0].gravity == 9.8  # the legacy CartPole's, under LegacyGymEnv
    envs[1].set_wrapper_attr("gravity", 30.0)
    assert envs[1].gravity == 30.0
    after = [env.step(0).obs for env in envs]
    assert after[0][3] != after[1][3]  # the heavier world's pole turns differently: the physics changed


@pytest.mark.parametrize(("env_id", "shape"), [("LunarLanderContinuous-v2", (8,)), ("CarRacing-v2", (96, 96, 3))])
def test_legacy_box2d_envs_made_discrete_step_under_numpy_2(env_id, shape):
    # Discrete actions hand Box2D Python floats; DI-engine's CarRacing config makes it so (it was refused).
    pytest.importorskip("gym", reason="legacy gym 0.26 (make test installs it)")
    env = DingEnvWrapper(cfg={"env_id": env_id, "make_kwargs": {"continuous": False}}, is_gymnasium=False)
    env.reset()
    assert env.step(np.array(0)).obs.shape == shape
    env.close()


class OldRenderWalk(LegacyWalk):
    """gym < 0.26: the render mode is an argument of each render() call, listed in metadata['render.modes']."""

    metadata = {"render.modes": ["human", "rgb_array"]}

    def render(self, mode="human"):
        assert mode == "rgb_array", mode  # 'human' would open a window
        return np.full((4, 6, 3), self.pos + 10, dtype=np.uint8)


class Gym25RenderWalk(OldRenderWalk):
    """gym 0.22-0.25: the modes under metadata['render_modes'], still taken by each render() call."""

    metadata = {"render_modes": ["human", "rgb_array"]}


def test_a_legacy_envs_frames_render_through_the_wrapper():
    # The wrapper said the env had no render mode, whatever it had been made with.
    import gym

    made = DingEnvWrapper(gym.make("CartPole-v1", render_mode="rgb_array"))
    made.reset()
    assert made.render().shape == (400, 600, 3)
    for env_cls in (OldRenderWalk, Gym25RenderWalk):
        old = DingEnvWrapper(env_cls())
        old.seed(0)
        old.reset()
        assert old.render().shape == (4, 6, 3)


def test_a_legacy_gym_env_made_by_id_records_replays(tmp_path):
    # It was made without a render mode: enable_save_replay failed at the first reset.
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"}, is_gymnasium=False)
    env.enable_save_replay(str(tmp_path))
    env.seed(0)
    env.reset()
    while not env.step(env.random_action()).done:
        pass
    env.close()
    assert [video.name.endswith("-episode0000.mp4") for video in tmp_path.glob("*.mp4")] == [True]

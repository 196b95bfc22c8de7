"""ManagerVecEnv: Stable-Baselines3's VecEnv over every manager, and SB3's PPO training through it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from functools import partial

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3", reason="the sb3 extra is not installed (make test installs it)")

from stable_baselines3.common.env_util import is_wrapped  # noqa: E402
from stable_baselines3.common.monitor import Monitor  # noqa: E402
from stable_baselines3.common.utils import obs_as_tensor  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, VecCheckNan, VecMonitor, VecNormalize  # noqa: E402

from ding_env import DingEnvWrapper, create_env_manager  # noqa: E402
from ding_env.errors import EnvError  # noqa: E402
from ding_env.sb3 import ManagerVecEnv  # noqa: E402
from ding_env.vector import ManagerVectorEnv  # noqa: E402

# noqa: E402
from tests.envs import BaseEnvAsGymnasiumEnv, CountingEnv, cartpole_fn  # noqa: E402


def assert_same_step(ours, expected):
    (obs, rewards, dones, infos), (ref_obs, ref_rewards, ref_dones, ref_infos) = ours, expected
    np.testing.assert_array_equal(obs, ref_obs)
    np.testing.assert_array_equal(rewards, ref_rewards)
    assert rewards.dtype == ref_rewards.dtype == np.float32
    np.testing.assert_array_equal(dones, ref_dones)
    assert len(infos) == len(ref_infos)
    for info, ref_info in zip(infos, ref_infos, strict=True):
        assert info.keys() == ref_info.keys()
        for key, value in info.items():
            np.testing.assert_array_equal(value, ref_info[key], err_msg=key)


@pytest.mark.parametrize(
    "env_fn", [partial(CountingEnv, {"limit": 5}), cartpole_fn], ids=["counting_with_truncation", "cartpole"]
)
def test_same_steps_as_dummy_vec_env(make_adapted, env_fn):
    env_fns = [env_fn] * 3
    ours = make_adapted(ManagerVecEnv, env_fns)
    reference = DummyVecEnv([partial(BaseEnvAsGymnasiumEnv, fn) for fn in env_fns])
    assert ours.observation_space == reference.observation_space and ours.action_space == reference.action_space
    ours.seed(11), reference.seed(11)
    np.testing.assert_array_equal(ours.reset(), reference.reset())
    reference.action_space.seed(0)
    ends = {"terminal": 0, "truncated": 0}
    for _ in range(60):
        actions = np.array([reference.action_space.sample() for _ in range(3)])
        step = ours.step(actions)
        assert_same_step(step, reference.step(actions))
        for done, info in zip(step[2], step[3], strict=True):
            if done:
                ends["truncated" if info["TimeLimit.truncated"] else "terminal"] += 1
    assert ends["terminal"] > 0
    if env_fn is not cartpole_fn:
        assert ends["truncated"] > 0


def test_terminal_observation_is_the_final_one(make_adapted):
    venv = make_adapted(ManagerVecEnv, [partial(CountingEnv, {"limit": 4})] * 2)
    venv.seed(0)
    obs = venv.reset()
    for _ in range(8):
        previous = obs
        obs, _, dones, infos = venv.step(np.zeros(2, np.int64))
        if dones.any():
            break
    for row in np.flatnonzero(dones):
        assert infos[row]["terminal_observation"][0] == previous[row][0] + 1
        assert obs[row][0] == 0  # the reset observation
        assert infos[row]["TimeLimit.truncated"] == infos[row]["truncated"]


def test_sb3_wrappers_and_evaluation_run_over_it(make_adapted):
    venv = VecNormalize(VecMonitor(VecCheckNan(make_adapted(ManagerVecEnv, [cartpole_fn] * 2), raise_exception=True)))
    venv.seed(0)
    venv.action_space.seed(0)  # unseeded random actions let both envs outlast the loop now and then
    venv.reset()
    episodes = 0
    for _ in range(60):
        *_, infos = venv.step(np.array([venv.action_space.sample() for _ in range(2)]))
        episodes += sum("episode" in info for info in infos)
    assert episodes > 0  # VecMonitor saw episodes end through the dones and terminal observations
    assert obs_as_tensor(venv.reset(), "cpu").shape == (2, 4)
    assert not is_wrapped(venv, Monitor)


def test_seed_env_method_and_get_attr(make_adapted):
    venv = make_adapted(ManagerVecEnv, [partial(CountingEnv, {"limit": 100})] * 3)
    assert venv.seed(5) == [5, 6, 7]
    first = venv.reset()
    venv.step(np.zeros(3, np.int64))
    assert venv.env_method("current_step") == [1, 1, 1]
    assert venv.env_method("current_step", indices=[0, 1, 2]) == [1, 1, 1]
    lengths = venv.get_attr("episode_length")
    assert venv.get_attr("episode_length", indices=[2]) == lengths[2:]
    venv.seed(5)
    np.testing.assert_array_equal(venv.reset(), first)
    venv.step(np.zeros(3, np.int64))
    assert venv.env_method("current_step", indices=[1]) == [1]  # one env of the manager, as SB3 asks
    venv.set_attr("marker", 7)
    venv.set_attr("marker", 8, indices=[1])
    assert venv.get_attr("marker") == [7, 8, 7]
    with pytest.raises(AttributeError, match="'seed' is an attribute of"):
        venv.get_attr("seed")


def test_ppo_trains_cartpole_through_the_subprocess_manager(tmp_path):
    # rl-zoo's CartPole settings solve it in ~10k steps (seconds); the budget leaves room for a loaded machine.
    start = time.monotonic()
    completed = subprocess.run(
        [sys.executable, "-m", "dizoo.classic_control.cartpole.entry.cartpole_sb3_ppo", "--seed", "0"],
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
        env={**os.environ, "SB3_LOGDIR": str(tmp_path)},  # SB3's learn() logs there, not in a new /tmp/SB3-<time>
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    last = completed.stdout.strip().splitlines()[-1]
    mean = float(last.split("final eval return ")[1].split()[0])
    assert mean >= 195, completed.stdout
    assert "stop value reached: True" in last
    assert time.monotonic() - start < 150


def test_reset_options_and_the_gymnasium_envs_attributes_reach_the_env_as_in_dummy_vec_env(make_adapted):
    fns = [partial(DingEnvWrapper, cfg={"env_id": "CartPole-v1"})] * 2
    venv = make_adapted(ManagerVecEnv, fns)
    reference = DummyVecEnv([lambda: gym.make("CartPole-v1")] * 2)
    try:
        for vec in (venv, reference):
            vec.seed(0)
            vec.set_options({"low": -0.001, "high": 0.001})  # CartPole's reset options: a narrower start
        assert np.abs(venv.reset()).max() <= 0.001
        assert np.abs(reference.reset()).max() <= 0.001
        for _ in range(20):  # the auto-resets of the next episodes keep them (the managers keep reset params)...
            venv.step(np.zeros(2, np.int64))
        assert np.abs(venv.reset()).max() > 0.001  # ...until a reset() without options, as in SB3's vec envs
        assert venv.get_attr("gravity") == reference.get_attr("gravity") == [9.8, 9.8]
        venv.set_attr("gravity", 100.0, indices=[1])
        assert venv.get_attr("gravity") == [9.8, 100.0]
        assert venv.env_method("get_wrapper_attr", "gravity") == [9.8, 100.0]
        # The physics changed where the Gymnasium env holds it: from the same start, the two envs part.
        venv.manager.seed({0: 3, 1: 3}, dynamic_seed=False)
        obs = venv.reset()
        np.testing.assert_array_equal(obs[0], obs[1])
        obs, _, _, _ = venv.step(np.zeros(2, np.int64))
        assert obs[0][3] != obs[1][3]  # the pole's angular velocity
    finally:
        reference.close()


RENDERING_CARTPOLE = partial(DingEnvWrapper, cfg={"env_id": "CartPole-v1", "make_kwargs": {"render_mode": "rgb_array"}})


def test_render_mode_images_and_render_are_the_envs_as_in_dummy_vec_env(make_adapted):
    venv = make_adapted(ManagerVecEnv, [RENDERING_CARTPOLE] * 2)
    reference = DummyVecEnv([partial(gym.make, "CartPole-v1", render_mode="rgb_array")] * 2)
    try:
        assert venv.render_mode == reference.render_mode == "rgb_array"
        assert venv.get_attr("render_mode") == ["rgb_array", "rgb_array"]
        assert venv.metadata["render_fps"] == 50  # what VecVideoRecorder records at
        assert venv.metadata["render_modes"] == reference.metadata["render_modes"]
        # Fixed seeds 3 + i (not the managers' dynamic ones): the envs start where DummyVecEnv's do.
        venv.manager.seed(3, dynamic_seed=False)
        reference.seed(3)
        venv.reset(), reference.reset()
        for _ in range(3):
            venv.step(np.array([0, 1])), reference.step(np.array([0, 1]))
        images = venv.get_images()
        assert len(images) == 2 and not np.array_equal(images[0], images[1])
        for image, want in zip(images, reference.get_images(), strict=True):
            np.testing.assert_array_equal(image, want)
        # VecVideoRecorder records render(): the envs' frames tiled into one, as DummyVecEnv tiles them.
        np.testing.assert_array_equal(venv.render(mode="rgb_array"), reference.render(mode="rgb_array"))
    finally:
        reference.close()


def test_images_of_envs_without_a_render_mode_are_none_with_a_warning_as_in_dummy_vec_env(make_adapted):
    venv = make_adapted(ManagerVecEnv, [partial(CountingEnv, {})] * 2)
    with pytest.warns(UserWarning, match="The render mode is None"):
        assert venv.get_images() == [None, None]


def test_what_is_not_a_manager_is_refused_naming_what_to_give():
    with pytest.raises(TypeError, match=r"ManagerVecEnv takes an env manager .*got list .*wrap each Gymnasium env"):
        ManagerVecEnv([lambda: gym.make("CartPole-v1")])
    vector_env = ManagerVectorEnv([partial(CountingEnv, {})])
    try:
        with pytest.raises(TypeError, match=r"got ManagerVectorEnv .*ManagerVecEnv\(envs\.manager\)"):
            ManagerVecEnv(vector_env)
    finally:
        vector_env.close()


def test_a_manager_of_gymnasium_envs_not_wrapped_is_refused_with_the_reason(make_adapted):
    # The launch, at construction, names the env and how to wrap it (reading a space first gave an AttributeError).
    with pytest.raises(EnvError, match=r"env_fn returned a gymnasium env \(TimeLimit\).*DingEnvWrapper"):
        make_adapted(ManagerVecEnv, [partial(gym.make, "CartPole-v1")] * 2)


@pytest.mark.parametrize(
    ("cfg", "setting"), [({"auto_reset": False}, "auto_reset=False"), ({"episode_num": 2}, "episode_num=2")]
)
def test_a_manager_whose_envs_do_not_auto_reset_is_refused_naming_the_setting(make_adapted, cfg, setting):
    with pytest.raises(ValueError, match=rf"ManagerVecEnv steps every env .* has {setting}; create it with"):
        make_adapted(ManagerVecEnv, [partial(CountingEnv, {"limit": 3})] * 2, **cfg)


def test_a_manager_sb3_refuses_after_its_launch_is_closed_again():
    rendered = partial(DingEnvWrapper, cfg={"env_id": "CartPole-v1", "make_kwargs": {"render_mode": "rgb_array"}})
    manager = create_env_manager(
        {"type": "subprocess"}, [rendered, partial(DingEnvWrapper, cfg={"env_id": "CartPole-v1"})]
    )
    with pytest.raises(AssertionError):  # SB3's own check: one render mode for every env
        ManagerVecEnv(manager)
    assert manager.closed  # its workers are not left running


def _monitored_cartpole():
    return Monitor(gym.make("CartPole-v1"))


def _ding_monitored_cartpole():
    return DingEnvWrapper(_monitored_cartpole())


def test_env_is_wrapped_looks_at_the_gymnasium_env_as_dummy_vec_env_does(make_adapted):
    ours = make_adapted(ManagerVecEnv, [_ding_monitored_cartpole] * 2)
    dummy = DummyVecEnv([_monitored_cartpole] * 2)
    for wrapper in (Monitor, gym.wrappers.TimeLimit, gym.Wrapper, gym.wrappers.RecordEpisodeStatistics):
        assert ours.env_is_wrapped(wrapper) == dummy.env_is_wrapped(wrapper), wrapper
    assert ours.env_is_wrapped(Monitor, indices=[1]) == [True]
    assert make_adapted(ManagerVecEnv, [partial(CountingEnv, {"limit": 5})]).env_is_wrapped(Monitor) == [False]
    dummy.close()


def pendulum():
    return DingEnvWrapper(cfg={"env_id": "Pendulum-v1"})


@pytest.mark.parametrize("make_adapted", ["base", "subprocess"], indirect=True)
def test_actions_a_rounding_error_outside_the_bounds_are_taken_as_sb3_off_policy_algorithms_give_them(make_adapted):
    venv = make_adapted(ManagerVecEnv, [pendulum] * 2)
    venv.reset()
    high = venv.action_space.high  # 2.0: SB3's unscale_action may land a float32 unit above it
    just_above = np.nextafter(high, np.float32(np.inf), dtype=np.float32)
    venv.step(np.stack([just_above, -just_above]))  # on the bounds, as DummyVecEnv's envs clip it
    with pytest.raises(ValueError, match="outside the bounds"):
        venv.step(np.stack([high + np.float32(0.1), high]))  # a real mistake is still refused

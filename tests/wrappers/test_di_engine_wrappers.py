"""The rest of DI-engine's ``ding.envs`` wrappers and helpers, under its names, as Gymnasium wrappers."""

import gymnasium as gym
import numpy as np
import pytest

from ding_env import BaseEnvManager, DingEnvWrapper, SyncSubprocessEnvManager
from ding_env.common import affine_transform, save_frames_as_gif
from ding_env.env_wrappers import (
    AllinObsWrapper,
    ClipRewardWrapper,
    DelayRewardWrapper,
    FlatObsWrapper,
    GymHybridDictActionWrapper,
    GymToGymnasiumWrapper,
    ObsPlusPrevActRewWrapper,
    ObsTransposeWrapper,
    RewardNormWrapper,
    RunningMeanStd,
    StaticObsNormWrapper,
    TransposeWrapper,
    create_env_wrapper,
    get_default_wrappers,
)
from ding_env.errors import ConfigError
from tests.envs import CountingEnv, ImageEnv


class HybridEnv(gym.Env):
    """Gym-Hybrid's action form: ``(kind, parameters)``; records what it receives."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Tuple(
        (gym.spaces.Discrete(3), gym.spaces.Box(np.array([0.0, -1.0], np.float32), np.ones(2, np.float32)))
    )

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.received = action
        return np.zeros(2, np.float32), 0.0, False, False, {}


class MissionEnv(gym.Env):
    """MiniGrid's observation form: an image and a mission text."""

    observation_space = gym.spaces.Dict(
        {"image": gym.spaces.Box(0, 255, (2, 2, 3), np.uint8), "mission": gym.spaces.Text(96)}
    )
    action_space = gym.spaces.Discrete(2)

    def __init__(self, mission="go to, a b"):
        self.mission = mission

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return {"image": np.arange(12, dtype=np.uint8).reshape(2, 2, 3), "mission": self.mission}, {}

    def step(self, action):
        return self.reset()[0], 0.0, False, False, {}


def rewards_until_done(env, action=0):
    env.reset(seed=3)
    rewards = []
    while True:
        _, reward, terminated, truncated, _ = env.step(action)
        rewards.append(reward)
        if terminated or truncated:
            return rewards, terminated, truncated


def test_delay_reward_pays_the_held_sum_every_n_steps_and_at_the_end():
    plain, _, _ = rewards_until_done(gym.make("CartPole-v1"))
    delayed, terminated, _ = rewards_until_done(DelayRewardWrapper(gym.make("CartPole-v1"), delay_reward_step=3))
    assert terminated and len(delayed) == len(plain) and sum(delayed) == sum(plain)
    paid = [index for index, reward in enumerate(delayed) if reward]
    assert paid == sorted(set(range(2, len(delayed), 3)) | {len(delayed) - 1})
    assert delayed[2] == 3.0
    truncated_run = rewards_until_done(DelayRewardWrapper(gym.make("CartPole-v1", max_episode_steps=4), 3), 1)
    assert truncated_run[0] == [0.0, 0.0, 3.0, 1.0] and truncated_run[2]  # the cut-short episode pays too
    with pytest.raises(ValueError, match="delay_reward_step must be an int >= 0, got -1"):
        DelayRewardWrapper(gym.make("CartPole-v1"), -1)


def test_static_obs_norm_uses_the_given_statistics_and_clips():
    mean, std = np.array([0.0, 0.0, 0.0, 0.0]), np.array([0.01, 1.0, 0.01, 1.0])
    env = StaticObsNormWrapper(gym.make("CartPole-v1"), mean, std)
    raw, _ = gym.make("CartPole-v1").reset(seed=1)
    obs, _ = env.reset(seed=1)
    np.testing.assert_allclose(obs, np.clip(raw / std, -3, 3).astype(np.float32))
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    with pytest.raises(ValueError, match=r"mean of shape \(3,\) does not fit observations of shape \(4,\)"):
        StaticObsNormWrapper(gym.make("CartPole-v1"), np.zeros(3), np.ones(4))
    with pytest.raises(ValueError, match="std must be > 0"):
        StaticObsNormWrapper(gym.make("CartPole-v1"), 0.0, np.array([1.0, 0.0, 1.0, 1.0]))


def test_transpose_wrapper_is_the_channel_first_transpose():
    env = TransposeWrapper(ImageEnv())
    assert isinstance(env, ObsTransposeWrapper)
    obs, _ = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape == (3, 6, 5)


def test_flat_obs_encodes_the_image_and_the_mission():
    env = FlatObsWrapper(MissionEnv())
    obs, _ = env.reset()
    assert obs.shape == env.observation_space.shape == (12 + 28 * 96,) and obs.dtype == np.float32
    np.testing.assert_array_equal(obs[:12], np.arange(12))
    codes = obs[12:].reshape(96, 28)
    assert codes.sum() == len("go to, a b")
    assert [int(np.argmax(row)) for row in codes[:6]] == [6, 14, 26, 19, 14, 27]  # g o ' ' t o ','
    with pytest.raises(ValueError, match=r"holds '!'"):
        FlatObsWrapper(MissionEnv("go!")).reset()
    with pytest.raises(ValueError, match="longer than maxStrLen=4"):
        FlatObsWrapper(MissionEnv("go to"), maxStrLen=4).reset()
    with pytest.raises(TypeError, match="'image' and 'mission'"):
        FlatObsWrapper(gym.make("CartPole-v1"))


def test_obs_plus_prev_action_reward_shows_the_step_before():
    env = ObsPlusPrevActRewWrapper(gym.make("CartPole-v1"))
    obs, _ = env.reset(seed=0)
    assert obs["prev_action"] == -1 and obs["prev_reward_extrinsic"].tolist() == [0.0]
    first, *_ = env.step(1)
    second, *_ = env.step(0)
    assert first["prev_action"] == -1 and second["prev_action"] == 1
    assert second["prev_reward_extrinsic"].dtype == np.float32 and second["prev_reward_extrinsic"].tolist() == [1.0]
    for observation in (obs, first, second):
        assert env.observation_space.contains(observation)
    obs, _ = env.reset()
    assert obs["prev_action"] == -1 and obs["prev_reward_extrinsic"].tolist() == [0.0]  # DI-engine's kept the old ones


def test_gym_hybrid_dict_action_reaches_the_env_as_its_tuple():
    env = GymHybridDictActionWrapper(HybridEnv())
    assert set(env.action_space.spaces) == {"type", "mask", "args"}
    env.reset(seed=0)
    action = {"type": 2, "mask": np.array([0, 1]), "args": np.array([0.5, -0.5], np.float32)}
    env.step(action)
    assert env.unwrapped.received[0] == 2
    np.testing.assert_array_equal(env.unwrapped.received[1], [0.5, -0.5])
    assert env.action_space.contains(env.action_space.sample())
    with pytest.raises(TypeError, match=r"Tuple\(Discrete, Box\)"):
        GymHybridDictActionWrapper(gym.make("CartPole-v1"))
    wrapped = DingEnvWrapper(HybridEnv(), cfg={"env_wrapper": "gym_hybrid_default"})
    assert isinstance(wrapped.action_space, gym.spaces.Dict)
    wrapped.close()


def test_gym_to_gymnasium_keeps_truncation_apart_through_ding_env_wrapper():
    legacy = GymToGymnasiumWrapper(gym.make("CartPole-v1", max_episode_steps=5))
    legacy.seed(4)
    first = legacy.reset()
    np.testing.assert_array_equal(first, gym.make("CartPole-v1").reset(seed=4)[0])
    results = [legacy.step(1) for _ in range(5)]
    assert all(len(result) == 4 for result in results)
    assert results[-1][2] and results[-1][3]["TimeLimit.truncated"]
    # DingEnvWrapper reads it back as a Gymnasium env, with the truncation DI-engine's version lost.
    for env in (
        DingEnvWrapper(GymToGymnasiumWrapper(gym.make("CartPole-v1", max_episode_steps=5))),
        DingEnvWrapper(gym.make("CartPole-v1", max_episode_steps=5), cfg={"env_wrapper": [GymToGymnasiumWrapper]}),
    ):
        env.seed(0)
        env.reset()
        timesteps = [env.step(np.int64(1)) for _ in range(5)]
        assert [t.done for t in timesteps] == [False] * 4 + [True]
        assert timesteps[-1].truncated and not timesteps[-1].terminated
        env.close()


def allin_counting_env():
    return AllinObsWrapper(CountingEnv({"limit": 5}))


def test_allin_obs_puts_the_reward_in_the_observation_in_every_manager():
    fns = [allin_counting_env] * 2
    traces = []
    for manager_cls in (BaseEnvManager, SyncSubprocessEnvManager):
        with manager_cls(fns, {}) as manager:
            manager.seed(2)
            manager.launch()
            assert manager.ready_obs[0]["reward"].tolist() == [0.0]
            trace = []
            for _ in range(8):
                for env_id, timestep in manager.step({0: 1, 1: 2}).items():
                    assert timestep.obs["reward"].tolist() == timestep.reward.tolist()
                    trace.append((env_id, timestep.obs["obs"].tolist(), timestep.reward.tolist(), timestep.done))
            traces.append(trace)
    assert traces[0] == traces[1]
    assert repr(AllinObsWrapper(CountingEnv())) == "AllinObsWrapper(CountingEnv())"


def test_running_mean_std_tracks_batches_and_resets():
    stats = RunningMeanStd(shape=(2,))
    data = np.random.default_rng(0).normal([1.0, -2.0], [0.5, 3.0], size=(400, 2))
    for batch in np.split(data, 4):
        stats.update(batch)
    np.testing.assert_allclose(stats.mean, data.mean(axis=0), rtol=1e-4)
    np.testing.assert_allclose(stats.std, data.std(axis=0) + 1e-4, rtol=1e-3)
    stats.reset()
    assert stats.mean.tolist() == [0.0, 0.0] and stats.var.tolist() == [1.0, 1.0]


def test_reward_norm_takes_di_engine_reward_discount():
    assert RewardNormWrapper(gym.make("CartPole-v1"), reward_discount=0.9).gamma == 0.9


def test_di_engine_wrapper_specs_use_di_engine_names():
    env = create_env_wrapper(ImageEnv(), {"type": "clip_reward"})
    assert isinstance(env, ClipRewardWrapper)  # DI-engine's clip_reward is the sign, not Gymnasium's ClipReward
    env.reset(seed=0)
    assert [env.step(0)[1] for _ in range(3)] == [-1.0, 0.0, 1.0]
    stacked = create_env_wrapper(ImageEnv(), {"type": "frame_stack", "kwargs": {"n_frames": 2}})
    assert stacked.observation_space.shape == (2, 6, 5, 3)
    doubled = create_env_wrapper(
        gym.make("CartPole-v1"), {"type": "double_reward", "import_names": ["tests.wrappers.registers_a_wrapper"]}
    )
    doubled.reset(seed=0)
    assert doubled.step(0)[1] == 2.0
    with pytest.raises(ConfigError, match="unknown wrapper 'no_such'; registered wrappers: .*noop"):
        create_env_wrapper(ImageEnv(), {"type": "no_such"})
    with pytest.raises(
        ConfigError, match="cannot import 'no.such.module' listed in the env_wrapper spec's import_names"
    ):
        create_env_wrapper(ImageEnv(), {"type": "clip_reward", "import_names": ["no.such.module"]})
    with pytest.raises(ConfigError, match="'kwarg'"):
        create_env_wrapper(ImageEnv(), {"type": "clip_reward", "kwarg": {}})
    wrapped = DingEnvWrapper(ImageEnv(), cfg={"env_wrapper": [{"type": "obs_transpose"}]})
    assert wrapped.observation_space.shape == (3, 6, 5)
    wrapped.close()


@pytest.mark.parametrize("caller", ["collector", "evaluator"])
def test_get_default_wrappers_builds_di_engine_atari_chain(caller):
    specs = get_default_wrappers("atari_default", "PongNoFrameskip-v4", caller)
    types = [spec.type for spec in specs]
    assert ("clip_reward" in types) == (caller == "collector") and "fire_reset" in types
    assert "fire_reset" not in [spec.type for spec in get_default_wrappers("atari_default", "Breakout-v4")]
    import ale_py

    gym.register_envs(ale_py)
    env = gym.make("PongNoFrameskip-v4")
    for spec in specs:
        env = create_env_wrapper(env, spec)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4, 84, 84) and obs.dtype == np.float32 and 0.0 <= obs.min() <= obs.max() <= 1.0
    env.close()
    assert [spec.type for spec in get_default_wrappers("default")] == ["eval_episode_return"]
    with pytest.raises(ConfigError, match="got 'nope'"):
        get_default_wrappers("nope")


def test_affine_transform_maps_minus_one_one_onto_the_range():
    np.testing.assert_allclose(affine_transform(np.array([-1.0, 0.0, 1.0, 3.0]), min_val=-2, max_val=4), [-2, 1, 4, 4])
    np.testing.assert_allclose(affine_transform(np.array([2.0]), action_clip=False, alpha=2.0, beta=1.0), [5.0])
    with pytest.raises(ValueError, match="min_val and max_val together"):
        affine_transform(np.zeros(1), min_val=0)
    with pytest.raises(ValueError, match="give alpha"):
        affine_transform(np.zeros(1))


def test_save_frames_as_gif(tmp_path):
    import imageio

    frames = [np.full((8, 8, 3), value, np.uint8) for value in (0, 120, 240)]
    save_frames_as_gif(frames, str(tmp_path / "episode.gif"))
    assert len(imageio.mimread(tmp_path / "episode.gif")) == 3


def test_di_engine_classic_control_keys():
    from dizoo.classic_control.cartpole.envs import CartPoleEnv
    from dizoo.classic_control.pendulum.envs import PendulumEnv

    discrete = PendulumEnv({"continuous": False, "act_scale": True})
    assert discrete.action_space == gym.spaces.Discrete(11)
    discrete.reset()
    np.testing.assert_allclose(discrete.env.action(np.int64(10)), [2.0])  # the grid's last action: full torque
    np.testing.assert_allclose(discrete.env.action(np.int64(5)), [0.0])
    assert discrete.step(np.int64(3)).obs.shape == (3,)
    r2d2 = CartPoleEnv({"obs_plus_prev_action_reward": True})
    obs = r2d2.reset()
    assert set(obs) == {"obs", "prev_action", "prev_reward_extrinsic"} and obs["prev_action"] == -1
    assert r2d2.step(np.int64(1)).obs["prev_action"] == -1 and r2d2.step(np.int64(0)).obs["prev_action"] == 1
    normed = PendulumEnv({"norm_obs": {"use_norm": True}})
    normed.reset()
    assert "ObsNormWrapper" in str(normed.env)


@pytest.mark.parametrize("spec_key", ["name", "type"])
def test_a_wrapper_name_means_one_wrapper_in_either_spec_form(spec_key):
    # clip_reward and frame_stack keep DI-engine's meanings; Gymnasium's wrappers of those kinds have their own names.
    clipped = DingEnvWrapper(ImageEnv(), cfg={"env_wrapper": [{spec_key: "clip_reward"}]})
    clipped.reset()
    assert [float(clipped.step(0).reward[0]) for _ in range(3)] == [-1.0, 0.0, 1.0]
    ranged = DingEnvWrapper(
        ImageEnv(), cfg={"env_wrapper": [{spec_key: "clip_reward_range", "kwargs": {"min_reward": -0.5}}]}
    )
    ranged.reset()
    assert [float(ranged.step(0).reward[0]) for _ in range(3)] == [-0.5, 0.0, 1.0]
    stacked = DingEnvWrapper(ImageEnv(), cfg={"env_wrapper": [{spec_key: "frame_stack", "kwargs": {"n_frames": 2}}]})
    observation = DingEnvWrapper(
        ImageEnv(), cfg={"env_wrapper": [{spec_key: "frame_stack_observation", "kwargs": {"stack_size": 2}}]}
    )
    assert stacked.observation_space.shape == observation.observation_space.shape == (2, 6, 5, 3)
    for env in (clipped, ranged, stacked, observation):
        env.close()

"""Atari through DingEnvWrapper: family detection, DeepMind preprocessing, collector vs evaluator."""

from functools import partial

import numpy as np
import pytest

pytest.importorskip("ale_py", reason="the atari extra (make test installs it)")
pytest.importorskip("cv2", reason="the atari extra (make test installs it)")

from ding_env import DingEnvWrapper  # noqa: E402
from ding_env.env_wrappers.family import ATARI, family_of_env_id  # noqa: E402
from ding_env.errors import ConfigError  # noqa: E402


def atari(env_id="ALE/Pong-v5", **cfg):
    env = DingEnvWrapper(cfg=dict(cfg, env_id=env_id))
    env.seed(0)
    return env


def chain(env):
    names, inner = [], env.env
    while hasattr(inner, "env"):
        names.append(type(inner).__name__)
        inner = inner.env
    return names


def test_family_comes_from_the_entry_point():
    atari().reset()  # registers the ALE ids
    assert family_of_env_id("ALE/Pong-v5") == ATARI


@pytest.mark.parametrize("preset", ["default", "atari_default"])
def test_default_preset_gives_channel_first_uint8_stacks(preset):
    env = atari(env_wrapper=preset)
    obs = env.reset()
    assert obs.shape == (4, 84, 84) and obs.dtype == np.uint8
    assert env.observation_space.contains(obs) and env.observation_space.dtype == np.uint8
    for _ in range(10):
        timestep = env.step(env.random_action())
        assert env.observation_space.contains(timestep.obs)
    assert env.env.unwrapped._frameskip == 1  # the base env skips nothing; the preset does


@pytest.mark.parametrize(
    ("env_id", "cfg", "sticky"),
    [
        ("ALE/Pong-v5", {}, 0.25),
        ("PongNoFrameskip-v4", {}, 0.0),  # DI-engine configs' id: no sticky actions, as registered
        ("PongNoFrameskip-v4", {"repeat_action_probability": 0.1}, 0.1),
    ],
)
def test_atari_ids_keep_their_own_sticky_actions_unless_configured(env_id, cfg, sticky):
    env = atari(env_id, **cfg)
    assert env.reset().shape == (4, 84, 84)
    ale = env.env.unwrapped.ale
    assert ale.getFloat("repeat_action_probability") == pytest.approx(sticky)
    assert env.env.unwrapped._frameskip == 1
    env.close()


def test_scaled_obs_are_float32_in_unit_range():
    env = atari(scale_obs=True)
    obs = env.reset()
    assert obs.dtype == np.float32 and 0.0 <= obs.min() and obs.max() <= 1.0
    assert env.observation_space.contains(obs)


def test_fire_reset_is_chosen_from_action_meanings():
    assert "FireResetWrapper" in chain(atari("ALE/Breakout-v5").env and atari("ALE/Breakout-v5"))
    env = atari("ALE/Freeway-v5")
    env.reset()
    assert "FIRE" not in env.env.unwrapped.get_action_meanings()
    assert "FireResetWrapper" not in chain(env)


def test_collector_clips_rewards_and_evaluator_does_not():
    def rewards(is_train):
        env = atari("ALE/SpaceInvaders-v5", is_train=is_train)
        env.reset()
        seen = []
        for _ in range(400):
            timestep = env.step(env.random_action())
            seen.append(float(timestep.reward[0]))
            if timestep.done:
                env.reset()
        return seen

    assert set(rewards(True)) <= {-1.0, 0.0, 1.0} and max(rewards(True)) == 1.0
    assert max(rewards(False)) > 1.0


def test_caller_picks_the_preset_as_is_train_does():
    def wrappers(env):
        env.reset()
        return chain(env)

    evaluator = wrappers(DingEnvWrapper(cfg={"env_id": "ALE/Breakout-v5"}, caller="evaluator"))
    assert evaluator == wrappers(atari("ALE/Breakout-v5", is_train=False))
    assert "EpisodicLifeWrapper" not in evaluator
    assert "EpisodicLifeWrapper" in wrappers(DingEnvWrapper(cfg={"env_id": "ALE/Breakout-v5"}))  # 'collector'
    with pytest.raises(ConfigError, match="caller: expected 'collector' or 'evaluator', got 'learner'"):
        DingEnvWrapper(cfg={"env_id": "ALE/Breakout-v5"}, caller="learner")


def test_collector_ends_episodes_per_life_and_evaluator_per_game():
    def first_episode(is_train):
        env = atari("ALE/Breakout-v5", is_train=is_train)
        env.reset()
        while True:
            timestep = env.step(env.random_action())
            if timestep.done:
                return timestep

    collector_end = first_episode(True)
    assert collector_end.terminated and collector_end.info["lives"] == 4  # one life lost, game goes on
    evaluator_end = first_episode(False)
    assert evaluator_end.info["lives"] == 0
    assert isinstance(evaluator_end.info["eval_episode_return"], float)


def test_a_collectors_eval_episode_return_is_the_raw_game_score_so_far_at_every_life_lost():
    env = atari("ALE/SpaceInvaders-v5")  # raw scores of 5 to 30 a shot, clipped to 1 for the learner
    rng = np.random.default_rng(0)
    env.reset()
    clipped, ends = 0.0, []
    while not ends or ends[-1][0] > 0:
        timestep = env.step(int(rng.integers(6)))
        clipped += float(timestep.reward[0])
        if timestep.done:
            ends.append((timestep.info["lives"], clipped, timestep.info["eval_episode_return"]))
            env.reset()  # goes on with the game while lives are left
    lives, clipped_sums, returns = zip(*ends, strict=True)
    assert list(lives) == sorted(lives, reverse=True) and len(ends) >= 2  # one game, several lives
    assert list(returns) == sorted(returns)  # the game's score so far, not each life's own
    assert all(raw >= 5 * clipped_sum for raw, clipped_sum in zip(returns, clipped_sums, strict=True))


def test_a_collectors_reset_goes_on_with_the_game_only_after_a_life_lost():
    env = DingEnvWrapper(cfg={"env_id": "ALE/Breakout-v5"})
    env.seed(3, dynamic_seed=False)
    start = env.reset()
    for _ in range(5):
        env.step(1)
    np.testing.assert_array_equal(env.reset(), start)  # mid-episode: a new game, from the static seed
    np.testing.assert_array_equal(env.reset(), start)  # twice in a row too
    while not (timestep := env.step(env.random_action())).done:
        pass
    assert timestep.info["lives"] == 4
    env.reset()
    assert env.step(0).info["lives"] == 4  # after the life lost: the same game


def test_the_checker_passes_a_collector_whose_episodes_end_at_lives_lost():
    from ding_env.checker import check_env

    collector = partial(DingEnvWrapper, cfg={"env_id": "ALE/Breakout-v5"})
    report = check_env(collector, episodes=4, max_steps=400, subprocess=False)
    assert report.findings == [], report.format()


def test_reward_in_obs_builds_on_the_atari_preset():
    obs = atari(env_wrapper="reward_in_obs").reset()
    assert obs["obs"].shape == (4, 84, 84) and obs["obs"].dtype == np.uint8


def test_an_ale_env_that_skips_frames_itself_is_refused_saying_how_to_build_it():
    import gymnasium as gym

    atari().reset()  # registers the ALE ids
    with pytest.raises(ConfigError, match=r"skips 4: make it with frameskip=1, give cfg env_id"):
        DingEnvWrapper(gym.make("ALE/Pong-v5")).reset()
    assert DingEnvWrapper(gym.make("ALE/Pong-v5", frameskip=1)).reset().shape == (4, 84, 84)


@pytest.mark.parametrize("kind", ["preprocessed", "ram"])
def test_an_ale_env_given_preprocessed_or_as_ram_is_refused_by_the_preset_naming_its_observations(kind):
    # The preset ran on top and failed inside AtariPreprocessing ("Invalid shape (84, 84), expecting shape (210, 160)").
    import gymnasium as gym

    atari().reset()  # registers the ALE ids
    if kind == "preprocessed":
        env, shown = gym.wrappers.AtariPreprocessing(gym.make("PongNoFrameskip-v4")), r"\(84, 84\)"
    else:
        env, shown = gym.make("ALE/Pong-v5", obs_type="ram", frameskip=1), r"\(128,\)"
    with pytest.raises(
        ConfigError, match=rf"210x160 screen.*{shown}.*env_wrapper=\['ram'\] \(RAM observations\) or \[\]"
    ):
        DingEnvWrapper(env).reset()
    assert DingEnvWrapper(env, cfg={"env_wrapper": []}).reset().shape in ((84, 84), (128,))


@pytest.mark.parametrize(
    ("cfg", "error"),
    [
        ({"env_id": "ALE/Pong-v5", "make_kwargs": {"frameskip": 4}}, r"make_kwargs frameskip=4, .*set frame_skip"),
        ({"env_id": "ALE/Pong-v5", "make_kwargs": {"obs_type": "ram"}}, r"obs_type='ram'.*env_wrapper=\['ram'\]"),
        ({"env_id": "CartPole-v1", "env_wrapper": "atari_default"}, r"preset of ALE .*classic_control env"),
    ],
    ids=["frameskip", "ram", "atari_default on CartPole"],
)
def test_make_kwargs_and_presets_that_contradict_the_atari_preset_are_named(cfg, error):
    atari().reset()  # registers the ALE ids
    with pytest.raises(ConfigError, match=error):
        DingEnvWrapper(cfg=cfg).reset()


def test_atari_keys_on_an_env_without_the_atari_preset_are_warned_about():
    with pytest.warns(UserWarning, match=r"frame_stack=3, scale_obs=True take effect only with the Atari preset"):
        DingEnvWrapper(cfg={"env_id": "CartPole-v1", "frame_stack": 3, "scale_obs": True}).reset()
    with pytest.warns(UserWarning, match=r"frame_stack=2 takes effect only"):
        atari(env_wrapper=["clip_reward"], frame_stack=2).reset()


def test_ram_observations():
    env = atari(env_wrapper=["ram"])
    obs = env.reset()
    assert obs.shape == (128,) and obs.dtype == np.uint8 and env.observation_space.contains(obs)


def test_di_engine_obs_plus_prev_action_reward_key():
    from dizoo.atari.envs import AtariEnv

    env = AtariEnv({"env_id": "PongNoFrameskip-v4", "obs_plus_prev_action_reward": True, "is_train": False})
    env.seed(0)
    obs = env.reset()
    assert obs["obs"].shape == (4, 84, 84) and obs["prev_action"] == -1
    assert obs["prev_reward_extrinsic"].tolist() == [0.0]
    first = env.step(3).obs
    second = env.step(2).obs
    assert first["prev_action"] == -1 and second["prev_action"] == 3
    assert env.observation_space.contains(second)
    env.close()


@pytest.mark.parametrize("env_wrapper", ["default", []])
def test_a_make_kwargs_time_limit_counts_agent_steps_with_or_without_the_preset(env_wrapper):
    # The preset makes its base env with frameskip=1: gym.make's limit counted frames and cut at step 8.
    env = atari(make_kwargs=dict(max_episode_steps=30), env_wrapper=env_wrapper)
    env.reset()
    steps = [env.step(0) for _ in range(30)]
    assert [timestep.done for timestep in steps] == [False] * 29 + [True]
    assert steps[-1].info["truncated"] is True
    env.close()

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.classic_control import CartPoleEnv

from ding_env import BaseEnvManager, DingEnvWrapper
from ding_env.errors import ConfigError, EnvDataError, EnvStateError
from tests.conftest import ALL_MANAGER_TYPES, balance_action


def run_episode(env, policy):
    obs = env.reset()
    steps = 0
    while True:
        timestep = env.step(policy(obs))
        steps += 1
        obs = timestep.obs
        if timestep.done:
            return timestep, steps


def test_lazy_env_id_is_created_on_first_reset_and_pickles_before():
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    assert env._env is None
    pickle.loads(pickle.dumps(env))
    env.reset()
    assert env._env is not None


def test_outputs_follow_the_contract():
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    env.seed(0)
    obs = env.reset()
    assert obs.dtype == np.float32 and env.observation_space.dtype == np.float32
    assert env.observation_space.contains(obs)
    timestep = env.step(0)
    assert timestep.reward.shape == (1,) and timestep.reward.dtype == np.float32
    assert type(timestep.done) is bool
    assert not np.shares_memory(obs, timestep.obs)


def test_float64_observations_become_float32():
    env = DingEnvWrapper(cfg={"env_id": "Pendulum-v1"})
    raw = gym.make("Pendulum-v1")
    assert raw.observation_space.dtype == np.float32  # sanity: gymnasium already float32 here
    env = DingEnvWrapper(gym.make("MountainCarContinuous-v0"))
    assert env.reset().dtype == np.float32

    class Float64Env(gym.Env):
        observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float64)
        action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return np.zeros(3), {}

        def step(self, action):
            return np.ones(3), 1.0, True, False, {}

    env = DingEnvWrapper(Float64Env())
    assert env.observation_space.dtype == np.float32
    assert env.reset().dtype == np.float32 and env.step(0).obs.dtype == np.float32


def test_time_limit_is_truncation_and_a_falling_pole_is_termination():
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    env.seed(0, dynamic_seed=False)
    timestep, steps = run_episode(env, balance_action)
    assert steps == 500
    assert timestep.done is True and timestep.info["truncated"] is True and timestep.truncated
    assert timestep.info["eval_episode_return"] == 500.0

    timestep, steps = run_episode(env, lambda obs: 0)
    assert steps < 500
    assert timestep.done and timestep.info["truncated"] is False and timestep.terminated
    assert type(timestep.info["eval_episode_return"]) is float and timestep.info["eval_episode_return"] == steps


def test_a_step_that_terminates_at_the_time_limit_is_a_termination():
    """The pole falls on the last allowed step: a terminal state, not bootstrapped from (as Gymnasium's vector envs)."""
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    env.seed(0, dynamic_seed=False)
    _, falls_at = run_episode(env, lambda obs: 0)
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1", "make_kwargs": {"max_episode_steps": falls_at}})
    env.seed(0, dynamic_seed=False)
    timestep, steps = run_episode(env, lambda obs: 0)
    assert steps == falls_at and timestep.done
    assert timestep.terminated and not timestep.truncated and timestep.info["truncated"] is False


def test_a_terminal_state_reached_at_the_time_limit_is_termination():
    class EndsAtTheLimit(gym.Env):
        observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return np.zeros(2, np.float32), {}

        def step(self, action):
            return np.ones(2, np.float32), 1.0, True, True, {}  # terminal, and the time limit as well

    env = DingEnvWrapper(EndsAtTheLimit())
    env.reset()
    timestep = env.step(0)
    assert timestep.done and timestep.terminated and not timestep.truncated  # no bootstrap from a terminal state
    assert timestep.info["truncated"] is False


@pytest.mark.parametrize("action", [1, np.int64(1), np.int32(1), np.array(1), np.array([1])])
def test_discrete_action_forms(action):
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    env.seed(0)
    env.reset()
    assert env.step(action).obs.shape == (4,)


@pytest.mark.parametrize("action", [1, np.int64(1), np.int32(1), np.uint8(1), np.array(1), np.array([1])])
def test_discrete_actions_reach_the_env_as_scalars_of_the_space_dtype(action):
    received = []

    class RecordingEnv(gym.Env):
        observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        action_space = gym.spaces.Discrete(3)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return np.zeros(2, np.float32), {}

        def step(self, action):
            assert self.action_space.contains(action)
            received.append(action)
            return np.zeros(2, np.float32), 0.0, False, False, {}

    env = DingEnvWrapper(RecordingEnv(), cfg={"env_wrapper": []})
    env.reset()
    env.step(action)
    assert type(received[0]) is np.int64 and received[0] == 1


@pytest.mark.parametrize("action", [np.array([1, 0]), 1.5, np.array([0.5]), 2**70, np.uint64(2**64 - 1)])
def test_bad_discrete_actions_are_rejected(action):
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    env.reset()
    with pytest.raises(ValueError, match="Discrete"):
        env.step(action)


@pytest.mark.parametrize("action", [2, -1, np.int64(2), np.array(2), np.array([7])])
def test_discrete_actions_out_of_range_name_the_env_and_the_range(action):
    # Gymnasium's CartPole asserted "np.int64(2) invalid", naming neither the env nor the range.
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    env.reset()
    with pytest.raises(
        ValueError, match=r"DingEnvWrapper\(CartPole-v1\): a Discrete\(2\) action must be in \[0, 2\), got"
    ):
        env.step(action)


@pytest.mark.parametrize(
    ("cfg", "said"),
    [
        (dict(act_scale=True), "act_scale applies"),
        (dict(act_scale=True, action_clip=True), "act_scale and action_clip apply"),
    ],
)
def test_box_action_keys_on_a_discrete_env_are_warned_about(cfg, said):
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1", **cfg})
    only = r"to Box actions \(and the Box parts of Dict and Tuple ones\) only"
    with pytest.warns(UserWarning, match=rf"{said} {only}; Discrete\(2\) ignores"):
        env.reset()
    assert env.action_space == gym.spaces.Discrete(2)


def test_act_scale_maps_unit_box_to_bounds():
    seen = []

    class Recorder(gym.ActionWrapper):
        def action(self, action):
            seen.append(np.array(action))
            return action

    env = DingEnvWrapper(cfg={"env_id": "Pendulum-v1", "act_scale": True, "env_wrapper": [Recorder]})
    env.reset()
    env.step(np.array([1.0], dtype=np.float32))
    env.step(np.array([-1.0], dtype=np.float32))
    env.step(np.array([0.0], dtype=np.float32))
    np.testing.assert_allclose(np.concatenate(seen), [2.0, -2.0, 0.0])
    env.seed(0)
    for _ in range(20):
        action = env.random_action()
        assert action.dtype == np.float32 and np.all(np.abs(action) <= 1.0)


def test_rew_clip_floors_the_learner_reward_at_minus_ten_as_di_engine_but_not_the_episode_return():
    # It clipped to [-1, 1], where DI-engine's rew_clip (its BipedalWalker configs set it) takes max(-10, reward).
    def rewards_of(cfg):
        env = DingEnvWrapper(cfg={"env_id": "Pendulum-v1", **cfg})
        env.seed(0, dynamic_seed=False)
        env.reset()
        rewards = []
        while True:  # Pendulum left to fall: rewards down to -14.6
            timestep = env.step(np.array([0.0], dtype=np.float32))
            rewards.append(timestep.reward[0])
            if timestep.done:
                return np.array(rewards), timestep.info["eval_episode_return"], env.reward_space

    raw, raw_return, _ = rewards_of({})
    clipped, clipped_return, space = rewards_of({"rew_clip": True})
    assert raw.min() < -10 and raw.max() > -1
    assert np.array_equal(clipped, np.maximum(raw, -10.0).astype(np.float32))
    assert clipped_return == pytest.approx(float(raw.sum()), rel=1e-5) == raw_return
    assert space == gym.spaces.Box(-10.0, np.inf, (1,), np.float32)


def test_static_seed_replays_and_dynamic_seed_varies():
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    env.seed(7, dynamic_seed=False)
    assert np.array_equal(env.reset(), env.reset())
    env.seed(7, dynamic_seed=True)
    starts = [env.reset() for _ in range(4)]
    assert len({s.tobytes() for s in starts}) == 4
    other = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    other.seed(7, dynamic_seed=True)
    for start in starts:
        np.testing.assert_array_equal(start, other.reset())


def test_gym_reset_is_seeded_only_when_a_seed_is_due():
    seeds = []

    class SeedSpy(gym.Wrapper):
        def reset(self, *, seed=None, options=None):
            seeds.append(seed)
            return self.env.reset(seed=seed, options=options)

    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1", "env_wrapper": [SeedSpy]})
    env.reset()
    env.reset()
    assert seeds == [None, None]
    env.seed(3, dynamic_seed=False)
    env.reset()
    env.reset()
    assert seeds[2:] == [3, 3]


@pytest.mark.parametrize("manager_type", ALL_MANAGER_TYPES)
def test_a_seed_given_to_reset_is_refused_pointing_at_seed(manager_type):
    # It went into Gymnasium's reset options, which CartPole ignores: an unseeded episode, with no word said.
    from ding_env import create_env_manager
    from ding_env.errors import EnvError
    from tests.conftest import manager_cfg

    with pytest.raises(TypeError, match=r"reset\(seed=5\): seed with seed\(\) before the reset"):
        DingEnvWrapper(cfg={"env_id": "CartPole-v1"}).reset(seed=5)
    fns = [lambda: DingEnvWrapper(cfg={"env_id": "CartPole-v1"})] * 2
    with create_env_manager(manager_cfg(manager_type), fns) as manager:
        manager.launch()
        with pytest.raises(EnvError, match=r"env 1 failed in reset: TypeError: .*seed with seed\(\)"):
            manager.reset({1: {"seed": 5}})


def test_step_before_reset_and_after_done_is_an_error(tmp_path):
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    with pytest.raises(EnvStateError, match="before reset"):
        env.step(0)
    env.reset()
    run_episode(env, lambda obs: 0)
    with pytest.raises(EnvStateError, match="after the episode ended"):
        env.step(0)
    env.reset()
    env.close()
    with pytest.raises(EnvStateError, match=r"DingEnvWrapper\(CartPole-v1\): step\(\) called after close\(\)"):
        env.step(0)  # it said "before reset() or after the episode ended"
    env.reset()
    env.step(0)
    env.enable_save_replay(str(tmp_path))  # its env is rebuilt at the next reset: not closed by the user
    with pytest.raises(EnvStateError, match="before reset"):
        env.step(0)
    env.close()


def test_an_unbounded_box_action_space_steps_with_no_warning():
    # gym.wrappers.ClipAction (CleanRL's stack) makes the action space (-inf, inf): computing act_scale's center
    # for it, unused, warned "invalid value encountered in add" at every build.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        env = DingEnvWrapper(gym.wrappers.ClipAction(gym.make("Pendulum-v1")))
        env.seed(0)
        env.reset()
        timestep = env.step(np.array([3.0], dtype=np.float32))  # clipped into [-2, 2] by ClipAction itself
    assert timestep.obs.shape == (3,)
    env.close()


def test_config_errors_name_the_key():
    with pytest.raises(ConfigError, match="act_scal.*did you mean 'act_scale'"):
        DingEnvWrapper(cfg={"env_id": "CartPole-v1", "act_scal": True})
    # A gym.make keyword at the top: the error listed every pipeline key beside the wrapper's, and said nothing of
    # make_kwargs, where it goes.
    with pytest.raises(ConfigError) as refused:
        DingEnvWrapper(cfg={"env_id": "CartPole-v1", "max_episode_steps": 20})
    message = str(refused.value)
    assert message.startswith("unknown key 'max_episode_steps' in DingEnvWrapper config; valid keys: act_scale,")
    assert message.endswith("(max_episode_steps too) go in make_kwargs=dict(...)") and "stop_value" not in message
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1", "make_kwargs": {"max_episode_steps": 20}})
    env.seed(0)
    env.reset()
    assert env.env.spec.max_episode_steps == 20
    env.close()
    with pytest.raises(ConfigError, match="neither"):
        DingEnvWrapper(cfg={})
    with pytest.raises(ConfigError, match="unknown wrapper 'no_such'"):
        DingEnvWrapper(cfg={"env_id": "CartPole-v1", "env_wrapper": ["no_such"]}).reset()
    with pytest.raises(ConfigError, match="unknown key 'kwarg'.*valid keys: kwargs, name"):
        DingEnvWrapper(cfg={"env_id": "CartPole-v1", "env_wrapper": [{"name": "time_limit", "kwarg": {}}]}).reset()
    with pytest.raises(ConfigError, match="preset"):
        DingEnvWrapper(cfg={"env_id": "CartPole-v1", "env_wrapper": "fancy"}).reset()


def test_named_wrapper_specs_apply():
    env = DingEnvWrapper(
        cfg={"env_id": "CartPole-v1", "env_wrapper": [{"name": "time_limit", "kwargs": {"max_episode_steps": 10}}]}
    )
    env.seed(0)
    timestep, steps = run_episode(env, balance_action)
    assert steps == 10 and timestep.truncated


def test_close_twice_is_fine():
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    env.reset()
    env.close()
    env.close()


class CountedCartPole(CartPoleEnv):
    """CartPole counting the simulators made, and those closed."""

    made = closed = 0

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        type(self).made += 1

    def close(self):
        type(self).closed += 1
        super().close()


def test_the_spaces_after_close_are_the_envs_and_build_no_simulator_that_nothing_closes():
    if "DingTest/CountedCartPole-v0" not in gym.registry:
        gym.register("DingTest/CountedCartPole-v0", entry_point=CountedCartPole, max_episode_steps=50)
    made, closed = CountedCartPole.made, CountedCartPole.closed
    env = DingEnvWrapper(cfg={"env_id": "DingTest/CountedCartPole-v0"})
    env.reset()
    spaces = env.observation_space, env.action_space
    env.close()
    assert (env.observation_space, env.action_space) == spaces
    assert (CountedCartPole.made - made, CountedCartPole.closed - closed) == (1, 1)


def test_repr_names_the_env():
    assert "CartPole-v1" in repr(DingEnvWrapper(cfg={"env_id": "CartPole-v1"}))


def test_numpy_scalars_in_info_become_python_scalars():
    class InfoEnv(gym.Env):
        observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
        action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            return np.zeros(1, np.float32), {}

        def step(self, action):
            return np.zeros(1, np.float32), 0.0, False, False, {"x": np.float64(1.5), "n": np.int32(2), "s": "keep"}

    env = DingEnvWrapper(InfoEnv())
    env.reset()
    info = env.step(0).info
    assert info == {"x": 1.5, "n": 2, "s": "keep"} and type(info["x"]) is float and type(info["n"]) is int


@pytest.mark.parametrize("policy", [balance_action, lambda obs: 0], ids=["truncated", "terminated"])
def test_a_manager_steps_a_ding_env_wrapper_as_its_step_does(policy):
    cfg = {"env_id": "CartPole-v1", "rew_clip": True}
    alone = DingEnvWrapper(cfg=cfg)
    alone.seed(0, dynamic_seed=False)
    manager = BaseEnvManager([lambda: DingEnvWrapper(cfg=cfg)], BaseEnvManager.default_config())
    manager.seed(0, dynamic_seed=False)
    manager.launch()
    obs = alone.reset()
    np.testing.assert_array_equal(obs, manager.ready_obs[0])
    while True:
        action = policy(obs)
        timestep, managed = alone.step(action), manager.step({0: action})[0]
        np.testing.assert_array_equal(managed.obs, timestep.obs)
        assert managed.reward.tolist() == timestep.reward.tolist() and managed.done is timestep.done
        assert managed.truncated is timestep.truncated and managed.info == timestep.info
        if timestep.done:
            manager.close()
            return
        obs = timestep.obs


class LockedEnv(gym.Wrapper):
    """An env holding something deepcopy refuses (a lock)."""

    def __init__(self):
        import threading

        super().__init__(gym.make("CartPole-v1"))
        self.lock = threading.Lock()


def test_clone_builds_an_independent_env_with_the_same_settings():
    original = DingEnvWrapper(gym.make("CartPole-v1"), cfg={"rew_clip": True})
    original.seed(1)
    original.reset()
    clone = original.clone("evaluator")
    assert clone.env is not original.env and clone.env.unwrapped is not original.env.unwrapped
    assert clone._cfg.rew_clip and not clone._cfg.is_train and original._cfg.is_train
    fresh = DingEnvWrapper(gym.make("CartPole-v1"))
    for env in (clone, fresh):
        env.seed(1, dynamic_seed=False)
    np.testing.assert_array_equal(clone.reset(), fresh.reset())
    by_id = DingEnvWrapper(cfg={"env_id": "CartPole-v1"}).clone()
    assert by_id._cfg.env_id == "CartPole-v1" and by_id._cfg.is_train
    with pytest.raises(TypeError, match=r"\.clone\(\): the env instance cannot be deep-copied .*lock"):
        DingEnvWrapper(LockedEnv()).clone()


def test_render_gives_frames_of_an_env_made_to_render():
    pytest.importorskip("ale_py", reason="the atari extra (make test installs it)")  # renders without pygame
    env = DingEnvWrapper(cfg={"env_id": "ALE/Pong-v5", "make_kwargs": {"render_mode": "rgb_array"}, "env_wrapper": []})
    env.reset()
    frame = env.render()
    assert frame.shape == (210, 160, 3) and frame.dtype == np.uint8
    env.close()
    with pytest.raises(EnvStateError, match=r"render\(\): the env was made without a render mode"):
        DingEnvWrapper(cfg={"env_id": "CartPole-v1"}).render()


def test_is_gymnasium_picks_where_env_ids_are_looked_up():
    legacy_gym = pytest.importorskip("gym", reason="legacy gym is a test requirement")
    legacy_only = "DingEnvLegacyOnlyCoin-v0"
    if legacy_only not in legacy_gym.envs.registry:
        legacy_gym.register(id=legacy_only, entry_point="gym.envs.classic_control:CartPoleEnv", max_episode_steps=5)
    # an id only legacy gym has: found there by default (as DI-engine's gym.make), refused with is_gymnasium=True
    env = DingEnvWrapper(cfg={"env_id": legacy_only})
    env.seed(0)
    env.reset()
    steps = 0
    while not env.step(env.random_action()).done:
        steps += 1
    assert steps == 4
    with pytest.raises(ConfigError, match=f"env_id '{legacy_only}' is not available in Gymnasium"):
        DingEnvWrapper(cfg={"env_id": legacy_only}, is_gymnasium=True).reset()
    # is_gymnasium=False makes every id with gym.make, and the clone keeps it
    legacy = DingEnvWrapper(cfg={"env_id": "CartPole-v1"}, is_gymnasium=False)
    assert type(legacy.clone().env.legacy_env.unwrapped).__module__.startswith("gym.")
    with pytest.raises(ConfigError, match="is_gymnasium: expected True, False or None, got 'yes'"):
        DingEnvWrapper(cfg={"env_id": "CartPole-v1"}, is_gymnasium="yes")


def test_random_action_has_di_engine_forms():
    cartpole = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    cartpole.seed(0)
    action = cartpole.random_action()
    assert action.shape == (1,) and action.dtype == np.int64 and 0 <= action[0] < 2
    pendulum = DingEnvWrapper(cfg={"env_id": "Pendulum-v1"})
    assert pendulum.random_action().shape == (1,) and pendulum.random_action().dtype == np.float32
    cartpole.reset()
    assert not cartpole.step(cartpole.random_action()).done  # the form steps the env


def test_reward_in_obs_preset_puts_the_last_reward_in_the_observation():
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1", "env_wrapper": "reward_in_obs"})
    env.seed(0)
    obs = env.reset()
    assert set(obs) == {"obs", "reward"} and obs["reward"].tolist() == [0.0]
    assert env.observation_space["reward"].shape == (1,) and env.observation_space["obs"].shape == (4,)
    timestep = env.step(np.int64(0))
    assert timestep.obs["reward"].tolist() == [1.0] and timestep.obs["obs"].dtype == np.float32
    assert timestep.reward.tolist() == [1.0]


class BufferReusingEnv(gym.Env):
    """Returns one observation array, changed in place at every step and reset (as some simulators do)."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self):
        self.obs = np.zeros(2, dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.obs[:] = 0
        return self.obs, {}

    def step(self, action):
        self.obs += 1
        return self.obs, 1.0, bool(self.obs[0] >= 3), False, {}


def test_step_observations_are_the_callers_even_when_the_env_reuses_its_array():
    env = DingEnvWrapper(BufferReusingEnv())
    env.reset()
    first = env.step(0).obs
    env.step(0)
    assert first.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess", "subprocess+caller"])
def test_managers_keep_each_step_of_an_env_that_reuses_its_array(manager_type):
    from ding_env import create_env_manager
    from tests.conftest import manager_cfg

    fns = [lambda: DingEnvWrapper(BufferReusingEnv())] * 2
    with create_env_manager(manager_cfg(manager_type), fns) as manager:
        manager.launch()
        seen = []
        for _ in range(4):
            ready = manager.ready_obs_batch
            batch = manager.step_batch(ready.env_id, np.zeros(len(ready.env_id), dtype=np.int64))
            seen.append((batch.obs[:, 0].tolist(), batch.done.tolist(), manager.ready_obs_batch.obs[:, 0].tolist()))
    # Steps 1-3 then the final observation 3 with the reset one (0) ready, then step 1 again.
    assert seen == [
        ([1.0, 1.0], [False, False], [1.0, 1.0]),
        ([2.0, 2.0], [False, False], [2.0, 2.0]),
        ([3.0, 3.0], [True, True], [0.0, 0.0]),
        ([1.0, 1.0], [False, False], [1.0, 1.0]),
    ]


class DeclaredUint8Env(gym.Env):
    """Declares uint8 frames and returns ``values`` as they are given (a float64 array for a list of floats)."""

    observation_space = gym.spaces.Box(0, 255, (3,), np.uint8)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, values, at_step=False):
        self.values, self.at_step = values, at_step

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return (np.zeros(3, np.uint8) if self.at_step else np.array(self.values)), {}

    def step(self, action):
        return np.array(self.values), 1.0, False, False, {}


@pytest.mark.parametrize("values", [[0.3, 0.7, 300.9], [1, 2, 300], [-1, 0, 0]], ids=["float64", "int64", "negative"])
def test_an_observation_its_space_cannot_hold_is_an_error_not_a_cast(values):
    """300.9 into uint8 was 44, silently; values the space's dtype holds exactly still convert."""
    env = DingEnvWrapper(DeclaredUint8Env(values))
    with pytest.raises(EnvDataError, match=r"DingEnvWrapper\(DeclaredUint8Env\): an observation of dtype \w+ does not"):
        env.reset()
    env = DingEnvWrapper(DeclaredUint8Env(values, at_step=True))
    env.reset()
    with pytest.raises(EnvDataError, match="does not fit the space's uint8"):
        env.step(0)
    for values in ([1.0, 2.0, 255.0], np.array([1, 2, 255], dtype=object)):  # exact values convert
        exact = DingEnvWrapper(DeclaredUint8Env(values))
        assert exact.reset().tolist() == [1, 2, 255] and exact.reset().dtype == np.uint8


@pytest.mark.parametrize("manager_type", ALL_MANAGER_TYPES)
@pytest.mark.parametrize("at_step", [False, True], ids=["reset", "step"])
def test_every_manager_reports_an_observation_its_space_cannot_hold_naming_the_env(manager_type, at_step):
    from ding_env import create_env_manager
    from ding_env.errors import EnvError
    from tests.conftest import manager_cfg

    fns = [lambda: DingEnvWrapper(DeclaredUint8Env([0.3, 0.7, 300.9], at_step))] * 2
    with create_env_manager(manager_cfg(manager_type, step_error="raise"), fns) as manager:
        if not at_step:
            with pytest.raises(EnvError, match="env 0 .*does not fit the space's uint8"):
                manager.launch()
            return
        manager.launch()
        with pytest.raises(EnvError, match="env 0 .*does not fit the space's uint8"):
            manager.step_batch(np.arange(2), np.zeros(2, np.int64))


def needs_a_missing_module(**kwargs):
    raise ImportError("No module named 'missing_simulator'", name="missing_simulator")


def test_an_older_env_version_missing_a_module_raises_its_own_import_error():
    ids = ["DingEnvTestNeedsModule-v0", "DingEnvTestNeedsModule-v1"]
    gym.register(ids[0], entry_point=needs_a_missing_module)
    gym.register(ids[1], entry_point=CartPoleEnv)
    try:
        with pytest.raises(ImportError, match="missing_simulator") as error:
            DingEnvWrapper(cfg={"env_id": ids[0]}).reset()
        assert not isinstance(error.value, ConfigError)  # not "no longer makes it; set env_id to v1"
    finally:
        for env_id in ids:
            del gym.registry[env_id]


def test_a_built_or_closed_wrapper_pickles_and_goes_on_from_where_it_was():
    # Its converters (closures) failed to pickle once the env was built, even after close().
    import pickle

    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    env.seed(0, dynamic_seed=False)
    env.reset()
    env.step(0)
    copy = pickle.loads(pickle.dumps(env))
    assert np.array_equal(copy.step(1).obs, env.step(1).obs)  # the same simulator state, stepped alike
    env.close()
    closed = pickle.loads(pickle.dumps(env))
    fresh = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    fresh.seed(0, dynamic_seed=False)
    assert np.array_equal(closed.reset(), fresh.reset())  # builds its env again, with the seed it was given


def test_an_env_type_over_ding_env_wrapper_clones_as_itself():
    # clone() made a plain DingEnvWrapper: CartPoleEnv({}) had no env_id for it, max_step was an unknown key.
    from dizoo.classic_control.cartpole.envs import CartPoleEnv
    from dizoo.minigrid.envs.minigrid_env import MiniGridEnv

    cartpole = CartPoleEnv({}).clone("evaluator")
    assert type(cartpole) is CartPoleEnv and cartpole.observation_space.shape == (4,)
    minigrid = MiniGridEnv({"env_id": "MiniGrid-Empty-8x8-v0", "max_step": 3}).clone("evaluator")
    assert type(minigrid) is MiniGridEnv
    minigrid.seed(0)
    minigrid.reset()
    timesteps = [minigrid.step(np.int64(0)) for _ in range(3)]  # turning left: never reaches the goal
    assert [timestep.done for timestep in timesteps] == [False, False, True] and timesteps[-1].truncated


def test_a_user_subclass_clones_with_its_settings_and_one_without_a_cfg_parameter_still_clones():
    # Cloned as its type, a subclass lost seed_api=False (its clones got seeds), and one whose constructor
    # names its config otherwise raised TypeError.
    class Plain(DingEnvWrapper):
        pass

    clone = Plain(cfg={"env_id": "CartPole-v1"}, seed_api=False).clone("evaluator")
    assert type(clone) is Plain
    clone.seed(0, dynamic_seed=False)
    assert not np.array_equal(clone.reset(), clone.reset())  # never seeded by the wrapper: no replayed start

    class OwnSignature(DingEnvWrapper):
        def __init__(self, env_cfg):
            super().__init__(cfg=env_cfg)

    other = OwnSignature({"env_id": "CartPole-v1"}).clone("evaluator")
    other.seed(0, dynamic_seed=False)
    np.testing.assert_array_equal(other.reset(), other.reset())

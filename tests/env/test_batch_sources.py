"""EnvPool pools and Gymnasium vector envs as batch envs, against stepping them directly.

The reference drives the raw library the way the adapter must: for EnvPool, a sub-env whose episode
ended is stepped once more (EnvPool's own reset); for a Gymnasium vector env, its own reset mode.
"""

import subprocess
import sys
from functools import partial

import ale_py
import envpool
import gymnasium as gym
import numpy as np
import pytest

from ding_env import DingEnvWrapper
from ding_env.env.batch_sources import EnvPoolBatchEnv, GymVectorBatchEnv
from ding_env.errors import ConfigError, EnvStateError
from ding_env.testing import BatchEnvContractTests

gym.register_envs(ale_py)


def random_actions(space, count, rng):
    if isinstance(space, gym.spaces.Discrete):
        return rng.integers(0, space.n, count)
    return rng.uniform(-1.0, 1.0, (count, *space.shape)).astype(np.float32)


def run_against_envpool(batch, raw, steps, rng):
    """Step the adapter and raw EnvPool alike; the adapter's rows must be EnvPool's."""
    first, _ = raw.reset()
    assert np.array_equal(batch.reset(), first.astype(batch.observation_space.dtype))
    ends = truncations = 0
    for _ in range(steps):
        actions = random_actions(batch.action_space, batch.num_envs, rng)
        record = batch.step(actions)
        obs, reward, terminated, truncated, _ = raw.step(actions.astype(raw.action_space.dtype))
        assert np.array_equal(record.obs, obs.astype(record.obs.dtype))
        assert np.array_equal(record.reward[:, 0], reward.astype(np.float32))
        assert np.array_equal(record.terminated, terminated) and np.array_equal(
            record.truncated, truncated & ~terminated
        )
        ended = np.flatnonzero(record.done)
        if len(ended):
            ends += len(ended)
            truncations += int(record.truncated.sum())
            idle = np.zeros((len(ended), *raw.action_space.shape), raw.action_space.dtype)
            raw_first = raw.step(idle, env_id=ended.astype(np.int32))[0]  # EnvPool resets a finished env when stepped
            assert np.array_equal(batch.reset(ended), raw_first.astype(record.obs.dtype))
    return ends, truncations


def test_envpool_cartpole_rows_are_envpools_own():
    batch = EnvPoolBatchEnv(dict(env_id="CartPole-v1", num_envs=4, make_kwargs=dict(max_episode_steps=30)))
    batch.seed([10, 20, 30, 40])
    raw = envpool.make_gymnasium("CartPole-v1", num_envs=4, seed=[10, 20, 30, 40], max_episode_steps=30)
    ends, truncations = run_against_envpool(batch, raw, 300, np.random.default_rng(0))
    assert ends > 20 and truncations > 0


def test_envpool_halfcheetah_is_float32_and_truncated_at_its_time_limit():
    batch = EnvPoolBatchEnv(dict(env_id="HalfCheetah-v4", num_envs=2, make_kwargs=dict(max_episode_steps=25)))
    batch.seed(3)
    raw = envpool.make_gymnasium("HalfCheetah-v4", num_envs=2, seed=[3, 4], max_episode_steps=25)
    assert batch.observation_space.dtype == np.float32 and batch.action_space.dtype == np.float32
    assert run_against_envpool(batch, raw, 60, np.random.default_rng(1)) == (4, 4)


def test_envpool_atari_default_is_dingenvwrappers_preset_from_envpools_options():
    cfg = dict(env_id="Pong-v5", num_envs=2, is_train=False, make_kwargs=dict(max_episode_steps=30))
    batch = EnvPoolBatchEnv(cfg)
    batch.seed(0)
    assert batch.observation_space == gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
    preset = dict(stack_num=4, noop_max=30, frame_skip=4, img_height=84, img_width=84, gray_scale=True)
    raw = envpool.make_gymnasium(
        "Pong-v5", num_envs=2, seed=[0, 1], episodic_life=False, reward_clip=False, max_episode_steps=30, **preset
    )
    assert run_against_envpool(batch, raw, 40, np.random.default_rng(2)) == (2, 2)


def test_envpool_episodic_life_goes_on_after_a_lost_life_and_returns_the_game_score():
    batch = EnvPoolBatchEnv(dict(env_id="SpaceInvaders-v5", num_envs=1, info_keys=["lives"]))
    batch.seed(0)
    batch.reset()
    rng = np.random.default_rng(0)
    score = 0.0
    for _ in range(2000):
        record = batch.step(rng.integers(0, 6, 1))
        score += float(record.reward[0, 0])  # clipped when training
        if record.done[0]:
            break
    assert record.terminated[0] and record.info["lives"][0] == 2  # a life lost ends the learner's episode
    assert record.episode_return[0] > score  # the raw game score, not the clipped rewards
    batch.reset([0])
    assert batch.step(np.array([0])).info["lives"][0] == 2  # the game went on


def test_envpool_seeds_take_effect_at_a_reset_of_every_sub_env():
    def first_obs(seed, dynamic=True):
        batch = EnvPoolBatchEnv(dict(env_id="CartPole-v1", num_envs=3))
        batch.seed(seed, dynamic_seed=dynamic)
        return batch

    a, b = first_obs(5), first_obs(5)
    assert np.array_equal(a.reset(), b.reset())
    a.seed(6)
    with pytest.raises(EnvStateError, match=r"reset\(\) with no env_ids"):
        a.reset([1])
    assert not np.array_equal(a.reset(), b.reset())

    static = first_obs(5, dynamic=False)
    start = static.reset()
    assert np.array_equal(static.reset(), start)  # every sub-env together: replayed
    with pytest.raises(EnvStateError, match=r"sub-envs \[2\] have static seeds"):
        static.reset([2])


def test_envpool_steps_some_sub_envs_and_leaves_the_others():
    together = EnvPoolBatchEnv(dict(env_id="CartPole-v1", num_envs=3))
    apart = EnvPoolBatchEnv(dict(env_id="CartPole-v1", num_envs=3))
    for batch in (together, apart):
        batch.seed(8)
        batch.reset()
    for actions in np.random.default_rng(3).integers(0, 2, (8, 3)):
        expected = together.step(actions).obs
        pair = apart.step(actions[[2, 0]], env_ids=[2, 0])
        lone = apart.step(actions[[1]], env_ids=[1])
        assert np.array_equal(pair.obs, expected[[2, 0]]) and np.array_equal(lone.obs, expected[[1]])


def test_envpool_config_errors_name_the_problem():
    with pytest.raises(ConfigError, match="did you mean 'frame_stack'"):
        EnvPoolBatchEnv(dict(env_id="Pong-v5", frame_stak=4))
    with pytest.raises(ConfigError, match="needs cfg.env_id"):
        EnvPoolBatchEnv(dict(num_envs=2))
    with pytest.raises(ConfigError, match="'NoSuchGame-v5' is not an EnvPool task"):
        EnvPoolBatchEnv(dict(env_id="NoSuchGame-v5")).reset()


@pytest.mark.parametrize(
    "cfg",
    [
        dict(env_id="CartPole-v1", frame_stack=2, noop_max=0),  # a task without the Atari preset
        dict(env_id="Pong-v5", env_wrapper=None, screen_size=64),  # an Atari task without it
    ],
)
def test_envpool_atari_keys_without_the_atari_preset_are_refused_naming_them(cfg):
    batch = EnvPoolBatchEnv(dict(num_envs=2, **cfg))
    keys = ", ".join(f"{key}={value!r}" for key, value in cfg.items() if key not in ("env_id", "env_wrapper"))
    with pytest.raises(ConfigError, match=f"{keys} act through the Atari preset only"):
        batch.reset()
    assert DingEnvWrapper.batch_env(dict(env_id=cfg["env_id"], batch=2, batch_source="envpool")).reset().shape[0] == 2


class TestEnvPoolBatchEnvContract(BatchEnvContractTests):
    env_cls = EnvPoolBatchEnv
    env_cfg = dict(env_id="CartPole-v1", num_envs=3, make_kwargs=dict(max_episode_steps=40))


def test_gym_sync_vector_env_in_disabled_mode_resets_sub_envs_on_request():
    cfg = dict(env_id="CartPole-v1", num_envs=3, vectorization_mode="sync", make_kwargs=dict(max_episode_steps=30))
    batch = GymVectorBatchEnv(cfg)
    batch.seed(5)
    raw = gym.make_vec(
        "CartPole-v1", 3, vectorization_mode="sync", vector_kwargs=dict(autoreset_mode="Disabled"), max_episode_steps=30
    )
    first, _ = raw.reset(seed=5)
    assert np.array_equal(batch.reset(), first)
    rng, ends = np.random.default_rng(0), 0
    for _ in range(200):
        actions = rng.integers(0, 2, 3)
        record = batch.step(actions)
        obs, _, terminated, truncated, _ = raw.step(actions)
        assert np.array_equal(record.obs, obs) and np.array_equal(record.terminated, terminated)
        assert np.array_equal(record.truncated, truncated & ~terminated)
        ended = np.flatnonzero(record.done)
        if len(ended):
            ends += len(ended)
            mask = np.zeros(3, dtype=bool)
            mask[ended] = True
            assert np.array_equal(batch.reset(ended), raw.reset(options=dict(reset_mask=mask))[0][ended])
    assert ends > 10


def test_gym_vector_env_in_same_step_mode_gives_the_final_observation_from_its_info():
    cfg = dict(env_id="ALE/Pong-v5", num_envs=2, make_kwargs=dict(max_num_frames_per_episode=120))
    batch = GymVectorBatchEnv(cfg)
    batch.seed(1)
    raw = gym.make_vec(
        "ALE/Pong-v5",
        2,
        vectorization_mode="vector_entry_point",
        autoreset_mode="SameStep",
        max_num_frames_per_episode=120,
    )
    first, _ = raw.reset(seed=1)
    assert np.array_equal(batch.reset(), first)
    ends = 0
    for _ in range(70):
        record = batch.step(np.array([1, 2]))
        obs, _, terminated, truncated, info = raw.step(np.array([1, 2]))
        ended = np.flatnonzero(terminated | truncated)
        expected = obs.copy()
        expected[ended] = info["final_obs"][ended] if len(ended) else expected[ended]
        assert np.array_equal(record.obs, expected) and np.array_equal(record.done, terminated | truncated)
        if len(ended):
            ends += len(ended)
            assert np.array_equal(batch.reset(ended), obs[ended])  # what the vector env reset them to
    assert ends == 4


def test_gym_vector_env_is_lockstep():
    batch = GymVectorBatchEnv(dict(env_id="CartPole-v1", num_envs=2, vectorization_mode="sync"))
    batch.reset()
    with pytest.raises(EnvStateError, match="steps all its sub-envs at once"):
        batch.step(np.array([0]), env_ids=[1])
    batch.reset([1])  # resetting some sub-envs is fine
    assert batch.step(np.array([0, 1])).obs.shape == (2, 4)


def test_gym_vector_env_that_resets_only_with_the_next_step_is_refused():
    with pytest.raises(ConfigError, match=r"only with the next step \(autoreset mode NextStep\).*CartPoleBatchEnv"):
        GymVectorBatchEnv(dict(env_id="CartPole-v1", num_envs=2)).reset()


def test_gym_vector_env_seeds_must_be_consecutive():
    batch = GymVectorBatchEnv(dict(env_id="CartPole-v1", num_envs=3, vectorization_mode="sync"))
    batch.seed([4, 5, 6])
    with pytest.raises(ValueError, match="must be consecutive"):
        batch.seed([4, 6, 8])
    assert batch.seeds == [4, 5, 6]  # the refused seeds were not taken


class TestGymVectorBatchEnvContract(BatchEnvContractTests):
    env_cls = GymVectorBatchEnv
    env_cfg = dict(env_id="CartPole-v1", num_envs=3, vectorization_mode="sync", make_kwargs=dict(max_episode_steps=40))


def test_gym_vector_env_passes_on_every_info_key_with_a_row_per_sub_env_or_the_keys_asked_for():
    every = GymVectorBatchEnv(dict(env_id="InvertedPendulum-v5", num_envs=2, vectorization_mode="sync"))
    picked = GymVectorBatchEnv(dict(env_id="InvertedPendulum-v5", num_envs=2, vectorization_mode="sync", info_keys=[]))
    for env, keys in ((every, ["reward_survive"]), (picked, [])):
        env.seed(0)
        env.reset()
        info = env.step(np.zeros((2, 1), np.float32)).info
        assert sorted(info) == keys and all(len(value) == 2 for value in info.values())
        env.close()


def reset_in_a_fresh_process(cfg: str, cwd) -> subprocess.CompletedProcess:
    """A ``GymVectorBatchEnv(cfg)`` seeded, reset (its observations' shape printed) and closed in a new process."""
    code = (
        "from ding_env.env.batch_sources import GymVectorBatchEnv\n"
        f"env = GymVectorBatchEnv({cfg})\n"
        "env.seed(0)\n"
        "print(env.reset().shape)\n"
        "env.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def test_a_mujoco_vector_env_sends_mujocos_warnings_to_python_warnings(tmp_path):
    # In a process of its own: MuJoCo's warning callback is one per process, set by the first env that routes it.
    done = reset_in_a_fresh_process("dict(env_id='HalfCheetah-v5', num_envs=1, vectorization_mode='sync')", tmp_path)
    assert "MujocoWarning" in done.stderr and "\nWARNING:" not in "\n" + done.stderr
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()


def test_an_ale_id_needs_no_import_in_a_fresh_process(tmp_path):
    # gym.make_vec found no ALE namespace unless the user had registered ale_py (DingEnvWrapper does it itself).
    done = reset_in_a_fresh_process("dict(env_id='ALE/Pong-v5', num_envs=2)", tmp_path)
    assert done.stdout.strip().endswith("(2, 4, 84, 84)")


class SometimesReportsEnv(gym.Env):
    """Reports ``is_success`` only on its last step, as many envs report terminal-only infos."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1
        done = self.t >= 3 + int(action)
        return np.zeros(1, np.float32), 1.0, done, False, {"moves": self.t, **({"is_success": True} if done else {})}


def own_keys(info):
    return {key: value for key, value in info.items() if key not in ("truncated", "eval_episode_return")}


def test_a_sub_envs_info_holds_only_the_keys_it_reported():
    env = GymVectorBatchEnv(
        dict(num_envs=2),
        make_env=partial(
            gym.vector.SyncVectorEnv, [SometimesReportsEnv] * 2, autoreset_mode=gym.vector.AutoresetMode.DISABLED
        ),
    )
    env.seed(0)
    env.reset()
    infos = []
    for _ in range(4):
        step = env.step(np.array([0, 1]))
        infos.append([own_keys(step.timestep(row).info) for row in range(2)])
        ended = np.flatnonzero(step.terminated)
        if len(ended):
            env.reset(ended)
    assert infos[1] == [{"moves": 2}, {"moves": 2}]  # no is_success=False where nothing was reported
    assert infos[2] == [{"moves": 3, "is_success": True}, {"moves": 3}]
    assert infos[3] == [{"moves": 1}, {"moves": 4, "is_success": True}]


def _async_cartpole_vector():
    return GymVectorBatchEnv(dict(env_id="CartPole-v1", num_envs=2, vectorization_mode="async"))


# A Gymnasium vector env is lockstep: the async managers refuse it whatever its mode.
@pytest.mark.parametrize("manager_type", ["base", "subprocess"])
def test_an_async_gym_vector_env_runs_in_this_process_and_is_refused_in_a_worker_naming_the_fix(manager_type):
    from ding_env import create_env_manager
    from ding_env.errors import EnvError

    with create_env_manager({"type": manager_type}, [_async_cartpole_vector]) as manager:
        manager.seed(0)
        if manager_type == "base":
            manager.launch()
            assert manager.ready_obs_batch.env_id.tolist() == [0, 1]
            return
        with pytest.raises(EnvError, match="vectorization_mode 'async' starts processes of its own.*'sync' there"):
            manager.launch()

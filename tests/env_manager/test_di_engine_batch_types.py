"""DI-engine's ``env_pool`` and ``gym_vector`` manager types, against EnvPool and Gymnasium envs stepped directly."""

from functools import partial

import envpool
import gymnasium as gym
import numpy as np
import pytest

from ding_env import BaseEnvManager, DingEnvWrapper, create_env_manager
from ding_env.env.batch_sources.envpool_env import EnvPoolBatchEnv
from ding_env.env_manager import MANAGER_TYPES
from ding_env.env_manager.envpool_env_manager import PoolEnvManager
from ding_env.env_manager.gym_vector_env_manager import GymVectorEnvManager
from ding_env.errors import ClosedEnvError, ConfigError, EnvError, EnvStateError


def test_both_types_are_manager_types_at_their_di_engine_paths():
    assert {"env_pool", "gym_vector"} <= set(MANAGER_TYPES)
    pool = create_env_manager(dict(type="env_pool", env_id="CartPole-v1", env_num=2, batch_size=2), None)
    vector = create_env_manager(dict(type="gym_vector"), [partial(gym.make, "CartPole-v1")] * 2)
    assert isinstance(pool, PoolEnvManager) and isinstance(vector, GymVectorEnvManager)
    pool.close()
    vector.close()


def test_env_pool_steps_as_envpool_itself_with_truncation_kept():
    manager = PoolEnvManager(
        dict(env_id="CartPole-v1", env_num=4, batch_size=4, make_kwargs=dict(max_episode_steps=20))
    )
    manager.seed(7)
    manager.launch()
    raw = envpool.make_gymnasium("CartPole-v1", num_envs=4, seed=[7, 8, 9, 10], max_episode_steps=20)
    raw_obs, _ = raw.reset()
    assert np.array_equal(np.stack(list(manager.ready_obs.values())), raw_obs)
    rng = np.random.default_rng(0)
    truncations = 0
    for _ in range(60):
        actions = rng.integers(0, 2, 4)
        timesteps = manager.step({env_id: actions[env_id] for env_id in manager.ready_obs})
        obs, reward, terminated, truncated, _ = raw.step(actions)
        assert sorted(timesteps) == [0, 1, 2, 3]
        for env_id, timestep in timesteps.items():
            assert np.array_equal(timestep.obs, obs[env_id]) and timestep.reward[0] == reward[env_id]
            assert timestep.done == bool(terminated[env_id] or truncated[env_id])
            if timestep.done:
                truncations += timestep.info["truncated"]
                assert timestep.info["truncated"] == bool(truncated[env_id] and not terminated[env_id])
        ended = [env_id for env_id, timestep in timesteps.items() if timestep.done]
        if ended:  # EnvPool resets a finished env when it is stepped once more
            first = raw.step(np.zeros(len(ended), np.int64), env_id=np.array(ended, np.int32))[0]
            ready = manager.ready_obs
            assert np.array_equal(np.stack([ready[env_id] for env_id in ended]), first)
    assert truncations > 0
    manager.close()
    assert manager.closed


def _timesteps_as_tuples(timesteps: dict) -> list:
    return [(env_id, t.obs, t.reward, t.reward.dtype, t.done, t.info) for env_id, t in timesteps.items()]


def _assert_same_steps(ours: list, generic: list) -> None:
    assert len(ours) == len(generic)
    for (env_id, obs, reward, dtype, done, info), expected in zip(ours, generic, strict=True):
        assert (env_id, dtype, done, info) == (expected[0], expected[3], expected[4], expected[5])
        assert np.array_equal(obs, expected[1]) and np.array_equal(reward, expected[2])


@pytest.mark.parametrize(
    "env_id, keys, episode_ends",
    [
        ("CartPole-v1", dict(make_kwargs=dict(max_episode_steps=15)), "truncations and terminations"),
        # Episodic life: a lost life ends an episode, the game goes on, and eval_episode_return is the
        # raw game score across lives (rewards clipped).
        ("Breakout-v5", dict(episodic_life=True, reward_clip=True, stack_num=2), "lost lives"),
    ],
)
def test_env_pool_sync_mode_steps_as_an_envpool_batch_env_in_the_base_manager(env_id, keys, episode_ends):
    # The env_pool type steps its pool itself; an EnvPoolBatchEnv with the same settings in BaseEnvManager is
    # the managers' generic route. Same seeds and actions: the same timesteps, through reset() and seed().
    ours = PoolEnvManager(dict(env_id=env_id, env_num=3, batch_size=3, **keys))
    atari = {key: keys[key] for key in ("episodic_life", "reward_clip", "stack_num") if key in keys}
    if atari:
        atari.update(gray_scale=True, frame_skip=4)
    batch_cfg = dict(env_id=env_id, num_envs=3, env_wrapper=None, make_kwargs={**atari, **keys.get("make_kwargs", {})})
    generic = BaseEnvManager([partial(EnvPoolBatchEnv, batch_cfg)], BaseEnvManager.default_config())
    rng = np.random.default_rng(0)
    ended = 0
    for manager in (ours, generic):
        manager.seed(11)
        manager.launch()
    for step in range(300):
        if step == 100:
            for manager in (ours, generic):  # new episodes, from where the seeds' streams are
                manager.reset()
        if step == 200:
            for manager in (ours, generic):  # each env starts again from its new seed
                manager.seed(5)
                manager.reset()
        ready = ours.ready_obs
        assert list(ready) == list(generic.ready_obs) == [0, 1, 2]
        for env_id in ready:
            assert np.array_equal(ready[env_id], generic.ready_obs[env_id])
        actions = {
            env_id: int(action) for env_id, action in zip([2, 0, 1], rng.integers(0, 4 if atari else 2, 3), strict=True)
        }
        stepped = _timesteps_as_tuples(ours.step(actions))
        _assert_same_steps(stepped, _timesteps_as_tuples(generic.step(actions)))
        ended += sum(done for *_, done, _ in stepped)
    assert ended > 3, f"expected {episode_ends}"
    ours.close()
    generic.close()


def _per_env_trajectories(batch_size: int, steps: int) -> tuple[dict[int, list], list[int]]:
    """Each env's (obs acted on, reward, done, info, next obs) under actions fixed per env and step."""
    manager = PoolEnvManager(
        dict(env_id="CartPole-v1", env_num=6, batch_size=batch_size, make_kwargs=dict(max_episode_steps=12))
    )
    manager.seed(3)
    manager.launch()
    trajectories, counts, returned = {env_id: [] for env_id in range(6)}, [0] * 6, []
    acted_on, ready = {}, manager.ready_obs  # the observation each running env was given its action on
    while min(map(len, trajectories.values())) < steps:
        actions = {env_id: (env_id * 7 + counts[env_id]) % 3 % 2 for env_id in ready}
        for env_id in actions:
            acted_on[env_id] = ready[env_id]
            counts[env_id] += 1
        timesteps = manager.step(actions)
        returned.append(len(timesteps))
        for env_id, timestep in timesteps.items():
            trajectories[env_id].append(
                (acted_on.pop(env_id), timestep.reward, timestep.done, timestep.info, timestep.obs)
            )
        ready = manager.ready_obs
    manager.close()
    return {env_id: steps_[:steps] for env_id, steps_ in trajectories.items()}, returned


def test_env_pool_async_mode_gives_each_env_the_sync_mode_s_trajectory():
    # batch_size < env_num: EnvPool's asynchronous mode. Which envs come back in which step depends on
    # its threads; each env's own steps, its episode ends and restarts do not.
    sync, _ = _per_env_trajectories(batch_size=6, steps=40)
    asynchronous, returned = _per_env_trajectories(batch_size=4, steps=40)
    assert max(returned) == 4 and sum(count == 4 for count in returned) > len(returned) // 2
    ended = 0
    for env_id in range(6):
        for (obs, reward, done, info, next_obs), expected in zip(asynchronous[env_id], sync[env_id], strict=True):
            assert np.array_equal(obs, expected[0]) and np.array_equal(next_obs, expected[4])
            assert reward.dtype == expected[1].dtype and reward == expected[1] == 1.0  # no restart as a transition
            assert (done, info) == (expected[2], expected[3])
            ended += done
    assert ended > 6  # episodes ended, by termination and at the time limit, and restarted
    assert any(info.get("truncated") for steps in sync.values() for *_, info, _ in steps)


def test_env_pool_async_mode_always_leaves_an_env_to_act_on():
    # Episodes of 5 steps: some steps return only done envs, all restarting when the step ends.
    manager = create_env_manager(
        dict(
            type="env_pool",
            env_id="CartPole-v1",
            env_num=8,
            batch_size=4,
            seed=0,
            make_kwargs=dict(max_episode_steps=5),
        )
    )
    manager.launch()
    done_only = 0
    for step in range(100):
        ready = manager.ready_obs
        assert ready
        timesteps = manager.step({env_id: step % 2 for env_id in ready})
        done_only += bool(timesteps) and all(timestep.done for timestep in timesteps.values())
    assert done_only > 0
    manager.close()


def test_env_pool_async_mode_refuses_envs_that_are_not_ready_and_bad_actions():
    manager = create_env_manager(dict(type="env_pool", env_id="CartPole-v1", env_num=6, batch_size=4, seed=1))
    assert manager.closed
    with pytest.raises(EnvStateError, match="not launched"):
        manager.step({0: 0})
    manager.launch()
    assert len(manager.ready_obs) >= 4
    returned = manager.step({env_id: 0 for env_id in manager.ready_obs})
    assert 1 <= len(returned) <= 4
    waiting = sorted(set(range(6)) - set(manager.ready_obs))
    with pytest.raises(ValueError, match=rf"env ids \[{waiting[0]}\] are not ready"):
        manager.step({waiting[0]: 0})
    ready = sorted(manager.ready_obs)
    with pytest.raises(ValueError, match=rf"env {ready[0]}\b.*Discrete\(2\)"):
        manager.step({ready[0]: 5})
    manager.close()
    assert manager.closed and manager.ready_obs == {}
    for call in (lambda: manager.step({0: 0}), manager.reset, manager.launch):
        with pytest.raises(ClosedEnvError, match="is closed"):
            call()
    manager.close()  # twice is fine


def test_env_pool_gives_atari_games_di_engine_s_keys():
    manager = PoolEnvManager(dict(env_id="Pong-v5", env_num=2, batch_size=2, stack_num=2, gray_scale=False))
    manager.launch()
    assert manager.observation_space.shape == (6, 84, 84)
    assert all(obs.shape == (6, 84, 84) and obs.dtype == np.uint8 for obs in manager.ready_obs.values())
    manager.close()


@pytest.mark.parametrize(
    "cfg, message",
    [
        (dict(env_id="CartPole-v1", env_nums=2), "'env_nums'.*did you mean 'env_num'"),
        (dict(env_id="CartPole-v1", env_num=2, batch_size=3), "'batch_size': expected an int in 1..env_num=2, got 3"),
        (dict(env_num=2), "needs cfg.env_id"),
    ],
)
def test_env_pool_refuses_a_bad_config(cfg, message):
    with pytest.raises(ConfigError, match=message):
        PoolEnvManager(cfg)


def test_env_pool_takes_no_env_fn():
    with pytest.raises(ConfigError, match="'env_pool' makes its envs from its config"):
        create_env_manager(dict(type="env_pool", env_id="CartPole-v1"), [partial(gym.make, "CartPole-v1")])


def test_gym_vector_gives_the_trajectories_of_the_envs_stepped_one_by_one():
    make = partial(gym.make, "CartPole-v1", max_episode_steps=15)
    manager = create_env_manager(dict(type="gym_vector"), [make] * 3)
    manager.seed(11)
    manager.launch()
    envs = [make() for _ in range(3)]
    first = [env.reset(seed=11 + env_id)[0] for env_id, env in enumerate(envs)]
    assert np.array_equal(np.stack(list(manager.ready_obs.values())), np.stack(first))
    truncations = 0
    for step in range(40):
        actions = {env_id: np.int64((step + env_id) % 2) for env_id in range(3)}
        timesteps = manager.step(actions)
        for env_id, env in enumerate(envs):
            obs, reward, terminated, truncated, _ = env.step(int(actions[env_id]))
            timestep = timesteps[env_id]
            assert np.array_equal(timestep.obs, obs) and timestep.reward[0] == reward
            assert timestep.done == (terminated or truncated)
            if timestep.done:
                truncations += timestep.info["truncated"]
                assert np.array_equal(manager.ready_obs[env_id], env.reset()[0])
    assert truncations > 0
    manager.close()


@pytest.mark.parametrize(
    "second, message",
    [
        (partial(gym.make, "NoSuchEnv-v0"), r"\(.*'NoSuchEnv-v0'\)\): NameNotFound: Environment `NoSuchEnv`"),
        (
            partial(DingEnvWrapper, cfg=dict(env_id="CartPole-v1")),
            r"\(.*\)\): TypeError: it returned DingEnvWrapper\(CartPole-v1\), where env_fn 0 returned a Gymnasium env",
        ),
    ],
)
def test_gym_vector_names_the_env_fn_that_fails_to_build_a_gymnasium_env(second, message):
    manager = create_env_manager(dict(type="gym_vector"), [partial(gym.make, "CartPole-v1"), second])
    manager.seed(0)
    with pytest.raises(EnvError, match=r"env_fn 1 of 2 " + message):
        manager.launch()
    manager.close()


def test_gym_vector_hosts_base_envs_as_the_subprocess_manager_does():
    make = partial(DingEnvWrapper, cfg=dict(env_id="CartPole-v1"))
    results = []
    for manager_type in ("gym_vector", "subprocess"):
        with create_env_manager(dict(type=manager_type), [make] * 2) as manager:
            manager.seed(4)
            manager.launch()
            for step in range(30):
                timesteps = manager.step({env_id: np.int64(step % 2) for env_id in manager.ready_obs})
            results.append({env_id: timestep.obs for env_id, timestep in timesteps.items()})
    assert results[0].keys() == results[1].keys()
    assert all(np.array_equal(results[0][env_id], results[1][env_id]) for env_id in results[0])


MODES = pytest.mark.parametrize("batch_size", [6, 4], ids=["sync", "async"])


def _launched_pool(batch_size: int) -> PoolEnvManager:
    manager = PoolEnvManager(dict(env_id="CartPole-v1", env_num=6, batch_size=batch_size, seed=2))
    manager.launch()
    return manager


@MODES
def test_env_pool_timesteps_and_ready_obs_are_the_caller_s_own(batch_size):
    manager = _launched_pool(batch_size)
    timesteps = manager.step({env_id: 0 for env_id in manager.ready_obs})
    before = manager.ready_obs
    for timestep in timesteps.values():
        timestep.obs[:] = 123.0
    for obs in before.values():
        obs[:] = -7.0
    after = manager.ready_obs
    assert after and not any((obs == 123.0).any() or (obs == -7.0).any() for obs in after.values())
    manager.close()


@MODES
def test_env_pool_refuses_ids_that_are_not_env_ids_and_takes_numpy_ints(batch_size):
    manager = _launched_pool(batch_size)
    for bad in (1.0, True, 6, -1, "0"):
        with pytest.raises(ValueError, match=r"env ids are ints in \[0, 6\), got \[" + repr(bad).replace(".", r"\.")):
            manager.step({bad: 0})
    ready = list(manager.ready_obs)
    timesteps = manager.step({np.int64(env_id): 0 for env_id in ready})
    assert all(type(env_id) is int for env_id in (*timesteps, *manager.ready_obs))
    manager.close()


@MODES
def test_env_pool_needs_launch_before_reset_and_is_closed_for_seed_after_close(batch_size):
    manager = PoolEnvManager(dict(env_id="CartPole-v1", env_num=6, batch_size=batch_size))
    with pytest.raises(EnvStateError, match="not launched"):
        manager.reset()
    manager.launch()
    manager.reset()
    assert len(manager.ready_obs) >= batch_size
    manager.close()
    with pytest.raises(ClosedEnvError, match="is closed"):
        manager.seed(1)


@pytest.mark.parametrize(
    "seed, error, needle",
    [
        (-1, ValueError, "seed must be an int >= 0, got -1"),
        (1.5, TypeError, "seed must be an int >= 0, got float 1.5"),
        (True, TypeError, "got bool True"),
        ("3", TypeError, "got str '3'"),
        (2**31 - 5, ValueError, "seed + env id must fit EnvPool's int32 seeds (at most 2147483647), got 2147483643"),
    ],
)
def test_env_pool_refuses_a_bad_seed_when_given_as_the_other_managers_do(seed, error, needle):
    with pytest.raises(error) as raised:
        PoolEnvManager(dict(env_id="CartPole-v1", env_num=6, batch_size=6, seed=seed))
    assert "config 'seed'" in str(raised.value) and "PoolEnvManager(CartPole-v1" in str(raised.value)
    manager = PoolEnvManager(dict(env_id="CartPole-v1", env_num=6, batch_size=6))
    with pytest.raises(error) as raised:
        manager.seed(seed)
    assert needle in str(raised.value) and len(str(raised.value)) < 300
    with pytest.raises(TypeError, match="dynamic_seed must be True, False or None"):
        manager.seed(0, dynamic_seed="no")
    manager.seed(2**31 - 6)  # the last env's seed is the largest int32
    manager.launch()
    assert sorted(manager.ready_obs) == list(range(6))
    manager.close()


def test_env_pool_async_step_without_actions_returns_the_running_envs_results():
    manager = _launched_pool(2)  # 6 envs, 2 results a step: 4 envs still running after each step
    for _ in range(3):
        manager.step({env_id: 1 for env_id in manager.ready_obs})
    assert len(manager.step({})) == 2
    manager.close()


# A regression here hangs in EnvPool's recv, which a signal cannot break: the thread method ends the run.
HANGS_IF_BROKEN = pytest.mark.timeout(60, method="thread")


@HANGS_IF_BROKEN
@MODES
@pytest.mark.parametrize("where", ["send", "recv"])
def test_env_pool_steps_interrupted_in_envpool_s_calls_are_reported_and_reset_makes_a_new_pool(
    batch_size, where, monkeypatch
):
    # Ctrl-C lands in EnvPool's own send or recv after it did its part: the envs are then in no known
    # state. Every later step says so (none waits for results that will not come); reset() recovers.
    armed = []  # the next send (recv) of the pool is interrupted
    make_pool = EnvPoolBatchEnv.make_pool

    def interruptible_pool(self, seeds, batch_size=None):
        pool = make_pool(self, seeds, batch_size)
        real = getattr(pool, where)

        def call(*args, **kwargs):
            result = real(*args, **kwargs)
            if armed:
                armed.clear()
                raise KeyboardInterrupt
            return result

        setattr(pool, where, call)
        return pool

    monkeypatch.setattr(EnvPoolBatchEnv, "make_pool", interruptible_pool)
    manager = _launched_pool(batch_size)
    manager.step({env_id: 0 for env_id in manager.ready_obs})  # steps go through until one is interrupted
    armed.append(True)
    with pytest.raises(KeyboardInterrupt):
        manager.step({env_id: 1 for env_id in manager.ready_obs})
    for _ in range(2):
        with pytest.raises(EnvStateError, match=r"interrupted \(KeyboardInterrupt\).*call reset\(\)"):
            manager.step({env_id: 0 for env_id in manager.ready_obs})
    manager.reset()
    assert len(manager.ready_obs) >= batch_size
    for _ in range(3):
        assert len(manager.step({env_id: 0 for env_id in manager.ready_obs})) == batch_size
    manager.close()


@HANGS_IF_BROKEN
@MODES
def test_env_pool_recovers_with_reset_from_a_step_that_failed_after_its_results_arrived(batch_size, monkeypatch):
    # An exception between EnvPool's recv and the timesteps: later steps say the pool was interrupted.
    manager = _launched_pool(batch_size)
    convert = EnvPoolBatchEnv.convert_obs

    def fail_once(self, obs):
        monkeypatch.setattr(EnvPoolBatchEnv, "convert_obs", convert)
        raise RuntimeError("broken")

    monkeypatch.setattr(EnvPoolBatchEnv, "convert_obs", fail_once)
    with pytest.raises(RuntimeError, match="broken"):
        manager.step({env_id: 0 for env_id in manager.ready_obs})
    with pytest.raises(EnvStateError, match=r"interrupted \(RuntimeError\)"):
        manager.step({env_id: 0 for env_id in manager.ready_obs})
    manager.reset()
    assert len(manager.ready_obs) >= batch_size
    assert len(manager.step({env_id: 0 for env_id in manager.ready_obs})) == batch_size
    manager.close()


@HANGS_IF_BROKEN
def test_env_pool_sync_mode_steps_any_subset_of_its_envs():
    manager = _launched_pool(6)
    for subset in ([0, 3], [5], [1, 2, 4, 0], list(range(6))):
        timesteps = manager.step({env_id: 1 for env_id in subset})
        assert list(timesteps) == subset
        assert list(manager.ready_obs) == list(range(6))
    manager.close()

"""The random policy: valid batches of actions, reproducible from its seed, with no side effects."""

import gymnasium as gym
import numpy as np
import pytest

from ding_env.policies import RandomPolicy

SPACES = [
    gym.spaces.Box(-1.0, 1.0, (6,), np.float32),
    gym.spaces.Box(np.array([0, -5]), np.array([3, 5]), dtype=np.int64),
    gym.spaces.Discrete(3, start=1),
    gym.spaces.MultiDiscrete([2, 5]),
    gym.spaces.MultiBinary(4),
]


def draws(policy, sizes, obs_shape=(4,)):
    return [policy(np.zeros((size, *obs_shape), np.float32)) for size in sizes]


@pytest.mark.parametrize("space", SPACES, ids=lambda space: type(space).__name__)
def test_batches_are_valid_actions_of_the_space(space):
    policy = RandomPolicy(space, seed=3)
    for size, actions in zip([4, 4, 1, 7], draws(policy, [4, 4, 1, 7]), strict=True):
        assert actions.shape == (size, *space.shape) and actions.dtype == space.dtype
        assert all(space.contains(action) for action in actions)


@pytest.mark.parametrize("space", SPACES, ids=lambda space: type(space).__name__)
def test_same_seed_same_actions_other_seed_others(space):
    sizes = [4, 3, 4, 4, 3] * 4
    first, again, other = (draws(RandomPolicy(space, seed), sizes) for seed in (0, 0, 1))
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other, strict=True))


def test_the_given_space_and_global_rng_are_untouched():
    space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    space.seed(11)
    reference = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    reference.seed(11)
    global_state = np.random.get_state()[1].copy()
    draws(RandomPolicy(space, seed=0), [4, 2])
    np.testing.assert_array_equal(space.sample(), reference.sample())
    np.testing.assert_array_equal(np.random.get_state()[1], global_state)


def test_observation_batches_of_dict_spaces_are_counted_by_their_first_leaf():
    policy = RandomPolicy(gym.spaces.Discrete(2), seed=0)
    assert policy({"image": np.zeros((5, 3, 3)), "vector": np.zeros((5, 2))}).shape == (5,)


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess"])
def test_actions_of_a_space_with_no_one_array_batch_step_every_manager(manager_type):
    from ding_env import create_env_manager
    from dizoo.gym_hybrid.envs import GymHybridEnv
    from tests.conftest import manager_cfg

    with create_env_manager(manager_cfg(manager_type), [GymHybridEnv] * 3) as manager:
        manager.seed(0)
        manager.launch()
        policy = RandomPolicy(manager.action_space, seed=0)
        for step in range(6):
            ready = manager.ready_obs_batch
            actions = policy(ready.obs)
            assert len(actions) == len(ready.env_id) and all(manager.action_space.contains(a) for a in actions)
            if step % 2:  # as numpy holds a list of dicts: one object per env
                held = np.empty(len(actions), dtype=object)
                held[:] = actions
                actions = held
            assert len(manager.step_batch(ready.env_id, actions).env_id) >= 1


@pytest.mark.parametrize("space", SPACES, ids=lambda space: type(space).__name__)
def test_with_env_ids_each_env_draws_the_same_actions_in_any_batch(space):
    together, apart = RandomPolicy(space, seed=5), RandomPolicy(space, seed=5)
    rows = np.zeros((3, 4), np.float32)
    for _ in range(4):
        batch = together(rows, np.array([0, 1, 2]))
        assert batch.shape == (3, *space.shape) and batch.dtype == space.dtype
        assert all(space.contains(action) for action in batch)
        one_by_one = [apart(rows[:1], [env_id])[0] for env_id in (2, 0, 1)]
        np.testing.assert_array_equal(batch, np.stack([one_by_one[1], one_by_one[2], one_by_one[0]]))
    other = RandomPolicy(space, seed=6)
    assert not all(np.array_equal(together(rows, [0, 1, 2]), other(rows, [0, 1, 2])) for _ in range(4))


def test_env_ids_must_match_the_rows():
    with pytest.raises(ValueError, match="2 env ids for 3 observation rows"):
        RandomPolicy(gym.spaces.Discrete(2))(np.zeros((3, 1)), [0, 1])

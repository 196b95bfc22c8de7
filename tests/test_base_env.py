import pickle
import random

import numpy as np
import pytest

from dizoo.card_game.envs import CardGameEnv
from tests.envs import CountingEnv, episode_observations


def _episode(env, actions=(0, 0, 0, 0, 0, 0, 0, 0)):
    return np.concatenate(episode_observations(env, actions))


def test_construction_is_lazy_and_picklable():
    env = CardGameEnv({"max_episode_steps": 7})
    assert env._init_flag is False
    clone = pickle.loads(pickle.dumps(env))
    assert clone._cfg.max_episode_steps == 7


def test_static_seed_replays_the_same_episode():
    env = CardGameEnv()
    env.seed(3, dynamic_seed=False)
    first, second = _episode(env), _episode(env)
    np.testing.assert_array_equal(first, second)


def test_dynamic_seed_gives_new_episodes_reproducibly():
    env_a, env_b = CardGameEnv(), CardGameEnv()
    env_a.seed(3, dynamic_seed=True)
    env_b.seed(3, dynamic_seed=True)
    episodes_a = [_episode(env_a) for _ in range(6)]
    episodes_b = [_episode(env_b) for _ in range(6)]
    for a, b in zip(episodes_a, episodes_b, strict=True):
        np.testing.assert_array_equal(a, b)
    assert len({tuple(e) for e in episodes_a}) > 1


def test_np_random_is_the_episode_generator_whenever_first_used():
    # The generator is built lazily; skipped episodes must not shift it.
    used_at_once, used_later = CardGameEnv(), CardGameEnv()
    for env in (used_at_once, used_later):
        env.seed(11, dynamic_seed=False)
    used_at_once.reset()
    first = used_at_once.np_random.integers(0, 2**31, size=4)
    used_later.reset()
    used_later.reset()
    np.testing.assert_array_equal(used_later.np_random.integers(0, 2**31, size=4), first)
    used_later.reset()
    np.testing.assert_array_equal(used_later.np_random.integers(0, 2**31, size=4), first)


def test_different_seeds_differ():
    env = CardGameEnv()
    env.seed(1, dynamic_seed=False)
    first = [_episode(env) for _ in range(1)][0]
    env.seed(2, dynamic_seed=False)
    second = _episode(env)
    assert not np.array_equal(first, second)


def test_seeding_never_touches_global_rng():
    np_state, py_state = np.random.get_state(), random.getstate()
    env = CardGameEnv()
    env.seed(5)
    _episode(env)
    env.random_action()
    assert random.getstate() == py_state
    after = np.random.get_state()
    assert all(np.array_equal(a, b) for a, b in zip(np_state, after, strict=True))


def test_seed_rejects_bad_values():
    env = CardGameEnv()
    with pytest.raises(TypeError, match="seed must be an int"):
        env.seed("1")
    with pytest.raises(ValueError, match=">= 0"):
        env.seed(-1)


def test_random_action_is_in_space_with_declared_dtype_and_reproducible():
    # CountingEnv builds its action space anew at every access, as a property returning a space literal does:
    # the sampler was seeded again at every call, and every call gave the same action.
    env_a, env_b, env_c = CountingEnv(), CountingEnv(), CountingEnv()
    env_a.seed(0)
    env_b.seed(0)
    env_c.seed(1)
    actions_a = [env_a.random_action() for _ in range(20)]
    actions_b = [env_b.random_action() for _ in range(20)]
    assert actions_a == actions_b
    assert all(env_a.action_space.contains(a) and a.dtype == np.int64 for a in actions_a)
    assert {int(a) for a in actions_a} == {0, 1, 2}
    assert [env_c.random_action() for _ in range(20)] != actions_a
    env_a.seed(0)  # seeding again starts the draws again
    assert [env_a.random_action() for _ in range(20)] == actions_a


def test_default_config_is_a_copy():
    cfg = CardGameEnv.default_config()
    cfg.max_episode_steps = 1
    assert CardGameEnv.config["max_episode_steps"] == 50


def test_collector_and_evaluator_cfgs_are_independent_copies():
    cfg = {"collector_env_num": 3, "evaluator_env_num": 2, "manager": {"shared_memory": True}}
    collector = CardGameEnv.create_collector_env_cfg(cfg)
    evaluator = CardGameEnv.create_evaluator_env_cfg(cfg)
    assert len(collector) == 3 and len(evaluator) == 2
    assert all(c.is_train for c in collector) and not any(c.is_train for c in evaluator)
    collector[0].manager.shared_memory = False
    assert collector[1].manager.shared_memory is True
    assert cfg == {"collector_env_num": 3, "evaluator_env_num": 2, "manager": {"shared_memory": True}}


def test_env_count_must_be_positive():
    with pytest.raises(ValueError, match="collector_env_num must be an int >= 1"):
        CardGameEnv.create_collector_env_cfg({"collector_env_num": 0})


def test_card_game_rules():
    env = CardGameEnv()
    env.seed(0, dynamic_seed=False)
    obs = env.reset()
    assert obs.dtype == np.int64 and obs.shape == (1,) and obs[0] == 0
    timestep = env.step(1)
    assert timestep.done and timestep.terminated and timestep.reward[0] == -21.0
    assert timestep.info["eval_episode_return"] == -21.0
    with pytest.raises(ValueError, match="action must be 0"):
        env.reset()
        env.step(2)


def test_card_game_truncates_at_its_step_limit():
    env = CardGameEnv({"max_episode_steps": 1})
    env.seed(0)
    env.reset()
    timestep = env.step(0)
    # One card never reaches 21, so the step limit cuts the round.
    assert timestep.done and timestep.truncated and not timestep.terminated


def test_an_env_closes_at_the_end_of_a_with_block():
    from ding_env import DingEnvWrapper

    with DingEnvWrapper(cfg={"env_id": "CartPole-v1"}) as env:
        env.reset()
        assert env._env is not None
    assert env._env is None  # closed


def test_an_env_may_assign_its_own_np_random():
    """DI-engine's envs seed in gym's idiom: self.np_random, _ = seeding.np_random(seed)."""
    from gymnasium.utils import seeding

    env = CountingEnv()
    env.np_random, _ = seeding.np_random(3)
    assert env.np_random.integers(1000) == np.random.default_rng(3).integers(1000)

"""Bad input, fed to every manager: a clear, short error before anything reaches an env, and no harm done.

Each case asserts the error class (a library error, ``TypeError`` or ``ValueError``), that the message
names the env id or key and what arrived, stays short (no 1 MB repr), and that the manager then steps
exactly as one that never saw the bad input.
"""

from __future__ import annotations

from functools import partial
from typing import ClassVar

import gymnasium as gym
import numpy as np
import pytest

from ding_env import DingEnvWrapper, create_env_manager
from ding_env.errors import ConfigError, DingEnvError, EnvDataError, EnvError
from dizoo.classic_control.cartpole.envs.cartpole_batch_env import CartPoleBatchEnv
from tests.conftest import manager_cfg
from tests.envs import (
    ActionKindEnv,
    CountingEnv,
    DictActionEnv,
    DIEngineStyleEnv,
    SeedWithoutDynamicEnv,
    TupleActionEnv,
)

MANAGERS = ["base", "subprocess", "async_subprocess"]
MAX_MESSAGE = 500
ACCEPTED = (DingEnvError, TypeError, ValueError)


def message_of(error: BaseException) -> str:
    """The message without the env's own traceback (which the error carries for debugging)."""
    return str(error).split("\n--- traceback", 1)[0]


def assert_clear(error: BaseException, *needles: str) -> None:
    text = message_of(error)
    assert isinstance(error, ACCEPTED), type(error)
    assert len(text) <= MAX_MESSAGE, len(text)
    for needle in needles:
        assert needle in text, (needle, text)


def lockstep(manager, reference, steps=3):
    """Step both managers with the same valid actions; their results must be identical."""
    for t in range(steps):
        ids = reference.ready_obs_id
        assert manager.ready_obs_id == ids
        actions = {env_id: (env_id + t) % 2 for env_id in ids}
        got, expected = manager.step(actions), reference.step(actions)
        for env_id in ids:
            np.testing.assert_array_equal(got[env_id].obs, expected[env_id].obs)
            np.testing.assert_array_equal(got[env_id].reward, expected[env_id].reward)


@pytest.fixture(params=MANAGERS)
def pair(request, hosted):
    """A launched manager of 3 CountingEnvs (hosted as ``hosted`` gives them) and a serial reference seeded alike."""
    fns = [partial(CountingEnv, {"limit": 10**6})] * 3
    manager = create_env_manager(manager_cfg(request.param, num_workers=2), hosted(fns))
    managers = [manager, create_env_manager({}, fns)]
    for manager in managers:
        manager.seed(7)
        manager.launch()
    yield managers
    for manager in managers:
        manager.close()


# (call, text the message must hold): Discrete(3) actions and step() arguments.
BAD_STEPS = [
    (lambda m: m.step([1, 1, 1]), "step() takes {env_id: action}"),
    (lambda m: m.step((2, 1)), "got tuple"),
    (lambda m: m.step(None), "got NoneType"),
    (lambda m: m.step({0: 1, 1: True, 2: 1}), "env 1"),
    (lambda m: m.step({0: 1, 1: 1.5, 2: 1}), "env 1 is not a whole number"),
    (lambda m: m.step({0: 1, 1: "1", 2: 1}), "env 1"),
    (lambda m: m.step({0: np.nan}), "env 0"),
    (lambda m: m.step({0: 1 + 2j}), "env 0"),
    (lambda m: m.step({0: 3}), "env 0 is out of range"),
    (lambda m: m.step({2: [1, 2]}), "env 2 has shape (2,)"),
    (lambda m: m.step({0: None}), "env 0"),
    (lambda m: m.step({1: list(range(200_000))}), "env 1"),
    (lambda m: m.step({7: 0}), "env id 7 is out of range"),
    (lambda m: m.step({-1: 0}), "env id -1"),
    (lambda m: m.step({0.0: 1}), "0.0"),
    (lambda m: m.step_batch([0, 0], np.zeros(2, np.int64)), "duplicates"),
    (lambda m: m.step_batch([2, 0, 2], np.zeros(3, np.int64)), "env id 2 appears more than once"),
    (lambda m: m.step_batch([True, 1], np.zeros(2, np.int64)), "got True"),
    (lambda m: m.step_batch(np.array([[0], [1]]), np.zeros(2, np.int64)), "1-d array of ids"),
    (lambda m: m.step_batch([0, 1], np.zeros(3, np.int64)), "shape"),
    (lambda m: m.step_batch(["a"], np.zeros(1, np.int64)), "env ids"),
    (lambda m: m.seed([1.5, 2, 3]), "seed of env 0 must be an int"),
    (lambda m: m.seed({0: "x"}), "seed of env 0"),
    (lambda m: m.seed(-1), "seed must be an int >= 0"),
    (lambda m: m.seed("abc"), "seed must be an int"),
    (lambda m: m.seed([1, 2]), "2 seeds for 3 envs"),
    (lambda m: m.seed(1, dynamic_seed="yes"), "dynamic_seed"),
    (lambda m: m.reset({0: "abc"}), "reset_param for env 0 must be a dict"),
    (lambda m: m.reset([2]), "reset_param must be None or"),
    (lambda m: m.reset({9: {}}), "env id 9"),
]


@pytest.mark.parametrize(("call", "needle"), BAD_STEPS, ids=[str(i) for i in range(len(BAD_STEPS))])
def test_bad_calls_are_refused_and_change_nothing(pair, call, needle):
    manager, reference = pair
    with pytest.raises(ACCEPTED) as raised:
        call(manager)
    assert_clear(raised.value, needle)
    lockstep(manager, reference)


def test_a_bad_reset_kwarg_does_not_stick(pair):
    manager, reference = pair
    with pytest.raises(EnvError) as raised:  # env 2: a plain env in every hosting (batch envs refuse reset params)
        manager.reset({2: {"bogus": 1}})
    assert_clear(raised.value, "env 2 failed in reset", "bogus")
    manager.reset()  # every env, with the params each had before: the bad one is gone
    reference.reset()
    lockstep(manager, reference)


BAD_ACTIONS = {  # env -> [(actions for envs 0 and 1, text the message must hold)]
    "box": [
        ({0: [np.nan, 0.0], 1: [0.0, 0.0]}, "env 0 holds NaN"),
        ({0: [0.0, 0.0], 1: [np.inf, 0.0]}, "env 1 holds NaN or inf"),
        ({0: [0.0, 0.0], 1: [2.0, 0.0]}, "env 1 is outside the bounds"),
        ({0: [0.0], 1: [0.0, 0.0]}, "env 0 has shape (1,)"),
        ({0: ["a", "b"], 1: [0.0, 0.0]}, "env 0 has dtype <U1"),
        ({0: [0.0, 0.0], 1: [1j, 0.0]}, "env 1 has dtype complex128"),
    ],
    "multi_discrete": [
        ({0: [3, 0], 1: [0, 0]}, "env 0 is out of range"),
        ({0: [0, 0], 1: [0.5, 0]}, "env 1 is not a whole number"),
        ({0: [0, 0], 1: [0, 0, 0]}, "env 1 has shape (3,)"),
    ],
    # The bounds error named the widest bounds of all elements ([-1.0, 2.0]), which held the element out of its own.
    "box_per_dim": [
        ({0: [0.5, -0.5], 1: [0.0, 0.0]}, "env 0 is outside the bounds: element 1 is -0.5, outside [0.0, 2.0]")
    ],
    "box_matrix": [
        (
            {0: np.zeros((2, 3)), 1: np.eye(2, 3) * 1.5},
            "env 1 is outside the bounds: element (0, 0) is 1.5, outside [-1.0, 1.0]",
        )
    ],
}


@pytest.mark.parametrize("manager_type", MANAGERS)
def test_an_env_whose_seed_takes_no_dynamic_seed_is_told_how_to_declare_it(manager_type):
    # It failed with Python's "got an unexpected keyword argument 'dynamic_seed'" and no word of what to write.
    with create_env_manager(manager_cfg(manager_type), [SeedWithoutDynamicEnv] * 2) as manager:
        manager.seed(0, dynamic_seed=True)
        with pytest.raises(EnvError) as raised:
            manager.launch()
    assert_clear(
        raised.value,
        "env 0",
        "SeedWithoutDynamicEnv.seed() takes no dynamic_seed",
        "def seed(self, seed, dynamic_seed=True)",
    )


@pytest.mark.parametrize("manager_type", MANAGERS)
@pytest.mark.parametrize("space", sorted(BAD_ACTIONS))
def test_bad_box_and_multi_discrete_actions_name_the_env(manager_type, space, hosted):
    fns = hosted([partial(ActionKindEnv, {"space": space, "limit": 10**6})] * 2)
    with create_env_manager(manager_cfg(manager_type), fns) as manager:
        manager.launch()
        for actions, needle in BAD_ACTIONS[space]:
            with pytest.raises(ValueError) as raised:
                manager.step(actions)
            assert_clear(raised.value, needle)
        good = {0: manager.action_space.sample(), 1: manager.action_space.sample()}
        assert sorted(manager.step(good)) == [0, 1]


@pytest.mark.parametrize("manager_type", MANAGERS)
def test_an_action_with_as_many_values_in_another_shape_is_refused_not_reshaped(manager_type, hosted):
    fns = hosted([partial(ActionKindEnv, {"space": "box_matrix", "limit": 10**6})] * 2)
    good = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    with create_env_manager(manager_cfg(manager_type), fns) as manager:
        manager.launch()
        for bad in (good.T, good.reshape(6)):  # reshaped, the values would land in other places
            with pytest.raises(ValueError) as raised:
                manager.step({0: good, 1: bad})
            assert_clear(raised.value, f"env 1 has shape {bad.shape}, expected (2, 3)")
            with pytest.raises(ValueError) as raised:
                manager.step_batch(np.array([0, 1]), np.stack([bad, bad]))
            assert_clear(raised.value, f"got shape {(2, *bad.shape)}")
        # Dimensions of size 1 are taken (as DI-engine's (1,) for a Discrete action).
        assert sorted(manager.step({0: good[None], 1: good[:, :, None]})) == [0, 1]
        assert len(manager.step_batch(np.array([0, 1]), np.stack([good, good])[:, None]).env_id) == 2


@pytest.mark.parametrize("manager_type", MANAGERS)
def test_bad_dict_actions_name_the_env(manager_type, hosted):
    fns = hosted([partial(DictActionEnv, {"limit": 10**6})] * 2)
    with create_env_manager(manager_cfg(manager_type), fns) as manager:
        manager.launch()
        for actions in (
            {0: {"push": 1}, 1: {"push": 1, "scale": np.ones(1, np.float32)}},
            {0: {"push": 1, "scale": np.ones(1, np.float32)}, 1: {"push": 5, "scale": np.ones(1, np.float32)}},
            {0: {"push": 1, "scale": np.ones(1, np.float32)}, 1: "push"},
        ):
            with pytest.raises(ValueError) as raised:
                manager.step(actions)
            bad = 0 if "scale" not in actions[0] else 1
            assert_clear(raised.value, f"env {bad} is not in the action space")
        assert sorted(manager.step({0: {"push": 1, "scale": [0.5]}, 1: {"push": 2, "scale": [1.0]}})) == [0, 1]


@pytest.mark.parametrize("manager_type", MANAGERS)
@pytest.mark.parametrize(
    ("env_cls", "with_push", "where"),
    [
        (DictActionEnv, lambda push: {"push": push, "scale": np.ones(1, np.float32)}, "action['push']"),
        (TupleActionEnv, lambda push: (push, np.ones(1, np.float32)), "action[0]"),
    ],
    ids=["dict", "tuple"],
)
def test_a_bool_for_a_discrete_part_of_a_dict_or_tuple_action_names_the_env_and_key(
    manager_type, env_cls, with_push, where, hosted
):
    fns = hosted([partial(env_cls, {"limit": 10**6})] * 2)
    with create_env_manager(manager_cfg(manager_type), fns) as manager:
        manager.launch()
        with pytest.raises(ValueError) as raised:
            manager.step({0: with_push(1), 1: with_push(True)})  # Gymnasium's Discrete.contains takes it
        assert_clear(raised.value, f"action for env 1 holds a bool at {where}", "True")
        with pytest.raises(ValueError) as raised:
            manager.step({0: with_push(1), 1: with_push(np.bool_(True))})
        assert_clear(raised.value, "action for env 1", "np.True_")
        assert sorted(manager.step({0: with_push(1), 1: with_push(2)})) == [0, 1]  # no harm done


@pytest.mark.parametrize("manager_type", MANAGERS)
def test_stacked_dict_actions_with_ragged_rows_name_the_key(manager_type, hosted):
    fns = hosted([partial(DictActionEnv, {"limit": 10**6})] * 2)
    with create_env_manager(manager_cfg(manager_type), fns) as manager:
        manager.launch()
        for push, scale, key, rows in (
            (np.ones(3, np.int64), np.ones((2, 1), np.float32), "push", "shape=(3,)"),
            (np.ones(2, np.int64), np.ones((1, 1), np.float32), "scale", "shape=(1, 1)"),
            (np.int64(1), np.ones((2, 1), np.float32), "push", "1"),
        ):
            with pytest.raises(ValueError) as raised:
                manager.step_batch([0, 1], {"push": push, "scale": scale})
            assert_clear(raised.value, "envs [0, 1]", f"expected 2 rows in actions[{key!r}], got", rows)
        batch = manager.step_batch([0, 1], {"push": np.ones(2, np.int64), "scale": np.ones((2, 1), np.float32)})
        assert batch.env_id.tolist() == [0, 1]


NOT_A_LIST = [CountingEnv, partial(CountingEnv, {}), "CountingEnv", {0: CountingEnv}, 3]


@pytest.mark.parametrize("env_fn", NOT_A_LIST, ids=["class", "partial", "str", "dict", "int"])
@pytest.mark.parametrize("manager_type", [*MANAGERS, "base_v2", "subprocess_v2", "remote", "async_remote"])
def test_an_env_fn_that_is_not_a_list_of_constructors_is_named(manager_type, env_fn):
    cfg = {"type": manager_type, "servers": ["tcp://127.0.0.1:5555"]} if "remote" in manager_type else manager_type
    with pytest.raises(TypeError) as raised:
        create_env_manager(manager_cfg(cfg) if isinstance(cfg, str) else cfg, env_fn)
    assert_clear(raised.value, "env_fn must be a list with one env constructor per env", type(env_fn).__name__)


def test_an_env_supervisor_env_fn_that_is_not_a_list_is_named():
    from ding_env import EnvSupervisor

    with pytest.raises(TypeError) as raised:
        EnvSupervisor(env_fn=partial(CountingEnv, {}))
    assert_clear(raised.value, "env_fn must be a list with one env constructor per env", "got partial")


@pytest.mark.parametrize("cfg", ["abc", ["env_id", "CartPole-v1"], 3])
def test_an_env_cfg_that_is_not_a_dict_is_named(cfg):
    for make in (partial(DingEnvWrapper, cfg=cfg), partial(CountingEnv, cfg), partial(CartPoleBatchEnv, cfg)):
        with pytest.raises(ConfigError) as raised:
            make()
        assert_clear(raised.value, "cfg: expected a dict of config keys (or None)", type(cfg).__name__)


# (key, bad value, what the message must say is expected)
BAD_MANAGER_KEYS = [
    ("type", "threads", "one of"),
    ("episode_num", 0, "an int >= 1 or inf"),
    ("episode_num", "2", "an int >= 1 or inf"),
    ("max_retry", 0, "an int >= 1"),
    ("retry_type", "again", "'reset' or 'renew'"),
    ("auto_reset", "False", "True or False"),
    ("auto_reset", None, "True or False"),
    ("step_timeout", 0, "None or seconds > 0"),
    ("step_timeout", "1", "None or seconds > 0"),
    ("reset_timeout", -1, "None or seconds > 0"),
    ("retry_waiting_time", -1, "seconds >= 0"),
    ("shared_memory", "no", "True or False"),
    ("shared_memory", None, "True or False"),
    ("shared_memory", 2, "True or False"),
    ("copy_on_get", "yes", "True or False"),
    ("context", "thread", "one of"),
    ("wait_num", 0, "None, inf or an int >= 1"),
    ("wait_num", "all", "None, inf or an int >= 1"),
    ("step_wait_timeout", -1, "None or seconds >= 0"),
    ("connect_timeout", 0, "seconds > 0"),
    ("num_workers", 0, "None or an int >= 1"),
    ("num_workers", 1.5, "None or an int >= 1"),
    ("cpu_affinity", "yes", "True or False"),
    ("step_error", "ignore", "'raise' or 'abnormal'"),
    ("address", "nonsense", "'HOST:PORT' or 'ray://HOST:PORT'"),
    ("address", "ray://head", "'HOST:PORT' or 'ray://HOST:PORT'"),
    ("auto_rest", True, "did you mean 'auto_reset'"),
]


BAD_MANAGER_KEYS_KNOWN = {key for key, _, _ in BAD_MANAGER_KEYS if key != "auto_rest"}


@pytest.mark.parametrize("manager_type", MANAGERS)
@pytest.mark.parametrize(("key", "value", "expected"), BAD_MANAGER_KEYS)
def test_every_manager_config_key_is_checked(manager_type, key, value, expected):
    with pytest.raises(ConfigError) as raised:
        create_env_manager({"type": manager_type, key: value}, [CountingEnv] * 2)
    assert_clear(raised.value, key, expected, repr(value) if key in BAD_MANAGER_KEYS_KNOWN else key)


@pytest.mark.parametrize("cfg", ["abc", ["type", "base"], 3])
def test_a_manager_config_that_is_not_a_dict(cfg):
    with pytest.raises(ConfigError) as raised:
        create_env_manager(cfg, [CountingEnv])
    assert_clear(raised.value, "expected a dict", type(cfg).__name__)


BAD_WRAPPER_KEYS = [
    ("env_id", 123),
    ("make_kwargs", "max_episode_steps=5"),
    ("env_wrapper", 5),
    ("env_wrapper", "atari_defualt"),  # a preset name mistyped: refused at the first reset, naming no env
    ("act_scale", "yes"),
    ("action_clip", 1),
    ("rew_clip", "no"),
    ("scale_obs", "no"),
    ("is_train", "no"),
    ("frame_stack", 0),
    ("noop_max", -1),
    ("frame_skip", 0),
    ("screen_size", 0),
    ("repeat_action_probability", 2),
    ("replay_path", 5),
]


@pytest.mark.parametrize(("key", "value"), BAD_WRAPPER_KEYS)
def test_every_ding_env_wrapper_key_is_checked_when_the_wrapper_is_built(key, value):
    with pytest.raises(ConfigError) as raised:
        DingEnvWrapper(cfg={"env_id": "CartPole-v1", key: value})
    assert_clear(raised.value, repr(key), repr(value), *(["DingEnvWrapper(CartPole-v1)"] if key != "env_id" else []))


@pytest.mark.parametrize("env", ["CartPole-v1", 64, gym.spaces.Discrete(2)])
def test_ding_env_wrapper_refuses_an_env_that_is_no_gym_env_when_built(env):
    with pytest.raises(TypeError) as raised:
        DingEnvWrapper(env)
    assert_clear(raised.value, "DingEnvWrapper env: expected a Gymnasium (or gym) env", type(env).__name__)
    if isinstance(env, str):  # the env id in the env's place: the message says where an id goes
        assert "cfg=dict(env_id='CartPole-v1')" in str(raised.value)


def test_ding_env_wrapper_seed_api_takes_only_a_boolean():
    with pytest.raises(ConfigError) as raised:
        DingEnvWrapper(cfg={"env_id": "CartPole-v1"}, seed_api="no")
    assert_clear(raised.value, "seed_api", "'no'")


def not_an_env():
    return None


def gymnasium_env():
    return gym.make("CartPole-v1")


def unknown_id():
    return DingEnvWrapper(cfg={"env_id": "NoSuchEnv-v0"})


@pytest.mark.parametrize("manager_type", MANAGERS)
@pytest.mark.parametrize(
    ("env_fn", "needle"),
    [
        (not_an_env, "env_fn returned NoneType"),
        (gymnasium_env, "wrap it, e.g. lambda: DingEnvWrapper"),
        (unknown_id, "env_id 'NoSuchEnv-v0' is not available in Gymnasium"),
    ],
)
def test_envs_that_cannot_be_built_are_named_at_launch(manager_type, env_fn, needle):
    manager = create_env_manager(manager_cfg(manager_type), [CountingEnv, env_fn])
    with pytest.raises(EnvError) as raised:
        manager.launch()
    manager.close()
    assert_clear(raised.value, needle)
    assert raised.value.env_id in (0, 1)


@pytest.mark.parametrize("manager_type", ["subprocess", "async_subprocess"])  # the base manager pickles nothing
def test_an_env_fn_that_cannot_be_pickled_for_a_worker_is_named_with_the_fix(manager_type):
    import threading

    lock = threading.Lock()

    def make_env():
        assert lock is not None  # holds the lock: cannot be sent to a worker process
        return CountingEnv()

    manager = create_env_manager(manager_cfg(manager_type), [CountingEnv, make_env])
    with pytest.raises(EnvError) as raised:
        manager.launch()
    manager.close()
    assert raised.value.env_id == 1
    assert_clear(
        raised.value, "cannot be sent to a worker process", "cannot pickle '_thread.lock'", "inside the function"
    )


class DictRewardEnv(CountingEnv):
    """Declares a Dict reward space, which the managers' one reward array per env cannot hold."""

    @property
    def reward_space(self) -> gym.spaces.Space:
        return gym.spaces.Dict({"goal": gym.spaces.Box(-1.0, 1.0, (1,), np.float32)})

    def __repr__(self) -> str:
        return "DictRewardEnv()"


@pytest.mark.parametrize("manager_type", MANAGERS)
def test_a_reward_space_the_managers_cannot_hold_is_refused_at_launch_naming_the_env(manager_type):
    manager = create_env_manager(manager_cfg(manager_type), [DictRewardEnv] * 2)
    with pytest.raises((EnvDataError, EnvError)) as raised:  # an EnvError from the env's process
        manager.launch()
    manager.close()
    assert_clear(raised.value, "DictRewardEnv()", "reward_space is Dict('goal': Box(", "declare a Box")


class IntRewardEnv(CountingEnv):
    """Declares whole-number rewards (int64) and returns ``cfg.reward``."""

    def step(self, action):
        return super().step(action)._replace(reward=np.array([self._cfg.get("reward", 1.0)]))

    @property
    def reward_space(self) -> gym.spaces.Space:
        return gym.spaces.Box(-10, 10, (1,), np.int64)

    def __repr__(self) -> str:
        return "IntRewardEnv()"


@pytest.mark.parametrize("manager_type", MANAGERS)
def test_a_reward_its_integer_reward_space_cannot_hold_is_an_error_not_a_silent_cast(manager_type):
    fns = [partial(IntRewardEnv, {"reward": 2.0}), partial(IntRewardEnv, {"reward": 0.7})]
    with create_env_manager(manager_cfg(manager_type), fns) as manager:
        manager.seed(0)
        manager.launch()
        with pytest.raises(EnvError) as raised:
            manager.step({0: 0, 1: 0})
    assert raised.value.env_id == 1
    assert_clear(raised.value, "reward array([0.7], dtype=float64", "does not fit the reward space's dtype int64")


@pytest.mark.parametrize("manager_type", MANAGERS)
def test_spaces_still_none_after_reset_are_refused_at_launch_naming_the_env_and_the_fix(manager_type):
    from tests.checker import broken_envs

    manager = create_env_manager(manager_cfg(manager_type), [broken_envs.SpacelessEnv] * 2)
    with pytest.raises((EnvDataError, EnvError)) as raised:
        manager.launch()
    manager.close()
    assert_clear(raised.value, "observation_space, action_space, reward_space still None after reset()", "declare each")


# Plain envs only: a batch env's step returns the BatchStep its base class builds, never a plain tuple or a list info.
BAD_STEP_OUTPUTS = {
    "PlainTupleStepEnv": ("PlainTupleStepEnv.step() returned a tuple of 4 items, not a BaseEnvTimestep", "transition("),
    "ListInfoEnv": ("ListInfoEnv.step() returned a list as info, expected a dict", "[('moves', 1)]"),
    "PerPlayerInfoEnv": (
        "PerPlayerInfoEnv.step() returned a tuple as info, expected a dict",
        "one dict per player goes in one dict: {'player_0': ..., 'player_1': ...}",
    ),
}


@pytest.mark.parametrize("manager_type", MANAGERS)
@pytest.mark.parametrize("broken", sorted(BAD_STEP_OUTPUTS))
def test_a_step_output_of_the_wrong_kind_is_named_at_the_first_step_with_the_fix(manager_type, broken):
    from tests.checker import broken_envs

    with create_env_manager(manager_cfg(manager_type), [broken_envs.GoodEnv, getattr(broken_envs, broken)]) as manager:
        manager.seed(0)
        manager.launch()
        with pytest.raises(EnvError) as raised:
            manager.step({0: 0, 1: 0})
    assert raised.value.env_id == 1
    assert_clear(raised.value, *BAD_STEP_OUTPUTS[broken])


def narrow_pendulum() -> DingEnvWrapper:
    """Pendulum-v1 with actions in [-0.5, 0.5] (Pendulum's own are in [-2, 2])."""
    return DingEnvWrapper(gym.wrappers.RescaleAction(gym.make("Pendulum-v1"), -0.5, 0.5))


@pytest.mark.parametrize("odd_env", [2, 3])  # the first env of another worker or share, or one beside env 2
def test_envs_whose_spaces_differ_are_refused_at_launch_naming_the_env(make_manager, odd_env):
    # Every env was held to env 0's spaces: actions in [-2, 2] reached an env whose own space is [-0.5, 0.5],
    # and an env with another observation shape failed its first reset with no word of the spaces.
    fns = [partial(DingEnvWrapper, cfg={"env_id": "Pendulum-v1"})] * 4
    fns[odd_env] = narrow_pendulum
    manager = make_manager(fns)
    with pytest.raises(EnvError) as raised:
        manager.launch()
    assert raised.value.env_id == odd_env
    assert_clear(raised.value, "action_space Box(-0.5, 0.5, (1,), float32) is not env", "share their spaces")


class BoundsEnv(CountingEnv):
    """A CountingEnv whose observation bounds are ``cfg.high`` (its own, as per-env normalisation gives them)."""

    config: ClassVar[dict] = dict(CountingEnv.config, high=1.0)

    @property
    def observation_space(self) -> gym.spaces.Space:
        return gym.spaces.Box(-self._cfg.high, self._cfg.high, (2,), np.float32)


class LazySpacesEnv(DIEngineStyleEnv):
    """Knows its spaces after its first reset only; counts its resets."""

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg)
        self.resets = 0

    def reset(self) -> np.ndarray:
        self.resets += 1
        return super().reset()


def test_envs_whose_observation_bounds_differ_share_a_manager_and_spaces_known_later_cost_no_extra_reset(
    make_manager,
):
    # Observation bounds do not change the arrays the results are held in (SyncVectorEnv's "different" mode
    # takes them too); reading every env's spaces reset each env that knows them only after a reset once more.
    with make_manager([partial(BoundsEnv, {"high": 1.0}), partial(BoundsEnv, {"high": 2.0})]) as manager:
        manager.launch()
        assert sorted(manager.step({0: 0, 1: 0})) == [0, 1]
    lazy = make_manager([LazySpacesEnv] * 4)
    lazy.launch()
    assert lazy.resets.count(1) >= 2  # the first env of each process is reset once more, to read the spaces


class RewardEnv(CountingEnv):
    """Returns ``cfg.reward`` as its reward; declares a reward space of shape ``cfg.reward_shape``."""

    config: ClassVar[dict] = dict(CountingEnv.config, reward=None, reward_shape=(1,))

    def step(self, action):
        return super().step(action)._replace(reward=self._cfg.reward)

    @property
    def reward_space(self) -> gym.spaces.Space:
        return gym.spaces.Box(-np.inf, np.inf, tuple(self._cfg.reward_shape), np.float32)


ACCEPTED_REWARDS = [1.5, 2, True, np.float32(1.5), np.float64(-2.25), np.array([3.5]), [4.5], np.array([[5.5]])]


def test_every_reward_of_one_value_a_one_value_reward_space_takes_is_still_taken(make_manager):
    # The rewards the checked writing must not refuse: Python and numpy scalars, (1,) arrays of any float dtype,
    # a list, and one value in a (1, 1) array, each as the float32 row it was before.
    fns = [partial(RewardEnv, {"reward": reward}) for reward in ACCEPTED_REWARDS]
    manager = make_manager(fns)
    manager.seed(0)
    manager.launch()
    batch = manager.step_batch(np.arange(len(fns)), np.zeros(len(fns), np.int64))
    expected = np.array([[float(np.ravel(reward)[0])] for reward in ACCEPTED_REWARDS], np.float32)
    np.testing.assert_array_equal(batch.reward, expected)


@pytest.mark.parametrize(
    ("reward", "reward_shape", "needle"),
    [
        (1e40, (1,), "reward 1e+40 is beyond the reward space's dtype float32 (it would become array([inf]"),
        (np.array([1e40]), (1,), "is beyond the reward space's dtype float32"),
        (np.array([2**40 + 1]), (1,), "is not exact in the reward space's dtype float32"),
        (
            np.array([1.0], np.float32),
            (3,),
            "has shape (1,), where the reward space holds (3,) (it would be broadcast)",
        ),
        (np.ones(3, np.float32), (1,), "has shape (3,), where the reward space holds (1,)"),
        # A NaN beside the overflow hid it: the check asked for every given reward to be finite.
        (np.array([1e40, np.nan]), (2,), "reward array([1.e+40 nan], dtype=float64, shape=(2,)) is beyond the reward"),
    ],
    ids=["float overflow", "float64 overflow", "int rounded", "broadcast", "too many", "overflow beside nan"],
)
def test_a_reward_the_reward_rows_would_change_is_an_error_naming_the_env(make_manager, reward, reward_shape, needle):
    # Each was written as it came out of the cast: inf, a rounded int, one team reward copied to every agent, or
    # numpy's bare "could not broadcast" naming neither the reward nor the fix.
    fns = [partial(CountingEnv, {}), partial(RewardEnv, {"reward": reward, "reward_shape": reward_shape})]
    if reward_shape != (1,):
        fns[0] = partial(RewardEnv, {"reward": np.zeros(reward_shape, np.float32), "reward_shape": reward_shape})
    manager = make_manager(fns)
    manager.seed(0)
    manager.launch()
    with pytest.raises(EnvError) as raised:
        manager.step({0: 0, 1: 0})
    assert raised.value.env_id == 1
    assert_clear(raised.value, needle)

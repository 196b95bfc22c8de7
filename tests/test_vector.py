"""ManagerVectorEnv: Gymnasium's vector API over every manager, step for step as SyncVectorEnv in both modes."""

from __future__ import annotations

from functools import partial

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import HumanRendering, RecordEpisodeStatistics

from ding_env import DingEnvWrapper, create_env_manager
from ding_env.errors import ClosedEnvError, EnvError, EnvNotReadyError, EnvStateError
from ding_env.vector import ManagerVectorEnv
from tests.conftest import ALL_MANAGER_TYPES, manager_cfg
from tests.envs import (
    BaseEnvAsGymnasiumEnv,
    CloseTracker,
    CountingEnv,
    DictActionEnv,
    PricedItemsEnv,
    TupleActionRecorder,
    cartpole_fn,
)

SameStepVectorEnv = partial(ManagerVectorEnv, autoreset_mode=AutoresetMode.SAME_STEP)
ENV_FNS = [
    partial(CountingEnv, {"limit": 5}),  # episodes of 3..7 steps cut at 5: terminations and truncations
    partial(CountingEnv, {"limit": 4, "nested": True}),  # Dict observation with a Tuple inside
    partial(DictActionEnv, {"limit": 5}),
    cartpole_fn,
]
ENV_IDS = ["counting", "nested_obs", "dict_action", "cartpole"]
# Episodes cut at 2 steps: every env ends in the same step, and the next step steps none of them.
ALL_END_TOGETHER = partial(CountingEnv, {"limit": 2})


@pytest.mark.parametrize("env_fn", ENV_FNS, ids=ENV_IDS)
def test_same_trajectory_as_sync_vector_env_in_same_step_mode(make_adapted, env_fn):
    env_fns = [env_fn] * 3
    ours = make_adapted(SameStepVectorEnv, env_fns)
    reference = SyncVectorEnv([partial(BaseEnvAsGymnasiumEnv, fn) for fn in env_fns], autoreset_mode="SameStep")
    assert ours.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert ours.single_observation_space == reference.single_observation_space
    assert ours.single_action_space == reference.single_action_space
    assert ours.observation_space == reference.observation_space
    assert ours.action_space == reference.action_space
    ours.action_space.seed(1)
    try:
        assert data_equivalence(ours.reset(seed=7), reference.reset(seed=7))
        episode_ends = 0
        for _ in range(40):
            actions = ours.action_space.sample()
            step, expected = ours.step(actions), reference.step(actions)
            assert data_equivalence(step, expected, exact=True), (step, expected)
            assert ours.observation_space.contains(step[0])
            for row in np.flatnonzero(step[2] | step[3]):  # as Gymnasium's own SAME_STEP tests check
                assert ours.single_observation_space.contains(step[4]["final_obs"][row])
            episode_ends += int(np.sum(step[2] | step[3]))
        assert episode_ends > 0
        # a reseeded reset replays the start
        assert data_equivalence(ours.reset(seed=7), reference.reset(seed=7))
    finally:
        reference.close()


@pytest.mark.parametrize("env_fn", [*ENV_FNS, ALL_END_TOGETHER], ids=[*ENV_IDS, "all_end_together"])
def test_same_trajectory_as_sync_vector_env_in_next_step_mode(make_adapted, env_fn):
    env_fns = [env_fn] * 3
    ours = make_adapted(ManagerVectorEnv, env_fns)
    reference = SyncVectorEnv([partial(BaseEnvAsGymnasiumEnv, fn) for fn in env_fns])  # NEXT_STEP, its default
    assert ours.metadata["autoreset_mode"] == reference.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    ours.action_space.seed(1)
    try:
        assert data_equivalence(ours.reset(seed=7), reference.reset(seed=7))
        episode_ends = 0
        for _ in range(40):
            actions = ours.action_space.sample()  # ignored for an env whose episode ended in the last step
            step, expected = ours.step(actions), reference.step(actions)
            assert data_equivalence(step, expected, exact=True), (step, expected)
            assert "final_obs" not in step[4] and ours.observation_space.contains(step[0])
            episode_ends += int(np.sum(step[2] | step[3]))
        assert episode_ends > 0
        assert data_equivalence(ours.reset(seed=7), reference.reset(seed=7))  # and the autoreset marks are cleared
        assert data_equivalence(ours.step(actions), reference.step(actions), exact=True)
    finally:
        reference.close()


def short_cartpole():
    # A Gymnasium factory as CleanRL's make_env returns them: episodes cut at 30 steps give truncations too.
    return gym.wrappers.RecordEpisodeStatistics(gym.make("CartPole-v1", max_episode_steps=30))


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess"])
def test_gymnasium_env_factories_swap_in_for_sync_vector_env(manager_type):
    """The factories SyncVectorEnv takes, the same seeds: the same observations, rewards, ends and episode stats."""
    env_fns = [short_cartpole] * 3
    if manager_type == "base":
        ours = ManagerVectorEnv(env_fns)  # the one-line swap: its default manager runs the envs in this process
    else:
        ours = ManagerVectorEnv(env_fns, manager_cfg=manager_cfg(manager_type))
    reference = SyncVectorEnv(env_fns)
    assert ours.single_observation_space == reference.single_observation_space
    assert ours.single_action_space == reference.single_action_space
    ours.action_space.seed(3)
    try:
        obs, _ = ours.reset(seed=11)
        np.testing.assert_array_equal(obs, reference.reset(seed=11)[0])
        ends = {"terminated": 0, "truncated": 0}
        for _ in range(120):
            actions = ours.action_space.sample()
            obs, rewards, terminations, truncations, infos = ours.step(actions)
            expected = reference.step(actions)
            for got, want in zip((obs, rewards, terminations), expected[:3], strict=True):
                np.testing.assert_array_equal(got, want)
            # A terminal state at the time limit is a termination only (SyncVectorEnv raises both flags).
            np.testing.assert_array_equal(truncations, expected[3] & ~expected[2])
            assert "final_info" not in infos
            if "episode" in infos:  # CleanRL's loop reads the episode statistics so
                np.testing.assert_array_equal(infos["_episode"], expected[4]["_episode"])
                np.testing.assert_array_equal(infos["episode"]["r"], expected[4]["episode"]["r"])
            ends["terminated"] += int(terminations.sum())
            ends["truncated"] += int(truncations.sum())
        assert ends["terminated"] > 0 and ends["truncated"] > 0
    finally:
        ours.close()
        reference.close()


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess"])
def test_attributes_of_gymnasium_envs_are_read_and_set_where_sync_vector_env_does(manager_type):
    env_fns = [lambda: gym.make("CartPole-v1")] * 2
    ours = ManagerVectorEnv(env_fns, manager_cfg=manager_cfg(manager_type))
    reference = SyncVectorEnv(env_fns)
    try:
        for envs in (ours, reference):
            envs.reset(seed=5)
        assert [spec.id for spec in ours.get_attr("spec")] == ["CartPole-v1"] * 2
        for name in ("render_mode", "gravity", "length"):  # the last two are the unwrapped env's
            assert ours.get_attr(name) == reference.get_attr(name)
        assert ours.call("get_wrapper_attr", "masspole") == reference.call("get_wrapper_attr", "masspole")
        for envs in (ours, reference):
            envs.set_attr("gravity", [100.0, 9.8])  # the physics changes, in env 0 only
        assert ours.get_attr("gravity") == (100.0, 9.8)
        for _ in range(6):
            obs, *_ = ours.step(np.zeros(2, np.int64))
            np.testing.assert_array_equal(obs, reference.step(np.zeros(2, np.int64))[0])
        with pytest.raises(AttributeError, match="no_such_thing"):
            ours.get_attr("no_such_thing")
        with pytest.raises(ValueError, match=r"set_env_attr\('gravity'\) got 3 values for 2 envs"):
            ours.set_attr("gravity", [1.0, 2.0, 3.0])
    finally:
        ours.close()
        reference.close()


def test_final_obs_and_info_where_gymnasium_puts_them(make_adapted):
    envs = make_adapted(SameStepVectorEnv, [partial(CountingEnv, {"limit": 4})] * 2)
    envs.reset(seed=0)
    obs = None
    for _ in range(8):
        previous = obs
        obs, _, terminations, truncations, infos = envs.step(np.zeros(2, np.int64))
        done = terminations | truncations
        if done.any():
            break
    assert done.any()
    np.testing.assert_array_equal(infos["_final_obs"], done)
    np.testing.assert_array_equal(infos["_final_info"], done)
    for row in np.flatnonzero(done):
        final = infos["final_obs"][row]
        # The final obs continues the episode (step counter one past the previous obs); the reset obs restarts it.
        assert final[0] == (previous[row][0] + 1 if previous is not None else 1)
        assert obs[row][0] == 0
        assert infos["final_info"]["truncated"][row] == bool(truncations[row])
        assert "eval_episode_return" in infos["final_info"]


def test_gymnasium_vector_wrappers_count_episodes(make_adapted):
    envs = RecordEpisodeStatistics(make_adapted(ManagerVectorEnv, [partial(CountingEnv, {"limit": 100})] * 2))
    envs.reset(seed=3)
    lengths = []
    for _ in range(20):
        *_, infos = envs.step(np.ones(2, np.int64))
        if "episode" in infos:
            lengths += infos["episode"]["l"][infos["_episode"]].tolist()
    # CountingEnv episodes last 3..7 steps; RecordEpisodeStatistics reads SAME_STEP from the metadata.
    assert lengths and all(3 <= length <= 7 for length in lengths)


def test_call_and_get_attr_read_every_env(make_adapted):
    envs = make_adapted(ManagerVectorEnv, [partial(CountingEnv, {"limit": 100})] * 3)
    envs.reset(seed=0)
    envs.step(np.zeros(3, np.int64))
    assert envs.call("current_step") == (1, 1, 1)
    lengths = envs.get_attr("episode_length")
    assert len(lengths) == 3 and all(3 <= length <= 7 for length in lengths)
    with pytest.raises(AttributeError, match="'seed' is an attribute of"):
        envs.call("seed", 3)
    with pytest.raises(AttributeError, match="no_such_thing"):
        envs.get_attr("no_such_thing")
    envs.set_attr("marker", [1, 2, 3])  # one value per env, as Gymnasium's vector envs take them
    assert envs.get_attr("marker") == (1, 2, 3)
    envs.set_attr("marker", "all")
    assert envs.get_attr("marker") == ("all", "all", "all")


def test_reset_mask_resets_only_those_envs(make_adapted):
    envs = make_adapted(ManagerVectorEnv, [partial(CountingEnv, {"limit": 100})] * 2)
    envs.reset(seed=0)
    envs.step(np.zeros(2, np.int64))
    obs, _ = envs.reset(options={"reset_mask": np.array([True, False])})
    assert obs[0][0] == 0 and obs[1][0] == 1
    with pytest.raises(ValueError, match=r"reset_mask'\] must be a bool array of shape \(2,\)"):
        envs.reset(options={"reset_mask": np.array([1, 0])})


def test_a_numpy_int_seed_with_a_reset_mask_seeds_as_an_int_does_and_a_str_seed_is_refused():
    env_fns = [partial(gym.make, "CartPole-v1")] * 2
    mask = {"reset_mask": np.array([True, False])}
    ours, reference = ManagerVectorEnv(env_fns), SyncVectorEnv(env_fns)
    try:
        ours.reset(seed=0), reference.reset(seed=0)
        np.testing.assert_array_equal(
            ours.reset(seed=np.int64(7), options=mask)[0], reference.reset(seed=7, options=mask)[0]
        )
        with pytest.raises(
            TypeError, match=r"reset\(seed=...\): expected None, an int or one int \(or None\) per env, got 'ab'"
        ):
            ours.reset(seed="ab")
    finally:
        ours.close()
        reference.close()


def test_close_closes_the_manager(make_adapted):
    envs = make_adapted(ManagerVectorEnv, [partial(CountingEnv, {})] * 2)
    envs.reset(seed=0)
    envs.close()
    assert envs.manager.closed
    with pytest.raises(ClosedEnvError):
        envs.step(np.zeros(2, np.int64))


def test_async_manager_returning_early_still_steps_every_env():
    # wait_num=1 with a zero wait: the async manager returns the first env to finish; the adapter collects the rest.
    cfg = {"type": "async_subprocess", "wait_num": 1, "step_wait_timeout": 0.0, "num_workers": 3}
    env_fns = [partial(CountingEnv, {"limit": 5, "step_sleep": 0.002 * k}) for k in range(3)]
    envs = SameStepVectorEnv(create_env_manager(cfg, env_fns))
    reference = SyncVectorEnv([partial(BaseEnvAsGymnasiumEnv, fn) for fn in env_fns], autoreset_mode="SameStep")
    try:
        assert data_equivalence(envs.reset(seed=1), reference.reset(seed=1))
        for step in range(12):
            actions = np.full(3, step % 3, np.int64)
            assert data_equivalence(envs.step(actions), reference.step(actions), exact=True)
    finally:
        envs.close()
        reference.close()


@pytest.mark.parametrize("autoreset_mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("copy_on_get", [True, False])
def test_returned_arrays_never_change_under_their_holder(make_adapted, copy_on_get, autoreset_mode):
    vector_env = partial(ManagerVectorEnv, autoreset_mode=autoreset_mode)
    envs = make_adapted(vector_env, [partial(CountingEnv, {"limit": 4})] * 2, copy_on_get=copy_on_get)
    obs, _ = envs.reset(seed=0)
    held = [(obs, obs.copy())]
    for _ in range(8):  # through episode ends, where the reset observations are read back
        obs, rewards, terminations, truncations, infos = envs.step(np.zeros(2, np.int64))
        held.append((obs, obs.copy()))
        held += [(final, final.copy()) for final in infos.get("final_obs", []) if final is not None]
    for array, copy in held:
        np.testing.assert_array_equal(array, copy)


def test_unsupported_arguments_are_named():
    env_fns = [partial(CountingEnv, {})] * 2
    with pytest.raises(ValueError, match=r"autoreset_mode: expected one of \['NextStep', 'SameStep'\], got 'Disabled'"):
        ManagerVectorEnv(env_fns, autoreset_mode="Disabled")
    with create_env_manager({}, env_fns) as manager, pytest.raises(ValueError, match="manager_cfg configures"):
        ManagerVectorEnv(manager, manager_cfg={"type": "subprocess"})
    with pytest.raises(
        TypeError, match=r"got one factory, .*: give one per env, e.g. ManagerVectorEnv\(\[make_env\] \* 4"
    ):
        ManagerVectorEnv(lambda: gym.make("CartPole-v1"))


@pytest.mark.parametrize("manager_type", ALL_MANAGER_TYPES)
def test_reset_options_reach_gymnasium_envs_as_in_sync_vector_env(manager_type):
    env_fns = [partial(gym.make, "CartPole-v1")] * 2
    ours = ManagerVectorEnv(env_fns, manager_cfg=manager_cfg(manager_type))
    reference = SyncVectorEnv(env_fns)
    options = {"low": -0.001, "high": 0.001}  # CartPole's reset options: a narrower start
    try:
        obs, _ = ours.reset(seed=4, options=options)
        np.testing.assert_array_equal(obs, reference.reset(seed=4, options=options)[0])
        assert np.abs(obs).max() <= 0.001
        for cleared in ({}, None):  # the next reset's options are its own: CartPole's default start again
            obs, _ = ours.reset(seed=4, options=cleared)
            np.testing.assert_array_equal(obs, reference.reset(seed=4, options=cleared)[0])
            assert np.abs(obs).max() > 0.001
    finally:
        ours.close()
        reference.close()


def test_the_step_after_an_episode_end_checks_every_action_as_the_others_do(make_adapted):
    envs = make_adapted(ManagerVectorEnv, [partial(CountingEnv, {"limit": 2})] * 3)
    envs.reset(seed=0)
    for _ in range(2):  # episodes cut at 2 steps: at the next step the envs are reset, not stepped
        *_, terminations, truncations, _ = envs.step(np.zeros(3, np.int64))
    assert truncations.all()
    for bad in (np.zeros(5, np.int64), np.zeros(2, np.int64), np.zeros((1, 3), np.int64)):
        with pytest.raises(ValueError, match=r"must have shape \(3,\)"):
            envs.step(bad)
    obs, *_ = envs.step(np.zeros(3, np.int64))  # the envs step on once given good actions
    assert obs.shape[0] == 3


# CartPole drawing its frames (rgb_array), in a DingEnvWrapper as a manager hosts it.
RENDERING_CARTPOLE = partial(DingEnvWrapper, cfg={"env_id": "CartPole-v1", "make_kwargs": {"render_mode": "rgb_array"}})


def test_render_mode_metadata_and_frames_are_the_envs_as_in_sync_vector_env(make_adapted):
    envs = make_adapted(ManagerVectorEnv, [RENDERING_CARTPOLE] * 2)
    reference = SyncVectorEnv([partial(gym.make, "CartPole-v1", render_mode="rgb_array")] * 2)
    try:
        assert envs.render_mode == reference.render_mode == "rgb_array"
        assert envs.metadata["render_fps"] == reference.metadata["render_fps"] == 50
        assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
        # Fixed seeds 3 + i (not the managers' dynamic ones): the envs start where SyncVectorEnv's do.
        envs.manager.seed(3, dynamic_seed=False)
        envs.reset()
        reference.reset(seed=3)
        for _ in range(3):  # the same states: the same pictures
            envs.step(np.array([0, 1]))
            reference.step(np.array([0, 1]))
        frames, expected = envs.render(), reference.render()
        assert isinstance(frames, tuple) and len(frames) == 2
        for frame, want in zip(frames, expected, strict=True):
            assert frame.dtype == np.uint8 and frame.shape == (400, 600, 3)
            np.testing.assert_array_equal(frame, want)
        assert not np.array_equal(frames[0], frames[1])  # each env's own picture
    finally:
        reference.close()


def test_render_needs_one_render_mode_in_every_env(make_adapted):
    envs = make_adapted(ManagerVectorEnv, [partial(CountingEnv, {})] * 2)  # envs of our own, without a render mode
    assert envs.render_mode is None
    with pytest.raises(EnvStateError, match=r"render modes are \[None, None\].*render_mode='rgb_array'"):
        envs.render()
    mixed = ManagerVectorEnv(
        [partial(gym.make, "CartPole-v1", render_mode="rgb_array"), partial(gym.make, "CartPole-v1")]
    )
    try:
        assert mixed.render_mode is None
        with pytest.raises(EnvStateError, match=r"render modes are \['rgb_array', None\]"):
            mixed.render()
    finally:
        mixed.close()


def test_gymnasium_rendering_wrappers_run_over_it(monkeypatch):
    pytest.importorskip("pygame", reason="HumanRendering draws with pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")  # no display here: pygame draws off-screen
    # HumanRendering reads render_mode and metadata["render_fps"] as it is built, before any reset.
    envs = HumanRendering(ManagerVectorEnv([partial(gym.make, "CartPole-v1", render_mode="rgb_array")] * 2))
    try:
        envs.reset(seed=0)
        envs.step(np.zeros(2, np.int64))
        assert envs.window is not None and envs.screen_size == (600, 400)  # both envs' frames were drawn
    finally:
        envs.close()


def test_a_manager_of_gymnasium_envs_not_wrapped_is_refused_with_the_reason(make_adapted):
    # The launch, at construction, names the env and how to wrap it (reading a space first gave an AttributeError).
    with pytest.raises(EnvError, match=r"env_fn returned a gymnasium env \(TimeLimit\).*DingEnvWrapper"):
        make_adapted(ManagerVectorEnv, [partial(gym.make, "CartPole-v1")] * 2)


@pytest.mark.parametrize(
    ("cfg", "setting"), [({"auto_reset": False}, "auto_reset=False"), ({"episode_num": 2}, "episode_num=2")]
)
def test_a_manager_whose_envs_do_not_auto_reset_is_refused_naming_the_setting(make_adapted, cfg, setting):
    with pytest.raises(ValueError, match=rf"ManagerVectorEnv steps every env .* has {setting}; create it with"):
        make_adapted(ManagerVectorEnv, [partial(CountingEnv, {"limit": 3})] * 2, **cfg)


def test_the_env_pool_type_is_refused_saying_what_it_lacks_and_what_to_use():
    pool = create_env_manager(dict(type="env_pool", env_id="CartPole-v1", env_num=2, batch_size=2))
    with pool, pytest.raises(TypeError, match=r"ManagerVectorEnv takes .*got PoolEnvManager.*dict interface only"):
        ManagerVectorEnv(pool)


@pytest.mark.parametrize("manager_type", ["remote", "async_remote"])
def test_env_factories_for_a_remote_manager_are_refused_saying_to_give_the_manager(manager_type):
    # The servers' envs ran while the factories' spaces were reported: (4, 4) CartPole observations from a vector
    # env whose single_observation_space was the factories' Pendulum Box((3,)).
    cfg = {"type": manager_type, "servers": ["tcp://127.0.0.1:5555"]}
    with pytest.raises(ValueError, match=r"runs its servers' envs, not the factories given.*give the remote manager"):
        ManagerVectorEnv([lambda: gym.make("Pendulum-v1")] * 2, manager_cfg=cfg)


def test_envs_whose_spaces_differ_are_refused_as_sync_vector_env_refuses_them():
    def narrow():
        return gym.wrappers.RescaleAction(gym.make("Pendulum-v1"), -0.5, 0.5)

    envs = ManagerVectorEnv([lambda: gym.make("Pendulum-v1"), narrow])
    with pytest.raises(EnvError, match=r"env 1 failed in launch: its action_space Box\(-0.5, 0.5"):
        envs.reset(seed=0)  # the manager is launched at the first reset
    envs.close()


def test_a_step_after_an_env_failed_says_how_the_adapter_restarts_it():
    # The manager's words alone told the caller to reset({env_id: {}}), which ManagerVectorEnv.reset does not take.
    envs = ManagerVectorEnv([partial(CountingEnv, {"limit": 100}), partial(CountingEnv, {"fail_step_at": 1})])
    envs.reset(seed=0)
    envs.step(np.zeros(2, np.int64))
    with pytest.raises(EnvError, match="env 1 failed in step"):
        envs.step(np.zeros(2, np.int64))
    with pytest.raises(EnvNotReadyError, match="env 1 is not ready") as raised:
        envs.step(np.zeros(2, np.int64))
    assert raised.value.env_id == 1
    assert "ManagerVectorEnv: reset(options={'reset_mask': mask}) restarts" in raised.value.__notes__[0]
    envs.reset(options={"reset_mask": np.array([False, True])})  # what the note says
    assert envs.step(np.zeros(2, np.int64))[0].shape == (2, 2)
    envs.close()


def test_env_factories_may_come_as_any_iterable_as_sync_vector_env_takes_them():
    envs = ManagerVectorEnv(lambda: gym.make("CartPole-v1") for _ in range(2))
    try:
        assert envs.reset(seed=0)[0].shape == (2, 4)
    finally:
        envs.close()


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess"])
def test_tuple_actions_reach_each_env_after_an_episode_end_as_in_sync_vector_env(manager_type):
    env_fns = [partial(TupleActionRecorder, 2), partial(TupleActionRecorder, 100)]  # env 0 ends every 2 steps
    actions = (np.array([0, 1]), np.array([2, 0]))  # env 0 gets (0, 2), env 1 (1, 0)
    received = {}
    for name, vector in (
        ("sync", SyncVectorEnv(env_fns)),
        ("ours", ManagerVectorEnv(env_fns, manager_cfg=manager_cfg(manager_type))),
    ):
        vector.reset(seed=0)
        received[name] = [vector.step(actions)[4]["got"].tolist() for _ in range(5)]
        vector.close()
    assert received["ours"] == received["sync"]
    assert received["ours"][3][1] == (1, 0)  # env 1, in the step after env 0's episode ended


@pytest.mark.parametrize("manager_type", ["base", "subprocess"])
def test_next_step_autoreset_over_a_lockstep_batch_env_is_refused_naming_same_step(manager_type):
    def batch_env():
        return DingEnvWrapper.batch_env({"env_id": "CartPole-v1", "batch": 2})  # a Gymnasium vector env

    with pytest.raises(ValueError, match="lockstep batch env .* give autoreset_mode='SameStep'"):
        ManagerVectorEnv([batch_env], manager_cfg=manager_cfg(manager_type))
    vector = ManagerVectorEnv(
        [batch_env], autoreset_mode=AutoresetMode.SAME_STEP, manager_cfg=manager_cfg(manager_type)
    )
    vector.reset(seed=0)
    assert vector.step(np.ones(2, np.int64))[0].shape == (2, 4)
    vector.close()


@pytest.mark.parametrize("manager_type", ["base", "subprocess"])
def test_discrete_parts_of_dict_and_tuple_actions_reach_the_env_as_scalars_as_in_sync_vector_env(manager_type):
    actions = {"item": np.array([0, 1]), "pair": (np.array([2, 1]), np.array([0, 2]))}
    rewards = {}
    ours = ManagerVectorEnv([PricedItemsEnv] * 2, manager_cfg=manager_cfg(manager_type))
    for name, vector in (("sync", SyncVectorEnv([PricedItemsEnv] * 2)), ("ours", ours)):
        vector.reset(seed=0)
        rewards[name] = vector.step(actions)[1].tolist()  # the env looks its parts up in dicts
        vector.close()
    # DingEnvWrapper's rewards are float32 (DI-engine's reward space), SyncVectorEnv's float64.
    np.testing.assert_allclose(rewards["ours"], rewards["sync"], rtol=1e-6)
    np.testing.assert_allclose(rewards["ours"], [1.2, 2.62], rtol=1e-6)


@pytest.mark.parametrize("manager_type", ["base", "subprocess"])
def test_np_random_seed_is_the_envs_as_in_sync_vector_env(manager_type):
    seeds = {}
    env_fns = [partial(gym.make, "CartPole-v1")] * 2
    ours = ManagerVectorEnv(env_fns, manager_cfg=manager_cfg(manager_type))
    for name, vector in (("sync", SyncVectorEnv(env_fns)), ("ours", ours)):
        vector.reset(seed=123)
        seeds[name] = vector.np_random_seed
        assert len(vector.np_random) == 2 and all(isinstance(rng, np.random.Generator) for rng in vector.np_random)
        vector.close()
    assert seeds["ours"] == seeds["sync"] == (123, 124)


def normalized_pendulum():
    # CleanRL's continuous-control factories: a wrapper keeping statistics of every observation it sees.
    return gym.wrappers.NormalizeObservation(gym.make("Pendulum-v1"))


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "async_subprocess"])
def test_the_envs_first_reset_is_the_seeded_one_as_in_sync_vector_env(manager_type):
    """No reset before reset(seed=...): a wrapper keeping statistics sees what it sees in SyncVectorEnv, every run."""
    env_fns = [normalized_pendulum] * 2
    runs = []
    for _ in range(2):
        ours = ManagerVectorEnv(env_fns, manager_cfg=manager_cfg(manager_type))
        reference = SyncVectorEnv(env_fns)
        try:
            observations = [ours.reset(seed=5)[0]]
            expected = [reference.reset(seed=5)[0]]
            for _ in range(20):
                actions = np.full((2, 1), 0.5, dtype=np.float32)
                observations.append(ours.step(actions)[0])
                expected.append(reference.step(actions)[0])
        finally:
            ours.close()
            reference.close()
        np.testing.assert_allclose(np.array(observations), np.array(expected), rtol=1e-6, atol=1e-6)
        runs.append(np.array(observations))
    np.testing.assert_array_equal(runs[0], runs[1])


@pytest.mark.parametrize("manager_type", ["base", "subprocess"])
def test_every_env_made_in_this_process_is_closed(manager_type):
    tracker = CloseTracker()
    ours = ManagerVectorEnv([lambda: tracker.make() for _ in range(3)], manager_cfg={"type": manager_type})
    ours.reset(seed=0)
    ours.step(np.zeros(3, dtype=np.int64))
    ours.close()
    assert tracker.every_made_env_closed()

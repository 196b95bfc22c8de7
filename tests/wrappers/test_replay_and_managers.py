"""Pong and HalfCheetah in the subprocess manager match in-process runs; replays are readable videos."""

import numpy as np
import pytest

pytest.importorskip("ale_py")
pytest.importorskip("mujoco")
imageio = pytest.importorskip("imageio")

from functools import partial  # noqa: E402

from ding_env import DingEnvWrapper, create_env_manager  # noqa: E402
from tests.support import assert_same  # noqa: E402


def trajectory(manager_type, env_fns, steps):
    with create_env_manager({"type": manager_type}, env_fns) as manager:
        manager.seed(7)
        manager.launch()
        space = manager.action_space
        space.seed(0)
        trace = []
        for _ in range(steps):
            ready = manager.ready_obs_batch
            batch = manager.step_batch(ready.env_id, np.stack([space.sample() for _ in ready.env_id]))
            trace.append((batch.env_id.copy(), batch.obs.copy(), batch.reward.copy(), batch.done.copy()))
        return trace


def pong():
    return DingEnvWrapper(cfg={"env_id": "ALE/Pong-v5"})


def cheetah():
    return DingEnvWrapper(cfg={"env_id": "HalfCheetah-v5", "act_scale": True})


@pytest.mark.parametrize("env_fn", [pong, cheetah], ids=["pong", "halfcheetah"])
def test_same_trajectories_in_process_and_in_workers(env_fn):
    reference = trajectory("base", [env_fn] * 2, steps=25)
    assert_same(reference, trajectory("subprocess", [env_fn] * 2, steps=25))


@pytest.mark.parametrize(
    "cfg",
    [
        {"env_id": "ALE/Pong-v5", "make_kwargs": {"max_episode_steps": 40}},
        {"env_id": "HalfCheetah-v5", "make_kwargs": {"max_episode_steps": 15}},
    ],
    ids=["pong", "halfcheetah"],
)
def test_replays_are_readable_videos_named_per_env_and_episode(cfg, tmp_path):
    envs = [DingEnvWrapper(cfg=cfg) for _ in range(2)]
    for env in envs:
        env.enable_save_replay(str(tmp_path))
        env.seed(0)
        for _ in range(2):
            env.reset()
            while not env.step(env.random_action()).done:
                pass
        env.close()
    videos = sorted(tmp_path.glob("*.mp4"))
    assert len(videos) == 4 and len({video.name for video in videos}) == 4
    assert all(cfg["env_id"].split("/")[-1].split("-")[0] in video.name for video in videos)
    frames = imageio.mimread(videos[0])
    assert len(frames) > 5 and np.asarray(frames[0]).ndim == 3


def test_replays_through_a_manager(tmp_path):
    from ding_env import SyncSubprocessEnvManager

    fn = partial(DingEnvWrapper, None, {"env_id": "HalfCheetah-v5", "make_kwargs": {"max_episode_steps": 10}})
    # 'spawn': this test process already holds an EGL context from the test above, and GL contexts do not survive fork.
    with SyncSubprocessEnvManager([fn] * 2, {"context": "spawn"}) as manager:
        manager.launch()
        manager.enable_save_replay(str(tmp_path))
        manager.reset()
        for _ in range(11):
            manager.step({env_id: np.zeros(6, np.float32) for env_id in manager.ready_obs})
    # one finished episode per env (plus the started second episode, written at close)
    assert len(list(tmp_path.glob("*-episode0000.mp4"))) == 2


def test_run_config_replay_path_records_the_evaluator_only(tmp_path, capsys):
    from ding_env.cli import main

    replays = tmp_path / "video"
    overrides = [
        f"env.replay_path={str(replays)!r}",
        "env.make_kwargs={'max_episode_steps': 15}",
        "env.collector_env_num=2",
        "env.evaluator_env_num=1",
    ]
    args = ["run", "configs/halfcheetah.py", "--steps", "60", "--eval-episodes", "1", "--manager", "base"]
    assert main(args + [arg for override in overrides for arg in ("--set", override)]) == 0
    # The one evaluator env's first episode; the two collector envs (4 episodes each) record nothing.
    assert len(list(replays.glob("*-episode0000.mp4"))) == 1
    assert "eval episodes        1" in capsys.readouterr().out


def test_replays_asked_for_before_launch_start_with_the_first_episode(tmp_path):
    from ding_env import BaseEnvManager

    fn = partial(DingEnvWrapper, None, {"env_id": "HalfCheetah-v5", "make_kwargs": {"max_episode_steps": 10}})
    folders = [tmp_path / "env0", tmp_path / "env1"]
    with BaseEnvManager([fn] * 2, {}) as manager:
        manager.enable_save_replay([str(folder) for folder in folders])  # as DI-engine's evaluators do
        manager.launch()
        for _ in range(10):
            manager.step({env_id: np.zeros(6, np.float32) for env_id in manager.ready_obs})
    for folder in folders:
        assert [video.name.split("-")[-1] for video in folder.glob("*.mp4")] == ["episode0000.mp4"]

"""Box2D (LunarLander, BipedalWalker) and MiniGrid through DingEnvWrapper and their dizoo env types."""

from functools import partial

import numpy as np
import pytest

pytest.importorskip("Box2D", reason="the box2d extra (make test installs it)")
pytest.importorskip("minigrid", reason="the minigrid extra (make test installs it)")

from ding_env import DingEnvWrapper, create_env_manager  # noqa: E402
from ding_env.env_wrappers.family import BOX2D, MINIGRID, family_of_env_id  # noqa: E402
from ding_env.errors import ConfigError  # noqa: E402
from ding_env.run_config import load_run_config  # noqa: E402
from dizoo.box2d.bipedalwalker.envs import BipedalWalkerEnv  # noqa: E402
from dizoo.box2d.lunarlander.envs import LunarLanderEnv  # noqa: E402
from dizoo.minigrid.envs import MiniGridEnv  # noqa: E402
from tests.conftest import manager_cfg  # noqa: E402
from tests.envs import episode_observations  # noqa: E402
from tests.support import run_without_modules  # noqa: E402

MANAGER_TYPES = ["base", "subprocess", "async_subprocess"]
ENVS = {
    "lunarlander": partial(LunarLanderEnv, {}),
    "lunarlander_continuous": partial(LunarLanderEnv, {"make_kwargs": {"continuous": True}}),
    "bipedalwalker": partial(BipedalWalkerEnv, {}),
    "minigrid": partial(MiniGridEnv, {"max_step": 10}),
}


def rollout(manager_type: str, env_fn, steps: int = 25) -> list[np.ndarray]:
    observations = []
    with create_env_manager(manager_cfg(manager_type), [env_fn] * 2) as manager:
        manager.seed(0, dynamic_seed=False)
        manager.launch()
        space = manager.action_space
        space.seed(0)
        for _ in range(steps):
            timesteps = manager.step({env_id: space.sample() for env_id in manager.ready_obs_id})
            for env_id in sorted(timesteps):
                obs = timesteps[env_id].obs
                assert obs.dtype == np.float32 and manager.observation_space.contains(obs)
                observations.append(obs)
    return observations


@pytest.mark.parametrize("name", sorted(ENVS))
@pytest.mark.parametrize("manager_type", MANAGER_TYPES)
def test_box2d_and_minigrid_envs_run_the_same_in_every_manager(name, manager_type):
    reference = rollout("base", ENVS[name])
    observations = rollout(manager_type, ENVS[name])
    assert len(observations) == len(reference) and all(map(np.array_equal, observations, reference))


def test_families_come_from_the_entry_points():
    assert family_of_env_id("LunarLander-v3") == BOX2D and family_of_env_id("BipedalWalker-v3") == BOX2D
    DingEnvWrapper(cfg={"env_id": "MiniGrid-Empty-8x8-v0"}).reset()  # imports minigrid, which registers its ids
    assert family_of_env_id("MiniGrid-DoorKey-5x5-v0") == MINIGRID


def test_lunarlander_continuous_and_discrete_action_spaces():
    assert LunarLanderEnv({}).action_space.n == 4
    assert LunarLanderEnv({"env_id": "LunarLanderContinuous-v3"}).action_space.shape == (2,)
    assert LunarLanderEnv({"make_kwargs": {"continuous": True}}).action_space.shape == (2,)


def test_minigrid_default_preset_flattens_the_mission_and_max_step_truncates():
    env = MiniGridEnv({"env_id": "MiniGrid-Empty-8x8-v0", "max_step": 5})
    env.seed(0)
    obs = env.reset()
    # 7x7x3 image, then the mission one-hot encoded: 96 characters x 28 codes
    assert obs.shape == (7 * 7 * 3 + 96 * 28,) and obs.dtype == np.float32
    assert obs[7 * 7 * 3 :].reshape(96, 28).sum() == len("get to the green goal square")
    for _ in range(5):
        timestep = env.step(np.int64(2))  # forward
    assert timestep.done and timestep.truncated


@pytest.mark.parametrize("max_step", [None, 50, 300])
def test_minigrids_success_reward_is_the_envs_own_whatever_max_step_says(max_step):
    # max_step was MiniGrid's own max_steps, which its reward reads: 0.91 with 50 and 0.985 with 300 (DI-engine: 0.955).
    env = MiniGridEnv({"env_id": "MiniGrid-Empty-5x5-v0", "max_step": max_step})
    env.seed(0)
    env.reset()
    for action in (2, 2, 1, 2, 2):  # forward, forward, turn right, forward, forward: onto the goal
        timestep = env.step(np.int64(action))
    assert timestep.done and not timestep.truncated
    assert timestep.reward[0] == np.float32(1 - 0.9 * 5 / 100)  # Empty-5x5's own limit: 4 * 5 * 5 steps


def test_minigrid_takes_di_engines_flat_obs_key_and_refuses_unflattened_observations():
    env = MiniGridEnv({"env_id": "MiniGrid-Empty-8x8-v0", "flat_obs": True})  # DI-engine's default_config has it
    env.seed(0)
    assert env.reset().shape == (7 * 7 * 3 + 96 * 28,)
    with pytest.raises(ConfigError, match="flat_obs: expected True .* got False; the mission string"):
        MiniGridEnv({"env_id": "MiniGrid-Empty-8x8-v0", "flat_obs": False})


def test_a_space_without_array_form_names_the_env_the_space_and_the_fix():
    env = DingEnvWrapper(cfg={"env_id": "MiniGrid-Empty-8x8-v0", "env_wrapper": []})
    with pytest.raises(ConfigError) as error:
        env.reset()
    message = str(error.value)
    assert "MiniGrid-Empty-8x8-v0" in message and "observation_space['mission'] is MissionSpace" in message
    assert "env_wrapper='default'" in message and "FlatObsWrapper" in message


@pytest.mark.parametrize(
    "config",
    [
        "dizoo/box2d/lunarlander/config/lunarlander_config.py",
        "dizoo/box2d/lunarlander/config/lunarlander_cont_config.py",
        "dizoo/box2d/bipedalwalker/config/bipedalwalker_config.py",
        "dizoo/minigrid/config/minigrid_config.py",
    ],
)
def test_dizoo_configs_load(config):
    cfg = load_run_config(config)
    assert cfg.env.type in ("lunarlander", "bipedalwalker", "minigrid") and cfg.env.collector_env_num >= 1


@pytest.mark.parametrize(
    "make",
    [partial(BipedalWalkerEnv, {}), partial(DingEnvWrapper, cfg={"env_id": "BipedalWalker-v3"})],
    ids=["bipedalwalker type", "DingEnvWrapper"],
)
def test_bipedalwalker_replays_a_static_seed_exactly_every_episode(make):
    """Gymnasium's BipedalWalker reuses one Box2D world across resets; its replays diverged after one step."""
    env = make()
    env.seed(0, dynamic_seed=False)
    actions = np.random.default_rng(0).uniform(-1, 1, (60, 4)).astype(np.float32)
    episodes = [np.array(episode_observations(env, actions)) for _ in range(4)]
    assert all(np.array_equal(episode, episodes[0]) for episode in episodes[1:])


@pytest.mark.parametrize(
    ("env_id", "module", "error"),
    [
        ("LunarLander-v3", "Box2D", "DependencyNotInstalled"),
        ("MiniGrid-Empty-5x5-v0", "minigrid", "ImportError"),
        ("HalfCheetah-v5", "mujoco", "DependencyNotInstalled"),
    ],
)
def test_a_gymnasium_id_without_its_extra_names_the_extra_to_install(env_id, module, error):
    code = (
        "from ding_env import DingEnvWrapper\n"
        f"try:\n    DingEnvWrapper(cfg={{'env_id': {env_id!r}}}).reset()\n"
        "except Exception as error:\n    print(type(error).__name__, error)\n"
    )
    result = run_without_modules([module], code)
    extra = module.lower()
    assert result.stdout.startswith(f"{error} {env_id!r} needs the {extra} extra ("), result.stdout + result.stderr
    assert f"install it with: pip install 'ding-env[{extra}]'" in result.stdout and "swig" not in result.stdout


def test_a_minigrid_env_given_flattened_is_refused_by_the_preset_naming_its_observations():
    # The preset ran on top: "FlatObsWrapper needs a Dict observation space ...", a TypeError naming no setting.
    import gymnasium as gym
    from minigrid.wrappers import FlatObsWrapper

    flat = FlatObsWrapper(gym.make("MiniGrid-Empty-5x5-v0"))
    with pytest.raises(ConfigError, match=r"MiniGrid preset flattens a Dict .*\(2835,\).*env_wrapper=\[\]"):
        DingEnvWrapper(flat).reset()
    assert DingEnvWrapper(flat, cfg={"env_wrapper": []}).reset().shape == (2835,)

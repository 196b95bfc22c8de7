"""Every registered dizoo env passes the checker clean."""

import importlib.util

import pytest

from ding_env import ENV_REGISTRY
from ding_env.checker import check_env

# Atari episodes are long and ALE envs slow to build: fewer, longer rollouts.
SETTINGS = {"atari": dict(episodes=1, max_steps=3000), "bipedalwalker": dict(episodes=2, max_steps=1700)}
NEEDS = {
    "atari": "ale_py",
    "mujoco": "mujoco",
    "lunarlander": "Box2D",
    "bipedalwalker": "Box2D",
    "minigrid": "minigrid",
}


# A whole Atari episode through the checker passes the suite's default bound on a busy two-core machine.
@pytest.mark.timeout(180)
@pytest.mark.parametrize("env_type", ENV_REGISTRY.names())
def test_registered_env_passes_clean(env_type):
    if env_type in NEEDS and importlib.util.find_spec(NEEDS[env_type]) is None:
        pytest.skip(f"{NEEDS[env_type]} is not installed (make test installs it)")
    report = check_env(ENV_REGISTRY.get(env_type), **SETTINGS.get(env_type, dict(episodes=2, max_steps=1100)))
    assert report.findings == [], report.format()

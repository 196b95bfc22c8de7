"""Every registered dizoo env passes the checker clean."""

import pytest

from ding_env import ENV_REGISTRY
from ding_env.checker import check_env


@pytest.mark.parametrize("env_type", ENV_REGISTRY.names())
def test_registered_env_passes_clean(env_type):
    report = check_env(ENV_REGISTRY.get(env_type), episodes=2, max_steps=600)
    assert report.findings == [], report.format()

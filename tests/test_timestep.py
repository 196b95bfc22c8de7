import numpy as np
import pytest

from ding_env import BaseEnvTimestep
from ding_env.env.timestep import as_reward, final_step, termination, transition, truncation


def test_unpacks_as_four_fields():
    obs, reward, done, info = transition(np.zeros(2), 1.5)
    assert reward.shape == (1,) and reward.dtype == np.float32 and reward[0] == 1.5
    assert done is False and info == {}


def test_termination_and_truncation_are_distinct():
    terminal = termination(np.zeros(1), 1.0, episode_return=3.0)
    cut = truncation(np.zeros(1), 1.0, episode_return=3.0)
    assert terminal.done and cut.done
    assert terminal.terminated and not terminal.truncated
    assert cut.truncated and not cut.terminated
    assert terminal.info == {"truncated": False, "eval_episode_return": 3.0}
    assert type(cut.info["eval_episode_return"]) is float


def test_mid_episode_is_neither():
    step = transition(np.zeros(1), 0.0, {"truncated": True})
    assert not step.terminated and not step.truncated


def test_final_step_keeps_user_info():
    step = final_step(np.zeros(1), 0.0, 2.0, truncated=True, info={"lives": 0})
    assert step.info == {"lives": 0, "truncated": True, "eval_episode_return": 2.0}
    assert isinstance(step, BaseEnvTimestep) and step._fields == ("obs", "reward", "done", "info")


def test_reward_with_several_values_is_rejected():
    with pytest.raises(ValueError, match="exactly one value"):
        as_reward([1.0, 2.0])


def test_a_done_step_with_gyms_time_limit_key_is_a_truncation_as_the_managers_read_it():
    # The managers read info['TimeLimit.truncated'] (DI-engine's envs report time limits so); the properties did not.
    step = BaseEnvTimestep(np.zeros(2), np.zeros(1, np.float32), True, {"TimeLimit.truncated": True})
    assert step.truncated and not step.terminated
    step = BaseEnvTimestep(
        np.zeros(2), np.zeros(1, np.float32), True, {"truncated": False, "TimeLimit.truncated": True}
    )
    assert step.terminated and not step.truncated  # 'truncated' says it first

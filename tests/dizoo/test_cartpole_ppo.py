"""The PPO example learns CartPole through the collector and evaluator envs (torch needed)."""

import pytest

torch = pytest.importorskip("torch", reason="the PPO example needs the torch extra (make test installs it)")

from ding_env.evaluator import evaluate  # noqa: E402
from ding_env.run_config import build_managers, load_run_config  # noqa: E402
from dizoo.classic_control.cartpole.entry.cartpole_ppo import ActorCritic, Args, advantages, train  # noqa: E402


def test_untrained_agent_is_far_from_solving():
    torch.manual_seed(0)
    cfg = load_run_config("configs/cartpole.py", ["env.manager.type='base'"])
    collector, evaluator = build_managers(cfg)
    collector.close()
    with evaluator:
        evaluator.launch()
        result = evaluate(evaluator, ActorCritic(4, 2).greedy, 10, 195)
    assert result.mean < 50


@pytest.mark.slow
def test_ppo_reaches_195_within_three_minutes():
    result = train(Args(seed=0, max_seconds=170.0), log=lambda line: None)
    assert result.mean >= 195 and result.stop_reached


def test_truncated_steps_bootstrap_and_terminated_do_not():
    rewards = torch.ones((1, 3))
    values = torch.zeros((1, 3))
    next_values = torch.full((1, 3), 10.0)
    dones = torch.tensor([[False, True, True]])
    truncated = torch.tensor([[False, False, True]])
    adv = advantages(rewards, values, next_values, dones, truncated, gamma=0.5, lam=1.0)
    assert adv[0].tolist() == [6.0, 1.0, 6.0]  # mid-episode and truncated bootstrap, terminated does not


def test_the_example_finds_its_config_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = load_run_config(Args().config)
    assert cfg.env.type == "cartpole" and cfg.env.stop_value == 195

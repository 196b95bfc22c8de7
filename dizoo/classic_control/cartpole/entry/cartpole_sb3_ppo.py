"""Stable-Baselines3's PPO on CartPole-v1, collecting through ding_env's subprocess manager.

The collector envs of the cartpole env type's config (8 envs in worker processes, dynamic
seeds) become an SB3 ``VecEnv`` with :class:`ding_env.sb3.ManagerVecEnv`; the
evaluator envs (static seeds) score the policy with ding_env's evaluator. The PPO
settings are rl-zoo's tuned CartPole ones: short rollouts and many epochs.

Run it: ``python -m dizoo.classic_control.cartpole.entry.cartpole_sb3_ppo`` (needs the sb3 extra).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback

from ding_env.evaluator import EvalResult, evaluate
from ding_env.run_config import build_managers, load_run_config
from ding_env.sb3 import ManagerVecEnv
from dizoo.classic_control.cartpole.entry.command_line import PACKAGED_CONFIG, run_from_command_line


@dataclass
class Args:
    """Every setting of the run."""

    config: str = str(PACKAGED_CONFIG)  # env config: collector/evaluator envs and manager
    seed: int = 0  # seeds the envs and PPO
    total_steps: int = 100_000  # env steps at most
    eval_every: int = 8_192  # env steps between evaluations
    max_seconds: float = 110.0  # wall-clock budget


class EvaluateUntilSolved(BaseCallback):
    """Scores the greedy policy on the evaluator envs every ``every`` steps; stops training once solved."""

    def __init__(self, evaluator, n_episode: int, stop_value: float, every: int, deadline: float, log) -> None:
        super().__init__()
        self.evaluator, self.n_episode, self.stop_value = evaluator, n_episode, stop_value
        self.every, self.deadline, self.log = every, deadline, log
        self.result: EvalResult | None = None
        self._next_eval = every

    def _on_step(self) -> bool:
        if self.num_timesteps < self._next_eval and time.monotonic() < self.deadline:
            return True
        self._next_eval += self.every
        self.result = evaluate(self.evaluator, self.greedy, self.n_episode, self.stop_value)
        self.log(f"steps {self.num_timesteps:>7}  eval return {self.result.mean:6.1f}")
        return not self.result.stop_reached and time.monotonic() < self.deadline

    def greedy(self, obs: np.ndarray) -> np.ndarray:
        """The evaluation policy: PPO's deterministic action."""
        return self.model.predict(obs, deterministic=True)[0]


def train(args: Args, log=print) -> EvalResult:
    """Train until the evaluator's mean return reaches the config's stop value, or the budget runs out."""
    torch.set_num_threads(1)  # leave the cores to the env workers
    cfg = load_run_config(args.config, [f"seed={args.seed}"])
    collector, evaluator = build_managers(cfg)
    venv = ManagerVecEnv(collector)
    with evaluator:
        evaluator.launch()
        model = PPO(
            "MlpPolicy",
            venv,
            n_steps=32,
            batch_size=256,
            gae_lambda=0.8,
            gamma=0.98,
            n_epochs=20,
            ent_coef=0.0,
            learning_rate=lambda progress: 1e-3 * progress,
            clip_range=lambda progress: 0.2 * progress,
            seed=args.seed,
            device="cpu",
        )
        callback = EvaluateUntilSolved(
            evaluator,
            cfg.env.n_evaluator_episode,
            cfg.env.stop_value,
            args.eval_every,
            time.monotonic() + args.max_seconds,
            log,
        )
        try:
            model.learn(args.total_steps, callback=callback)
        finally:
            venv.close()
        if callback.result is None or not callback.result.stop_reached:
            callback.result = evaluate(evaluator, callback.greedy, cfg.env.n_evaluator_episode, cfg.env.stop_value)
        return callback.result


def main() -> None:
    """Parse ``--field value`` for every ``Args`` field and train."""
    run_from_command_line(Args, train, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    main()

"""PPO on CartPole-v1, trained through ding_env's collector envs and scored by its evaluator.

One readable file in the CleanRL style: every setting is in ``Args``. The
collector manager steps 8 envs in worker processes with dynamic seeds; the
evaluator manager replays static seeds. Time limits matter here: an episode
cut at 500 steps is *truncated*, so its last transition bootstraps from the
value of the true final observation, while a fallen pole (*terminated*) does not.

Run it: ``python -m dizoo.classic_control.cartpole.entry.cartpole_ppo`` (needs torch).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ding_env.evaluator import EvalResult, evaluate
from ding_env.run_config import build_managers, load_run_config
from ding_env.torch_adapter import TorchEnvManager
from dizoo.classic_control.cartpole.entry.command_line import PACKAGED_CONFIG, run_from_command_line


@dataclass
class Args:
    """Every setting of the run."""

    config: str = str(PACKAGED_CONFIG)  # env config: collector/evaluator envs and manager
    seed: int = 0  # seeds the envs and torch
    total_steps: int = 200_000  # env steps at most
    rollout_steps: int = 128  # steps per env between updates
    learning_rate: float = 2.5e-3
    gamma: float = 0.99
    gae_lambda: float = 0.95
    update_epochs: int = 4
    minibatches: int = 4
    clip: float = 0.2
    entropy_coef: float = 0.01
    value_coef: float = 0.5
    max_grad_norm: float = 0.5
    eval_every: int = 5  # updates between evaluations
    max_seconds: float = 170.0  # wall-clock budget


class ActorCritic(nn.Module):
    """Two small MLPs: action logits and state value."""

    def __init__(self, obs_dim: int, n_actions: int) -> None:
        super().__init__()

        def mlp(out: int, gain: float) -> nn.Sequential:
            layers = [nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, out)]
            for layer in layers[::2]:
                nn.init.orthogonal_(layer.weight, np.sqrt(2))
                nn.init.zeros_(layer.bias)
            nn.init.orthogonal_(layers[-1].weight, gain)
            return nn.Sequential(*layers)

        self.actor = mlp(n_actions, 0.01)
        self.critic = mlp(1, 1.0)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """V(obs), shape (n,)."""
        return self.critic(obs).squeeze(-1)

    def act(self, obs: torch.Tensor, action: torch.Tensor | None = None):
        """Sample (or score) actions: (action, log prob, entropy, value)."""
        dist = torch.distributions.Categorical(logits=self.actor(obs))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(obs)

    def greedy(self, obs: np.ndarray) -> np.ndarray:
        """The evaluation policy: the most likely action."""
        with torch.no_grad():
            return self.actor(torch.as_tensor(obs)).argmax(-1).numpy()


def advantages(rewards, values, next_values, dones, truncated, gamma, lam):
    """GAE over a rollout (time-major tensors of shape (T, n)).

    ``next_values[t]`` is V of the observation after step t: the true final
    observation where the episode ended. Terminated steps do not bootstrap;
    truncated steps do; the GAE chain is cut at every episode end.
    """
    bootstrap = (~dones | truncated).float()
    deltas = rewards + gamma * next_values * bootstrap - values
    continues = (~dones).float()
    result = torch.zeros_like(rewards)
    running = torch.zeros(rewards.shape[1])
    for t in reversed(range(len(rewards))):
        running = deltas[t] + gamma * lam * continues[t] * running
        result[t] = running
    return result


def train(args: Args, log=print) -> EvalResult:
    """Train until the evaluator's mean return reaches the config's stop value, or the budget runs out."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # leave the cores to the env workers
    cfg = load_run_config(args.config, [f"seed={args.seed}"])
    collector, evaluator = build_managers(cfg)
    with TorchEnvManager(collector) as envs, evaluator:  # tensors in and out of the collector envs
        envs.launch()
        evaluator.launch()
        n_envs, obs_dim = envs.env_num, envs.observation_space.shape[0]
        agent = ActorCritic(obs_dim, envs.action_space.n)
        optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
        shape = (args.rollout_steps, n_envs)
        obs_buf, next_obs_buf = torch.zeros((*shape, obs_dim)), torch.zeros((*shape, obs_dim))
        actions, logprobs = torch.zeros(shape, dtype=torch.int64), torch.zeros(shape)
        rewards, values = torch.zeros(shape), torch.zeros(shape)
        dones, truncs = torch.zeros(shape, dtype=torch.bool), torch.zeros(shape, dtype=torch.bool)
        start, steps, update, result = time.perf_counter(), 0, 0, None
        while steps < args.total_steps and time.perf_counter() - start < args.max_seconds:
            for t in range(args.rollout_steps):
                ready = envs.ready_obs_batch  # sync manager: every env, ids 0..n-1
                with torch.no_grad():
                    actions[t], logprobs[t], _, values[t] = agent.act(ready.obs)
                obs_buf[t] = ready.obs
                batch = envs.step_batch(ready.env_id, actions[t])
                rewards[t], dones[t], truncs[t] = batch.reward[:, 0], batch.done, batch.truncated
                next_obs_buf[t] = batch.obs  # the true final observation where done
            steps += args.rollout_steps * n_envs
            with torch.no_grad():
                next_values = agent.value(next_obs_buf.reshape(-1, obs_dim)).reshape(shape)
            adv = advantages(rewards, values, next_values, dones, truncs, args.gamma, args.gae_lambda)
            returns = adv + values
            update_policy(agent, optimizer, args, obs_buf, actions, logprobs, adv, returns)
            update += 1
            if update % args.eval_every == 0:
                result = evaluate(evaluator, agent.greedy, cfg.env.n_evaluator_episode, cfg.env.stop_value)
                log(f"steps {steps:>7}  {time.perf_counter() - start:5.1f} s  eval return {result.mean:6.1f}")
                if result.stop_reached:
                    break
        if result is None or not result.stop_reached:
            result = evaluate(evaluator, agent.greedy, cfg.env.n_evaluator_episode, cfg.env.stop_value)
        return result


def update_policy(agent, optimizer, args, obs, actions, logprobs, adv, returns) -> None:
    """PPO's clipped objective over a few epochs of minibatches."""
    flat = lambda tensor: tensor.reshape(-1, *tensor.shape[2:])  # noqa: E731
    obs, actions, logprobs, adv, returns = map(flat, (obs, actions, logprobs, adv, returns))
    size = len(obs)
    generator = torch.Generator().manual_seed(args.seed)
    for _ in range(args.update_epochs):
        order = torch.randperm(size, generator=generator)
        for index in order.split(size // args.minibatches):
            _, new_logprob, entropy, value = agent.act(obs[index], actions[index])
            ratio = (new_logprob - logprobs[index]).exp()
            mb_adv = adv[index]
            mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            policy_loss = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
            value_loss = 0.5 * (value - returns[index]).pow(2).mean()
            loss = policy_loss + args.value_coef * value_loss - args.entropy_coef * entropy.mean()
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()


def main() -> None:
    """Parse ``--field value`` for every ``Args`` field and train."""
    run_from_command_line(Args, train, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    main()

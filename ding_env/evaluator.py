"""Evaluating a policy on an (evaluator) env manager for an exact number of episodes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ding_env.collector import check_progress, policy_actions
from ding_env.config import is_count
from ding_env.env.spaces import ARRAY_SPACES
from ding_env.env_manager import BaseEnvManager
from ding_env.errors import EnvDataError, EpisodeStepLimitError

# Steps an evaluation episode may take before evaluate() gives up on it: far past any built-in env's time
# limit (Atari's 108,000 frames are 27,000 steps), yet an env that never ends an episode fails in seconds.
DEFAULT_MAX_EPISODE_STEPS = 100_000


class EvalResult(NamedTuple):
    """What an evaluation measured.

    Attributes:
        returns: Per-episode returns (``eval_episode_return``), in completion order per env.
        mean: Mean return.
        std: Standard deviation of the returns.
        stop_reached: ``mean >= stop_value`` (False when no stop value is set).
        steps: Env steps taken.
        abnormal_episodes: Episodes cut by a failed step (``step_error='abnormal'``): they have no return
            and are not counted; the env runs another episode in their place.
    """

    returns: list[float]
    mean: float
    std: float
    stop_reached: bool
    steps: int
    abnormal_episodes: int = 0


def episode_quota(n_episode: int, env_num: int) -> np.ndarray:
    """Episodes each env runs so that ``n_episode`` are spread as evenly as possible."""
    if n_episode < 1:
        raise ValueError(f"n_episode must be >= 1, got {n_episode}")
    quota = np.full(env_num, n_episode // env_num, dtype=np.int64)
    quota[: n_episode % env_num] += 1
    return quota


def evaluate(
    manager: BaseEnvManager,
    policy: Callable[[Any], Any],
    n_episode: int,
    stop_value: float | None = None,
    seed: int | None = None,
    on_episode: Callable[[float], None] | None = None,
    dynamic_seed: bool = False,
    step_every_env: bool | None = None,
    max_episode_steps: int | None = DEFAULT_MAX_EPISODE_STEPS,
    on_step: Callable[[int], None] | None = None,
) -> EvalResult:
    """Run exactly ``n_episode`` episodes with ``policy`` and summarise the returns.

    The manager is reset first; with ``seed`` it is re-seeded (statically by default: every episode
    of an env replays its seed), so the same seed and policy give the same returns.

    Args:
        manager: A launched evaluator manager.
        policy: Maps a batch of observations to a batch of actions.
        n_episode: Episodes to run, spread over the envs.
        stop_value: Mean return that counts as solved.
        seed: Seed applied before the evaluation.
        on_episode: Called with each finished episode's return (progress display).
        dynamic_seed: Seed each episode anew, drawn reproducibly from ``seed``. Batch envs whose
            simulator takes seeds only for all its envs at once (Gymnasium vector envs, EnvPool)
            need it: they replay a static seed only when every sub-env resets together.
        step_every_env: Step every ready env, also those that ran their share of the episodes (their
            later episodes are not counted), as lockstep batch envs (a Gymnasium vector env) need. None:
            whether the manager hosts one (``manager.lockstep``).
        max_episode_steps: Steps a counted episode may take; an env that reaches it with its episode still
            running fails the evaluation (None: no bound, and an env that never ends an episode blocks forever).
        on_step: Called with the env steps taken so far after each manager step (progress display: an
            evaluation whose episodes are long shows it is running).

    Raises:
        EpisodeStepLimitError: Naming the env whose episode reached ``max_episode_steps`` without ending.
        ValueError: For ``max_episode_steps`` below 1.
    """
    if max_episode_steps is not None and not is_count(max_episode_steps):
        raise ValueError(f"max_episode_steps must be an int >= 1 or None, got {max_episode_steps!r}")
    if step_every_env is None:
        step_every_env = manager.lockstep
    if seed is not None:
        manager.seed(seed, dynamic_seed=dynamic_seed)
    manager.reset()
    remaining = episode_quota(n_episode, manager.env_num)
    per_env = not isinstance(manager.action_space, ARRAY_SPACES)  # see policy_actions
    returns: list[float] = []
    steps = abnormal = 0
    episode_steps = np.zeros(manager.env_num, dtype=np.int64)  # of each env's running episode
    while remaining.any():
        ready = manager.ready_obs_batch
        wanted = np.ones(len(ready.env_id), dtype=bool) if step_every_env else remaining[ready.env_id] > 0
        env_ids = ready.env_id[wanted]
        obs = _rows(ready.obs, wanted)
        check_progress(manager, env_ids, f"evaluate({n_episode} episodes) after {len(returns)}")
        actions = (
            policy_actions(policy, obs, len(env_ids), per_env, env_ids) if len(env_ids) else np.zeros(0, dtype=np.int64)
        )
        batch = manager.step_batch(env_ids, actions)
        steps += len(batch.env_id)
        episode_steps[batch.env_id] += 1
        for env_id, done, info in zip(batch.env_id.tolist(), batch.done.tolist(), batch.info, strict=True):
            if done:
                episode_steps[env_id] = 0
            elif max_episode_steps is not None and episode_steps[env_id] >= max_episode_steps and remaining[env_id]:
                # Only a counted episode: a lockstep env past its share steps until the others are done.
                raise EpisodeStepLimitError(env_id, max_episode_steps, len(returns), n_episode)
            if done and remaining[env_id] > 0:
                if info.get("abnormal"):  # a failed step's episode has no return: another one takes its place
                    abnormal += 1
                    continue
                if "eval_episode_return" not in info:  # the one number evaluate() reads: a KeyError named nothing
                    raise EnvDataError(
                        f"evaluate(): env {env_id} of {type(manager).__name__} ended an episode without "
                        "info['eval_episode_return'] (the episode's return, which the evaluation averages): put the "
                        "sum of the episode's rewards in the done step's info (`ding-env check` finds the step)"
                    )
                remaining[env_id] -= 1
                returns.append(float(info["eval_episode_return"]))
                if on_episode is not None:
                    on_episode(returns[-1])
        if on_step is not None:
            on_step(steps)
    mean = float(np.mean(returns))
    reached = stop_value is not None and mean >= stop_value
    return EvalResult(returns, mean, float(np.std(returns)), reached, steps, abnormal)


def _rows(obs: Any, mask: np.ndarray) -> Any:
    if isinstance(obs, dict):
        return {key: _rows(value, mask) for key, value in obs.items()}
    if isinstance(obs, tuple):
        return tuple(_rows(value, mask) for value in obs)
    return obs[mask]

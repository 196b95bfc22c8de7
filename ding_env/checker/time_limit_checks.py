"""The time-limit check: an episode the env's time limit ends is reported as truncated, and none runs past it.

``check_time_limit`` checks a ``BaseEnv``; ``time_limit_findings`` and ``env_time_limit`` serve the batch
env's check too.
"""

from __future__ import annotations

from typing import Any

from ding_env.checker.report import ERROR, WARNING, Finding
from ding_env.checker.rollout import CheckContext, Episode, guard, rollout
from ding_env.env.base_env import BaseEnv
from ding_env.env.timestep import reported_truncation


def check_time_limit(ctx: CheckContext) -> list[Finding]:
    """An episode ended by the env's time limit reports ``truncated``, not termination, and none runs past it.

    One episode ending at the limit as a termination may be a terminal state reached on the last step: more
    episodes (``EXTRA_TIME_LIMIT_ROLLOUTS`` rollouts at most) tell it from a time limit reported as one. So do
    they when no episode reached the limit but one came within half of it: the limit was in reach, and a check
    of no episode at it would pass an env that reports it wrong.
    """
    name = "check_time_limit"

    def body() -> list[Finding]:
        env = ctx.make_env()
        try:
            episodes = rollout(env, ctx, ctx.seed, dynamic=True)
            limit = env_time_limit(env)
            if limit is None:
                return []
            terminated = truncated = longest = 0  # episodes ended at the limit, as each; the longest episode
            for extra in range(EXTRA_TIME_LIMIT_ROLLOUTS + 1):
                if extra:  # one termination at the limit and no truncation yet, or the limit in reach: more episodes
                    episodes = rollout(env, ctx, ctx.seed + extra, dynamic=True)
                too_long = _past_time_limit(name, episodes, limit)
                if too_long:
                    return too_long
                ends = [reported_truncation(last.info) for last in _last_steps_at(episodes, limit)]
                terminated, truncated = terminated + ends.count(False), truncated + ends.count(True)
                longest = max([longest, *(len(episode.timesteps) for episode in episodes)])
                in_reach = terminated == truncated == 0 and 2 * longest >= limit
                if (terminated, truncated) != (1, 0) and not in_reach:
                    break
            return time_limit_findings(name, limit, terminated, truncated, "an episode")
        finally:
            ctx.close(env)

    return guard(name, "rollouts", body)


# Rollouts more that check_time_limit runs when one episode alone ended at the time limit, as a termination, or
# when none reached the limit but one came within half of it.
EXTRA_TIME_LIMIT_ROLLOUTS = 3


def _past_time_limit(name: str, episodes: list[Episode], limit: int) -> list[Finding]:
    """The first episode that ran past ``limit``, as a finding (none: none did)."""
    for episode in episodes:
        if len(episode.timesteps) > limit:  # ended late, or cut by the check's own cap
            ran = f"an episode ran {len(episode.timesteps)} steps" + ("" if episode.ended else " without ending")
            return [
                Finding(
                    name,
                    ERROR,
                    f"{ran}, past the time limit the env declares (max_episode_steps={limit})",
                    "end the episode at the limit as a truncation: done=True, info['truncated']=True "
                    "(ding_env.env.timestep.truncation does)",
                )
            ]
    return []


def _last_steps_at(episodes: list[Episode], limit: int) -> list[Any]:
    """The last timesteps of the episodes that ended exactly at ``limit`` (with an info to tell how)."""
    return [
        episode.timesteps[-1]
        for episode in episodes
        if episode.ended and len(episode.timesteps) == limit and isinstance(episode.timesteps[-1].info, dict)
    ]


def time_limit_findings(name: str, limit: int, terminated: int, truncated: int, whose: str) -> list[Finding]:
    """What episodes that ended exactly at the time ``limit`` say of how the env reports it.

    A terminal state can be reached on the last allowed step: one episode ending there as a termination is
    no proof of a time limit reported as one. An episode that ended there as a truncation shows the limit is
    reported right; two or more ending there as terminations, and none as a truncation, show it is not.

    Args:
        name: The check's name.
        limit: The env's time limit.
        terminated: Episodes that ended at the limit as terminations.
        truncated: Episodes that ended at the limit as truncations.
        whose: Names the episode in the message ("an episode", "sub-env 3's episode").
    """
    if truncated or not terminated:
        return []
    fix = "report a time limit as truncation: done=True, info['truncated']=True"
    if terminated == 1:
        message = (
            f"{whose} ended at the time limit ({limit} steps) as a termination, and none there as a truncation: "
            "if the limit ended it, report it as truncation (a terminal state reached on the last step is right)"
        )
        return [Finding(name, WARNING, message, fix)]
    message = (
        f"episodes ended at the time limit ({limit} steps) as a termination, {terminated} of them, none as a truncation"
    )
    return [Finding(name, ERROR, message, fix)]


def env_time_limit(env: BaseEnv) -> int | None:
    """The time limit ``env`` declares: its Gymnasium env's spec's, or its config's ``max_episode_steps``."""
    inner = getattr(env, "env", None) if hasattr(type(env), "env") else None
    spec = getattr(inner, "spec", None)
    if spec is not None and spec.max_episode_steps:
        return int(spec.max_episode_steps)
    cfg = getattr(env, "_cfg", None) or {}
    limit = cfg.get("max_episode_steps") if isinstance(cfg, dict) else None
    return int(limit) if isinstance(limit, int) else None

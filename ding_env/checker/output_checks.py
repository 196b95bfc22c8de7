"""Checks of what the env's calls return: spaces, observations, rewards, done infos, actions.

How episodes end at a time limit is checked in ``time_limit_checks``.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.checker.report import ERROR, WARNING, Finding
from ding_env.checker.rollout import CheckContext, guard, rollout, sample, step_env, type_name
from ding_env.checker.time_limit_checks import env_time_limit
from ding_env.env.spaces import SPACE_NAMES, dtype_problems, leaves, value_problems
from ding_env.env.timestep import info_type_fix

RANDOM_ACTIONS = 50  # drawn by check_random_action: 50 equal draws of two or more actions are no chance


def check_spaces(ctx: CheckContext) -> list[Finding]:
    """Spaces exist, are Gymnasium spaces, follow the dtype convention; rewards have shape (1,)."""
    name = "check_spaces"

    def body() -> list[Finding]:
        env = ctx.make_env()
        findings = []
        unknown = [attr for attr in SPACE_NAMES if getattr(env, attr, None) is None]
        if unknown:
            findings.append(
                Finding(
                    name,
                    ERROR,
                    f"spaces are None before the first reset(): {', '.join(unknown)}",
                    "declare the spaces in __init__ (DI-engine's envs that set them in reset() pass with --di-engine)",
                )
            )
            env.seed(ctx.seed)
            env.reset()
        still_unknown = [attr for attr in SPACE_NAMES if getattr(env, attr) is None]
        if still_unknown:
            ctx.spaceless = True  # every other check needs the spaces: check_env skips them
            verb = "are" if len(still_unknown) > 1 else "is"
            return [
                *findings,
                Finding(
                    name,
                    ERROR,
                    f"{', '.join(still_unknown)} {verb} None after reset(): the managers hold every env's results in "
                    "arrays laid out by the spaces (DI-engine's base manager steps such an env)",
                    "declare each in __init__, or set it in reset(): a gymnasium.spaces object",
                ),
            ]
        for attr in SPACE_NAMES:
            space = getattr(env, attr)
            if not isinstance(space, gym.spaces.Space):
                findings.append(
                    Finding(
                        name,
                        ERROR,
                        f"{attr} is {type(space).__name__}, not a Gymnasium space",
                        "return a gymnasium.spaces object from the property",
                    )
                )
                continue
            if attr != "action_space":
                hint = "declare float32 (int64 for counts, uint8 for images) and emit that dtype"
                findings += [Finding(name, ERROR, problem, hint) for problem in dtype_problems(space, attr)]
        reward_space = env.reward_space
        if isinstance(reward_space, gym.spaces.Space) and len(reward_space.shape or ()) != 1:
            findings.append(
                Finding(
                    name,
                    ERROR,
                    f"reward_space has shape {reward_space.shape}, expected (1,) (or (n_agents,) for multi-agent envs)",
                    "rewards are arrays of shape (1,): Box(low, high, (1,), np.float32)",
                )
            )
        ctx.close(env)
        return findings

    return guard(name, "building the env or reading its spaces", body)


def obs_hint(problem: str) -> str:
    """The fix for an observation that does not fit ``observation_space``.

    Values outside the bounds are the env's to clip (or the bounds too narrow); a shape or dtype that
    differs is as often the declared space that is wrong as the observation. A NaN is neither: no space
    declares it and clipping keeps it, so the fix is in the code that computed it.
    """
    if " holds NaN" in problem:
        return (
            "the env computed a NaN (0/0, inf - inf, log or sqrt of a negative, a simulator that diverged): find "
            "where reset() / step() builds the observation and keep it finite; clipping keeps a NaN"
        )
    if " is outside " in problem or " holds " in problem:
        return "clip the observations into the declared bounds, or declare the bounds they really take"
    return (
        "the observation and observation_space disagree: declare the space as the env returns it (its shape and "
        "dtype: float32, int64 or uint8 for images), or return what the space declares"
    )


def reward_hint(problem: str) -> str:
    """The fix for a reward outside ``reward_space``: a NaN or inf is step()'s to fix, other values the space's."""
    if " holds NaN" in problem:
        return (
            "step() computed a NaN reward (0/0, inf - inf, log or sqrt of a negative, a NaN from the simulator): "
            "find where step() computes it and return a finite number; no reward_space declares NaN, and one NaN "
            "makes every return summed over it NaN"
        )
    if " holds inf" in problem:
        return "step() returned an infinite reward: return a finite one (or declare unbounded reward_space bounds)"
    if " dtype " in problem:
        return "return the reward in the reward space's dtype: np.array([r], dtype=np.float32) for the usual space"
    return "declare reward_space with the bounds the rewards really take, or keep step()'s rewards inside them"


def check_reset_obs(ctx: CheckContext) -> list[Finding]:
    """``reset()`` returns an observation inside ``observation_space``, exactly (shape, dtype, bounds)."""
    name = "check_reset_obs"

    def body() -> list[Finding]:
        env = ctx.make_env()
        env.seed(ctx.seed)
        obs = env.reset()
        space = env.observation_space
        problems = value_problems(obs, space, "reset obs")
        ctx.close(env)
        if problems and _is_obs_and_info(obs, space):  # Gymnasium's reset: the space's problems follow from it
            return [
                Finding(
                    name,
                    ERROR,
                    f"reset() returned (obs, info), Gymnasium's form: a {type(obs[0]).__name__} and a dict",
                    "return the observation alone (a BaseEnv's reset gives no info)",
                )
            ]
        return [Finding(name, ERROR, p, obs_hint(p)) for p in problems]

    return guard(name, "reset()", body)


def _is_obs_and_info(obs: Any, space: gym.spaces.Space) -> bool:
    """Whether ``obs`` looks like Gymnasium's ``(obs, info)`` where the space takes no such tuple."""
    return isinstance(obs, tuple) and len(obs) == 2 and isinstance(obs[1], dict) and not space.contains(obs)


def check_step_output(ctx: CheckContext) -> list[Finding]:
    """Random-action episodes: obs in space, reward (1,) in reward_space, bool done, dict info, done infos."""
    name = "check_step_output"

    def body() -> list[Finding]:
        env = ctx.make_env()
        episodes = rollout(env, ctx, ctx.seed, dynamic=True)
        limit = env_time_limit(env)  # before close: a closed DingEnvWrapper would build its env again to say it
        ctx.close(env)
        found: dict[str, Finding] = {}
        steps_done = 0  # over all episodes, so a finding's first step is unambiguous

        def report(message: str, hint: str, severity: str = ERROR) -> None:
            # One finding per kind of problem, with how often it happened and where first, not one per step.
            key = message.split(":")[0].split(", got ")[0]  # not the value that arrived, which changes by step
            if key in found:
                found[key] = dataclasses.replace(found[key], count=found[key].count + 1)
            else:
                found[key] = Finding(name, severity, message, hint, first_step=steps_done)

        # (1,), or one reward per agent where the reward space says so (multi-agent envs)
        reward_shape = tuple(env.reward_space.shape or ()) if len(env.reward_space.shape or ()) == 1 else (1,)
        for episode in episodes:
            for timestep in episode.timesteps:
                steps_done += 1
                for problem in value_problems(timestep.obs, env.observation_space, "step obs"):
                    report(problem, obs_hint(problem))
                reward = timestep.reward
                if not isinstance(reward, np.ndarray) or reward.shape != reward_shape:
                    got = (
                        f"shape {getattr(reward, 'shape', None)}"
                        if isinstance(reward, np.ndarray)
                        else type(reward).__name__
                    )
                    report(
                        f"reward must be an array of shape {reward_shape}, got {got}",
                        "return np.array([r], dtype=np.float32) (or use ding_env.env.timestep.transition)"
                        if reward_shape == (1,)
                        else f"return one reward per agent, np.asarray(rewards, dtype=np.float32) of shape "
                        f"{reward_shape}, in BaseEnvTimestep(obs, reward, done, info) (transition takes one reward)",
                    )
                else:
                    for problem in value_problems(reward, env.reward_space, "reward"):
                        report(problem, reward_hint(problem))
                if type(timestep.done) is not bool:
                    report(
                        f"done must be a Python bool, got {type_name(timestep.done)}",
                        "return bool(terminated or truncated), not a numpy bool",
                    )
                if not isinstance(timestep.info, dict):
                    report(
                        f"info must be a dict, got {type(timestep.info).__name__}",
                        info_type_fix(timestep.info),
                    )
                    continue
                if timestep.done and ctx.di_engine_done_info:
                    if "eval_episode_return" not in timestep.info:
                        report(
                            "info['eval_episode_return'] is missing on a done step",
                            "sum the raw rewards of the episode and put the total in info on the last step",
                        )
                elif timestep.done:
                    episode_return = timestep.info.get("eval_episode_return")
                    if type(episode_return) is not float:
                        # Every manager and `ding-env run` take any real number (float(x) of it): a warning.
                        number = isinstance(episode_return, (int, np.integer, np.floating)) and not isinstance(
                            episode_return, (bool, np.bool_)
                        )
                        got = (
                            "none (the key is missing)"
                            if "eval_episode_return" not in timestep.info
                            else type_name(episode_return)
                        )
                        report(
                            f"info['eval_episode_return'] on done must be a Python float, got {got}",
                            "sum the raw rewards of the episode and put float(total) in info on the last step"
                            + (" (the managers take this number as it is)" if number else ""),
                            WARNING if number else ERROR,
                        )
                    if "truncated" not in timestep.info:
                        report(
                            "info['truncated'] (bool) is missing on a done step",
                            "use ding_env.env.timestep.termination / truncation, which set it",
                        )
                    elif type(timestep.info["truncated"]) is not bool:
                        # A numpy bool is taken by its truth value; anything else (an array, a string) is not a flag.
                        report(
                            f"info['truncated'] on a done step must be a Python bool, got "
                            f"{type_name(timestep.info['truncated'])}",
                            "put bool(truncated) in info (ding_env.env.timestep.termination / truncation do; the "
                            "managers take its truth value)",
                            WARNING if isinstance(timestep.info["truncated"], np.bool_) else ERROR,
                        )
            if not episode.ended:
                report(
                    f"an episode did not end within {ctx.max_steps} steps",
                    f"its time limit ({limit} steps) is past them: raise --max-steps to {limit} to see its episodes end"
                    if limit is not None and limit > ctx.max_steps
                    else "add a time limit (reported as truncation) or raise --max-steps",
                    WARNING,
                )
        return list(found.values())

    return guard(name, "stepping the env with random actions", body)


def check_obs_memory(ctx: CheckContext) -> list[Finding]:
    """The env leaves the observations it returned alone.

    Observations of consecutive steps share no memory (``np.shares_memory``), and no step writes to an
    observation returned before (one the env keeps and writes again changes under its caller).
    """
    name = "check_obs_memory"

    def body() -> list[Finding]:
        env = ctx.make_env()
        env.seed(ctx.seed)
        previous = env.reset()
        returned = [(leaf, leaf.copy()) for leaf in leaves(previous) if _numeric(leaf)]
        env.action_space.seed(ctx.seed)  # after reset: some DI-engine envs only know their spaces then
        for step in range(1, min(ctx.max_steps, 20) + 1):
            timestep = step_env(env, sample(env.action_space, ctx))
            for old, new in zip(leaves(previous), leaves(timestep.obs), strict=False):
                if np.shares_memory(old, new):
                    ctx.close(env)
                    return [
                        Finding(
                            name,
                            ERROR,
                            "consecutive observations share memory: the env reuses an obs buffer",
                            "return a copy (obs.copy()) instead of the same array every step",
                        )
                    ]
            if any(not np.array_equal(leaf, copy, equal_nan=leaf.dtype.kind in "fc") for leaf, copy in returned):
                ctx.close(env)
                return [
                    Finding(
                        name,
                        ERROR,
                        f"step {step} changed, in place, an observation the env had returned before: "
                        "whoever holds it (a replay buffer, a trajectory) sees it change",
                        "build each observation in a new array and never write to one already returned",
                    )
                ]
            returned += [(leaf, leaf.copy()) for leaf in leaves(timestep.obs) if _numeric(leaf)]
            if timestep.done:
                break
            previous = timestep.obs
        ctx.close(env)
        return []

    return guard(name, "stepping the env", body)


def _numeric(leaf: Any) -> bool:
    """Whether ``leaf`` is an array compared by value (numbers and bools; not objects or strings)."""
    return isinstance(leaf, np.ndarray) and leaf.dtype.kind in "biufc"


def all_alike(actions: list, space: gym.spaces.Space) -> bool:
    """Whether ``actions`` (of ``space``) are all one action while ``space`` holds more than one."""
    first = actions[0]
    if not all(same_action(action, first) for action in actions[1:]):
        return False
    sampler = copy.deepcopy(space)
    sampler.seed(0)
    return not all(same_action(sampler.sample(), first) for _ in actions)


def same_action(one: Any, other: Any) -> bool:
    """Whether two actions are equal: dicts key by key, tuples item by item, anything else as arrays."""
    if isinstance(one, dict) or isinstance(other, dict):
        return (
            isinstance(one, dict)
            and isinstance(other, dict)
            and one.keys() == other.keys()
            and all(same_action(one[key], other[key]) for key in one)
        )
    if isinstance(one, tuple) or isinstance(other, tuple):
        return (
            isinstance(one, tuple)
            and isinstance(other, tuple)
            and len(one) == len(other)
            and all(map(same_action, one, other))
        )
    return bool(np.array_equal(np.asarray(one), np.asarray(other)))


def check_random_action(ctx: CheckContext) -> list[Finding]:
    """``random_action()`` is inside ``action_space`` with its dtype."""
    name = "check_random_action"

    def body() -> list[Finding]:
        env = ctx.make_env()
        if not callable(getattr(env, "random_action", None)):  # optional: DI-engine's gym.Env-based envs lack it
            ctx.close(env)
            return []
        env.seed(ctx.seed)
        if getattr(env, "action_space", None) is None:  # known only after the first reset (DI-engine's envs)
            env.reset()
        findings, actions = [], []
        for _ in range(RANDOM_ACTIONS):
            action = env.random_action()
            if isinstance(env.action_space, gym.spaces.Discrete) and np.shape(action) == (1,):
                action = np.asarray(action)[0]  # DI-engine's form of a Discrete action
            action = np.asarray(action) if np.isscalar(action) else action
            problems = value_problems(action, env.action_space, "random_action()")
            if problems:
                findings = [Finding(name, ERROR, problems[0], "sample from action_space (with its dtype and bounds)")]
                break
            actions.append(action)
        if not findings and all_alike(actions, env.action_space):
            findings = [
                Finding(
                    name,
                    ERROR,
                    f"random_action() returned the same action {RANDOM_ACTIONS} times in a row, where "
                    f"{env.action_space} has more than one",
                    "seed the sampler once (in seed()), not at every call; BaseEnv.random_action does so",
                )
            ]
        ctx.close(env)
        return findings

    return guard(name, "random_action()", body)

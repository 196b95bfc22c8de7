"""The checks: small functions, each building envs from a factory and returning findings.

Each ``check_*`` takes a :class:`CheckContext` and returns a list of
:class:`Finding`; an exception raised by the env becomes an error finding,
never a crash of the checker. ``CHECKS`` lists them in the order they run.
"""

from __future__ import annotations

import dataclasses
import pickle
import random
from collections.abc import Callable

import cloudpickle
import gymnasium as gym
import numpy as np

from ding_env.checker.report import ERROR, WARNING, Finding
from ding_env.checker.rollout import CheckContext, guard, raised, rollout, same, sample, trajectory, type_name
from ding_env.env.base_env import BaseEnv
from ding_env.env.spaces import dtype_problems, leaves, value_problems

SPACES = ("observation_space", "action_space", "reward_space")

# ---- the checks ------------------------------------------------------------


def check_spaces(ctx: CheckContext) -> list[Finding]:
    """Spaces exist, are Gymnasium spaces, follow the dtype convention; rewards have shape (1,)."""
    name = "check_spaces"

    def body() -> list[Finding]:
        env = ctx.make_env()
        findings = []
        unknown = [attr for attr in SPACES if getattr(env, attr, None) is None]
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
        for attr in SPACES:
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
        env.close()
        return findings

    return guard(name, "building the env or reading its spaces", body)


def check_lazy_init(ctx: CheckContext) -> list[Finding]:
    """Constructing is cheap (no simulator before reset) and the unreset env pickles."""
    name = "check_lazy_init"

    def body() -> list[Finding]:
        env = ctx.make_env()
        findings = []
        if getattr(env, "_init_flag", False):
            findings.append(
                Finding(
                    name,
                    ERROR,
                    "the env is initialised right after construction (_init_flag is True)",
                    "build the simulator in the first reset(), not in __init__",
                )
            )
        try:
            pickle.loads(cloudpickle.dumps(env))
        except Exception as error:  # noqa: BLE001 - any pickling failure is the finding
            findings.append(
                raised(
                    name,
                    "pickling the env before its first reset",
                    error,
                    "keep __init__ to plain config; create sockets, simulators and files in reset()",
                )
            )
        env.close()
        return findings

    return guard(name, "constructing the env", body)


def check_reset_obs(ctx: CheckContext) -> list[Finding]:
    """``reset()`` returns an observation inside ``observation_space``, exactly (shape, dtype, bounds)."""
    name = "check_reset_obs"

    def body() -> list[Finding]:
        env = ctx.make_env()
        env.seed(ctx.seed)
        obs = env.reset()
        problems = value_problems(obs, env.observation_space, "reset obs")
        env.close()
        return [
            Finding(name, ERROR, p, "convert observations to the space's dtype and clip to its bounds")
            for p in problems
        ]

    return guard(name, "reset()", body)


def check_step_output(ctx: CheckContext) -> list[Finding]:
    """Random-action episodes: obs in space, reward (1,) in reward_space, bool done, dict info, done infos."""
    name = "check_step_output"

    def body() -> list[Finding]:
        env = ctx.make_env()
        episodes = rollout(env, ctx, ctx.seed, dynamic=True)
        env.close()
        found: dict[str, Finding] = {}
        steps_done = 0  # over all episodes, so a finding's first step is unambiguous

        def report(message: str, hint: str, severity: str = ERROR) -> None:
            # One finding per kind of problem, with how often it happened and where first, not one per step.
            key = message.split(":")[0]
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
                    report(problem, "convert observations to the space's dtype and clip to its bounds")
                reward = timestep.reward
                if not isinstance(reward, np.ndarray) or reward.shape != reward_shape:
                    got = (
                        f"shape {getattr(reward, 'shape', None)}"
                        if isinstance(reward, np.ndarray)
                        else type(reward).__name__
                    )
                    report(
                        f"reward must be an array of shape {reward_shape}, got {got}",
                        "return np.array([r], dtype=np.float32) (or use ding_env.env.timestep.transition)",
                    )
                else:
                    for problem in value_problems(reward, env.reward_space, "reward"):
                        report(problem, "declare reward_space to match the rewards the env emits")
                if type(timestep.done) is not bool:
                    report(
                        f"done must be a Python bool, got {type_name(timestep.done)}",
                        "return bool(terminated or truncated), not a numpy bool",
                    )
                if not isinstance(timestep.info, dict):
                    report(
                        f"info must be a dict, got {type(timestep.info).__name__}",
                        "return {} when there is nothing to say",
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
                        got = type(episode_return).__name__
                        report(
                            f"info['eval_episode_return'] on done must be a Python float, got {got}",
                            "sum the raw rewards of the episode and put float(total) in info on the last step",
                        )
                    if type(timestep.info.get("truncated")) is not bool:
                        report(
                            "info['truncated'] (bool) is missing on a done step",
                            "use ding_env.env.timestep.termination / truncation, which set it",
                        )
            if not episode.ended:
                report(
                    f"an episode did not end within {ctx.max_steps} steps",
                    "add a time limit (reported as truncation) or raise --max-steps",
                    WARNING,
                )
        return list(found.values())

    return guard(name, "stepping the env with random actions", body)


def check_obs_memory(ctx: CheckContext) -> list[Finding]:
    """Observations of consecutive steps do not share memory (``np.shares_memory``)."""
    name = "check_obs_memory"

    def body() -> list[Finding]:
        env = ctx.make_env()
        env.seed(ctx.seed)
        previous = env.reset()
        env.action_space.seed(ctx.seed)  # after reset: some DI-engine envs only know their spaces then
        for _ in range(min(ctx.max_steps, 20)):
            timestep = env.step(sample(env.action_space, ctx))
            for old, new in zip(leaves(previous), leaves(timestep.obs), strict=False):
                if np.shares_memory(old, new):
                    env.close()
                    return [
                        Finding(
                            name,
                            ERROR,
                            "consecutive observations share memory: the env reuses an obs buffer",
                            "return a copy (obs.copy()) instead of the same array every step",
                        )
                    ]
            if timestep.done:
                break
            previous = timestep.obs
        env.close()
        return []

    return guard(name, "stepping the env", body)


def check_random_action(ctx: CheckContext) -> list[Finding]:
    """``random_action()`` is inside ``action_space`` with its dtype."""
    name = "check_random_action"

    def body() -> list[Finding]:
        env = ctx.make_env()
        env.seed(ctx.seed)
        if getattr(env, "action_space", None) is None:  # known only after the first reset (DI-engine's envs)
            env.reset()
        findings = []
        for _ in range(50):
            action = env.random_action()
            if isinstance(env.action_space, gym.spaces.Discrete) and np.shape(action) == (1,):
                action = np.asarray(action)[0]  # DI-engine's form of a Discrete action
            problems = value_problems(
                np.asarray(action) if np.isscalar(action) else action, env.action_space, "random_action()"
            )
            if problems:
                findings = [Finding(name, ERROR, problems[0], "sample from action_space (with its dtype and bounds)")]
                break
        env.close()
        return findings

    return guard(name, "random_action()", body)


def check_static_seed(ctx: CheckContext) -> list[Finding]:
    """Static seed: every reset gives the same start, and the same actions the same trajectory."""
    name = "check_static_seed"

    def body() -> list[Finding]:
        env = ctx.make_env()
        first = rollout(env, ctx, ctx.seed, dynamic=False)
        replay = rollout(env, ctx, ctx.seed, dynamic=False, actions=[episode.actions for episode in first])
        env.close()
        findings = []
        starts = [np.concatenate([np.ravel(a) for a in leaves(episode.reset_obs)]) for episode in first]
        if not all(np.array_equal(starts[0], start) for start in starts[1:]):
            findings.append(
                Finding(
                    name,
                    ERROR,
                    "with a static seed, resets gave different starting observations",
                    "in reset(), seed the simulator with self._next_episode_seed() (DI-engine's static seed)",
                )
            )
        if not same(trajectory(first), trajectory(replay)):
            findings.append(
                Finding(
                    name,
                    ERROR,
                    "the same static seed and actions gave different trajectories",
                    "draw all randomness from self.np_random or the seeded simulator, never from unseeded RNGs",
                )
            )
        return findings

    return guard(name, "seeded rollouts", body)


def check_dynamic_seed(outer: CheckContext) -> list[Finding]:
    """Dynamic seed: two instances with the same seed agree; episodes and seeds differ."""
    name = "check_dynamic_seed"

    def body() -> list[Finding]:
        # Enough episodes that random actions exercise the env's randomness.
        ctx = dataclasses.replace(outer, episodes=max(outer.episodes, 4))
        env_a, env_b, env_c, env_d = ctx.make_env(), ctx.make_env(), ctx.make_env(), ctx.make_env()
        a = rollout(env_a, ctx, ctx.seed, dynamic=True)
        b = rollout(env_b, ctx, ctx.seed, dynamic=True, actions=[episode.actions for episode in a])
        # Every episode replays the longest action sequence: only the seeds can make them differ.
        longest = max((episode.actions for episode in a), key=len)
        repeated = rollout(env_d, ctx, ctx.seed, dynamic=True, actions=[longest] * ctx.episodes)
        other_seed = rollout(env_c, ctx, ctx.seed + 1, dynamic=True, actions=[longest] * ctx.episodes)
        for env in (env_a, env_b, env_c, env_d):
            env.close()
        findings = []
        if not same(trajectory(a), trajectory(b)):
            findings.append(
                Finding(
                    name,
                    ERROR,
                    "two envs with the same dynamic seed and actions diverged",
                    "draw per-episode seeds from the seed given to seed() (self._next_episode_seed())",
                )
            )
        episodes = {b"".join(step.tobytes() for step in trajectory([episode])) for episode in repeated}
        if ctx.episodes > 1 and len(episodes) == 1:
            findings.append(
                Finding(
                    name,
                    WARNING,
                    "with a dynamic seed every episode was the same",
                    "a dynamic seed should give each episode a new seed (ignore for deterministic envs)",
                )
            )
        if same(trajectory(repeated), trajectory(other_seed)):
            findings.append(
                Finding(
                    name,
                    WARNING,
                    "seeds differing by one gave identical trajectories",
                    "pass the seed on to the simulator (ignore for deterministic envs)",
                )
            )
        return findings

    return guard(name, "seeded rollouts", body)


def check_global_rng(ctx: CheckContext) -> list[Finding]:
    """Seeding, resetting and stepping leave numpy's and Python's global RNG state untouched."""
    name = "check_global_rng"

    def body() -> list[Finding]:
        numpy_state, python_state = np.random.get_state(), random.getstate()
        env = ctx.make_env()
        rollout(env, ctx, ctx.seed, dynamic=True)
        env.random_action()
        env.close()
        after = np.random.get_state()
        touched = [
            name
            for name, same in (
                (
                    "numpy (np.random.seed / np.random.*)",
                    all(np.array_equal(x, y) for x, y in zip(numpy_state, after, strict=True)),
                ),
                ("Python (random.seed / random.*)", random.getstate() == python_state),
            )
            if not same
        ]
        return [
            Finding(
                name,
                ERROR,
                f"the env changed the global {what} RNG state",
                "use self.np_random or np.random.default_rng(seed) instead of the global RNG",
            )
            for what in touched
        ]

    return guard(name, "seeded rollouts", body)


def check_time_limit(ctx: CheckContext) -> list[Finding]:
    """An episode ended by the env's time limit reports ``truncated``, not termination."""
    name = "check_time_limit"

    def body() -> list[Finding]:
        env = ctx.make_env()
        episodes = rollout(env, ctx, ctx.seed, dynamic=True)
        limit = _time_limit(env)
        env.close()
        findings = []
        for episode in episodes:
            last = episode.timesteps[-1] if episode.timesteps else None
            if last is None or not episode.ended or not isinstance(last.info, dict):
                continue
            if limit is not None and len(episode.timesteps) == limit and not last.info.get("truncated"):
                findings.append(
                    Finding(
                        name,
                        ERROR,
                        f"an episode ended at the time limit ({limit} steps) as a termination",
                        "report a time limit as truncation: done=True, info['truncated']=True",
                    )
                )
                break
        return findings

    return guard(name, "rollouts", body)


def _time_limit(env: BaseEnv) -> int | None:
    inner = getattr(env, "env", None) if hasattr(type(env), "env") else None
    spec = getattr(inner, "spec", None)
    if spec is not None and spec.max_episode_steps:
        return int(spec.max_episode_steps)
    cfg = getattr(env, "_cfg", None) or {}
    limit = cfg.get("max_episode_steps") if isinstance(cfg, dict) else None
    return int(limit) if isinstance(limit, int) else None


def check_close_twice(ctx: CheckContext) -> list[Finding]:
    """``close()`` may be called twice (after use, and before use)."""
    name = "check_close_twice"

    def body() -> list[Finding]:
        env = ctx.make_env()
        env.close()
        env = ctx.make_env()
        env.seed(ctx.seed)
        env.reset()
        env.close()
        env.close()
        return []

    return guard(name, "close()", body, "make close() idempotent: release resources only if they exist")


def check_subprocess(ctx: CheckContext) -> list[Finding]:
    """The env gives the same trajectory in ``SyncSubprocessEnvManager`` (shared memory) as in-process."""
    name = "check_subprocess"
    from ding_env.env_manager import BaseEnvManager
    from ding_env.env_manager.subprocess_env_manager import SyncSubprocessEnvManager

    def run(manager_cls: type) -> list[np.ndarray]:
        with manager_cls([ctx.make_env], {}) as manager:
            manager.seed(ctx.seed)
            manager.launch()
            space = manager.action_space
            space.seed(ctx.seed)
            trace = []
            for _ in range(min(ctx.max_steps, 200)):
                timestep = manager.step({0: space.sample()})[0]
                trace.append(
                    np.concatenate([np.ravel(a).astype(np.float64) for a in leaves(timestep.obs)] + [timestep.reward])
                )
            return trace

    def body() -> list[Finding]:
        if not same(run(BaseEnvManager), run(SyncSubprocessEnvManager)):
            return [
                Finding(
                    name,
                    ERROR,
                    "the env's trajectory differs between a worker process and this process",
                    "avoid state shared across processes (globals, files); seed everything from seed()",
                )
            ]
        return []

    return guard(
        name,
        "running the env in SyncSubprocessEnvManager",
        body,
        "the env must be picklable before reset and emit arrays matching its spaces",
    )


CHECKS: list[Callable[[CheckContext], list[Finding]]] = [
    check_spaces,
    check_lazy_init,
    check_reset_obs,
    check_step_output,
    check_obs_memory,
    check_random_action,
    check_static_seed,
    check_dynamic_seed,
    check_global_rng,
    check_time_limit,
    check_close_twice,
    check_subprocess,
]

"""Checks of determinism: seeds fix trajectories, in this process and in a worker process, without global RNGs."""

from __future__ import annotations

import dataclasses
import random

import numpy as np

from ding_env.checker.report import ERROR, WARNING, Finding
from ding_env.checker.rollout import CheckContext, guard, rollout, same, seed_env, source_of, trajectory
from ding_env.env.spaces import leaves


def check_static_seed(ctx: CheckContext) -> list[Finding]:
    """Static seed: every reset gives the same start, and the same actions the same trajectory."""
    name = "check_static_seed"

    def body() -> list[Finding]:
        # The replay runs in an env of its own, and only resets after an episode's end are compared: a reset
        # after an episode cut at max_steps may go on with it (Atari's episodic life does, as DI-engine's).
        env, fresh = ctx.make_env(), ctx.make_env()
        first = rollout(env, ctx, ctx.seed, dynamic=False)
        replay = rollout(fresh, ctx, ctx.seed, dynamic=False, actions=[episode.actions for episode in first])
        env.close()
        fresh.close()
        findings = []
        after_ends = [episode for index, episode in enumerate(first) if index == 0 or first[index - 1].ended]
        starts = [_flat(episode.reset_obs) for episode in after_ends]
        if not all(np.array_equal(starts[0], start) for start in starts[1:]):
            dropped = dropped_dynamic_seed(ctx, dynamic=False)
            message = "with a static seed (dynamic_seed=False), resets gave different starting observations"
            if dropped:
                hint = pass_dynamic_seed_on("evaluator envs do not replay their episode")
                findings.append(Finding(name, ERROR, f"{message}: {dropped}", hint))
            else:
                hint = (
                    "in reset(), seed the simulator with self._next_episode_seed(), which replays the seed given to "
                    "seed() when dynamic_seed is False (not a seed of its own, and not only once in seed()); and "
                    "seed() must pass dynamic_seed on: super().seed(seed, dynamic_seed)"
                )
                findings.append(Finding(name, ERROR, message, hint))
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
                    "draw all randomness from self.np_random or a simulator seeded in reset() with "
                    "self._next_episode_seed(), never from unseeded RNGs (np.random.default_rng(), time)",
                )
            )
        episodes = {b"".join(step.tobytes() for step in trajectory([episode])) for episode in repeated}
        if ctx.episodes > 1 and len(episodes) == 1:
            dropped = dropped_dynamic_seed(ctx, dynamic=True)
            message = "with a dynamic seed (dynamic_seed=True) every episode was the same"
            if dropped:  # an error: seed() shows it dropped the flag, which no deterministic env needs to
                hint = pass_dynamic_seed_on("collector envs repeat one episode")
                findings.append(Finding(name, ERROR, f"{message}: {dropped}", hint))
            else:
                hint = (
                    "in reset(), seed the simulator with self._next_episode_seed(), which gives each episode a new "
                    "seed when dynamic_seed is True (not the seed given to seed() itself); and seed() must pass "
                    "dynamic_seed on: super().seed(seed, dynamic_seed) (ignore for deterministic envs)"
                )
                findings.append(Finding(name, WARNING, message, hint))
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


def dropped_dynamic_seed(ctx: CheckContext, dynamic: bool) -> str | None:
    """How the env's ``seed()`` dropped ``dynamic_seed``, when it shows; else None.

    ``BaseEnv.seed`` and DI-engine's envs keep the flag as ``_dynamic_seed``: a fresh env seeded with
    ``dynamic_seed=dynamic`` that keeps the other value ignored the argument (a constant passed on to
    ``super().seed``, say).
    """
    env = ctx.make_env()
    try:
        seed_env(env, ctx.seed, dynamic)
        kept = env.__dict__.get("_dynamic_seed")
    finally:
        env.close()
    if kept is None or bool(kept) == dynamic:
        return None
    where = source_of(type(env).seed)
    return (
        f"{type(env).__name__}.seed(){f' at {where}' if where else ''} dropped dynamic_seed={dynamic} "
        f"(it kept _dynamic_seed = {kept!r})"
    )


def pass_dynamic_seed_on(consequence: str) -> str:
    """The fix for a ``seed()`` that drops ``dynamic_seed``; ``consequence`` says what goes wrong meanwhile."""
    return (
        "in seed(self, seed, dynamic_seed=True), pass the argument on: super().seed(seed, dynamic_seed), not a "
        f"constant (the managers pass True to collector envs and False to evaluator envs; as it is, {consequence})"
    )


def check_global_rng(ctx: CheckContext) -> list[Finding]:
    """Seeding, resetting and stepping leave numpy's and Python's global RNG state untouched.

    The rollout starts from fresh global states drawn from entropy, so an env that seeds a global RNG
    with a constant is caught even when an earlier check left that very state; the caller's states
    are put back afterwards.
    """
    name = "check_global_rng"

    def body() -> list[Finding]:
        callers_states = np.random.get_state(), random.getstate()
        np.random.set_state(np.random.RandomState().get_state())
        random.setstate(random.Random().getstate())
        try:
            numpy_state, python_state = np.random.get_state(), random.getstate()
            env = ctx.make_env()
            rollout(env, ctx, ctx.seed, dynamic=True)
            env.random_action()
            env.close()
            after, python_after = np.random.get_state(), random.getstate()
        finally:
            np.random.set_state(callers_states[0])
            random.setstate(callers_states[1])
        touched = [
            name
            for name, same in (
                (
                    "numpy (np.random.seed / np.random.*)",
                    all(np.array_equal(x, y) for x, y in zip(numpy_state, after, strict=True)),
                ),
                ("Python (random.seed / random.*)", python_after == python_state),
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


def _flat(obs: object) -> np.ndarray:
    """An observation's arrays as one flat array to compare.

    An observation of no arrays (a list, which check_reset_obs reports) compares as an array of its own.
    """
    arrays = [np.ravel(leaf) for leaf in leaves(obs)]
    return np.concatenate(arrays) if arrays else np.ravel(np.asarray(obs, dtype=object))

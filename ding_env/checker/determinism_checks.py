"""Checks of determinism: seeds fix trajectories, in this process and in a worker process, without global RNGs."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ding_env.checker.report import ERROR, WARNING, Finding
from ding_env.checker.rollout import (
    CheckContext,
    Episode,
    flat_step,
    guard,
    raised,
    rollout,
    same,
    seed_env,
    source_of,
    trajectory,
)
from ding_env.env.ding_env_wrapper import DingEnvWrapper
from ding_env.env.seeding import global_rngs_kept
from ding_env.env.spaces import leaves

# DingEnvWrapper passes each episode's seed to the Gymnasium env's reset(seed=...): there is nothing to change in it.
WRAPPED_SAME_EPISODES_HINT = (
    "DingEnvWrapper gives the Gymnasium env a seed at each reset (reset(seed=...)): the env is deterministic "
    "(nothing to fix) or ignores the seed reset() gets"
)


def check_static_seed(ctx: CheckContext) -> list[Finding]:
    """Static seed: every reset gives the same start, and the same actions the same trajectory."""
    name = "check_static_seed"

    def body() -> list[Finding]:
        # Only resets after a game's end are compared: a reset after an episode cut at max_steps may go on
        # with it, and so does one after a life lost with lives left (Atari's episodic life).
        first, replay = _run_and_replay(ctx, dynamic=False)
        findings: list[Finding] = []
        after_ends = [episode for index, episode in enumerate(first) if index == 0 or _game_over(first[index - 1])]
        starts = [_flat(episode.reset_obs) for episode in after_ends]
        if not all(np.array_equal(starts[0], start) for start in starts[1:]):
            probe = probe_seed(ctx, dynamic=False, check=name)
            message = "with a static seed (dynamic_seed=False), resets gave different starting observations"
            consequence = "evaluator envs do not replay their episode"
            if probe.dropped and not probe.ignored:  # an error: no deterministic env gets here (same starts)
                findings.append(Finding(name, ERROR, f"{message}: {probe.dropped}", pass_dynamic_seed_on(consequence)))
            elif global_rngs := _resets_touch_global_rngs(ctx):
                # The usual cause in DI-engine's envs: a global RNG seeded once in seed(), drawn at each reset.
                hint = (
                    f"reset() draws from the global {' and '.join(global_rngs)} RNG, which goes on from one reset to "
                    "the next whatever the seed: draw from self.np_random, which each reset seeds with "
                    "self._next_episode_seed() (check_global_rng reports the global RNG use too)"
                )
                findings.append(Finding(name, ERROR, message, hint))
            elif probe.ignored:  # a seed() that sets nothing, and no global RNG to blame
                findings.append(Finding(name, ERROR, f"{message}: {probe.dropped}", call_super_seed(consequence)))
            else:
                hint = (
                    "in reset(), seed the simulator with self._next_episode_seed(), which replays the seed given to "
                    "seed() when dynamic_seed is False (not a seed of its own, and not only once in seed()); and "
                    "seed() must pass dynamic_seed on: super().seed(seed, dynamic_seed)"
                )
                findings.append(Finding(name, ERROR, message, hint))
            findings += probe.closing
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


def _resets_touch_global_rngs(ctx: CheckContext) -> list[str]:
    """The global RNGs an env's resets after a static ``seed`` draw from (or seed), ``seed`` itself left out."""
    env = ctx.make_env()
    try:
        seed_env(env, ctx.seed, dynamic=False)
        return global_rngs_touched(lambda: (env.reset(), env.reset()))
    except Exception:  # noqa: BLE001 - a hint only: the env's own errors are the other checks' to report
        return []
    finally:
        ctx.close(env)


def _game_over(episode: Episode) -> bool:
    """Whether the env's next reset starts anew: the episode ended, and not with lives left in its info."""
    if not episode.ended:
        return False
    info = episode.timesteps[-1].info
    lives = info.get("lives", 0) if isinstance(info, dict) else 0
    return not (isinstance(lives, (int, np.integer)) and lives > 0)


def check_dynamic_seed(outer: CheckContext) -> list[Finding]:
    """Dynamic seed: two instances with the same seed agree; episodes and seeds differ."""
    name = "check_dynamic_seed"

    def body() -> list[Finding]:
        # Enough episodes that random actions exercise the env's randomness.
        ctx = dataclasses.replace(outer, episodes=max(outer.episodes, 4))
        a, b = _run_and_replay(ctx, dynamic=True)
        # Every episode replays the longest action sequence: only the seeds can make them differ.
        longest = max((episode.actions for episode in a), key=len)
        env_c, env_d = ctx.make_env(), ctx.make_env()
        repeated = rollout(env_d, ctx, ctx.seed, dynamic=True, actions=[longest] * ctx.episodes)
        other_seed = rollout(env_c, ctx, ctx.seed + 1, dynamic=True, actions=[longest] * ctx.episodes)
        ctx.close(env_c)
        ctx.close(env_d)
        wrapped = isinstance(env_d, DingEnvWrapper)
        findings: list[Finding] = []
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
        episodes = {b"".join(leaf.tobytes() for step in trajectory([episode]) for leaf in step) for episode in repeated}
        seed_matters = not same(trajectory(repeated), trajectory(other_seed))
        if ctx.episodes > 1 and len(episodes) == 1:
            probe = probe_seed(ctx, dynamic=True, check=name)
            message = "with a dynamic seed (dynamic_seed=True) every episode was the same"
            fix = call_super_seed if probe.ignored else pass_dynamic_seed_on
            if probe.dropped and seed_matters:
                # Another seed gives other episodes, so the env has randomness: its collector envs would repeat one.
                hint = fix("collector envs repeat one episode")
                findings.append(Finding(name, ERROR, f"{message}: {probe.dropped}", hint))
            elif probe.dropped:
                # No seed changes anything (a deterministic env): its seed() may pass a constant, so only a
                # warning, which still names the seed() to fix should the env gain randomness.
                hint = fix("collector envs would repeat one episode if the env had randomness")
                findings.append(Finding(name, WARNING, f"{message}: {probe.dropped}", hint))
            elif wrapped:  # DingEnvWrapper seeds each reset itself: the Gymnasium env has nothing to vary
                findings.append(Finding(name, WARNING, message, WRAPPED_SAME_EPISODES_HINT))
            else:
                hint = (
                    "in reset(), seed the simulator with self._next_episode_seed(), which gives each episode a new "
                    "seed when dynamic_seed is True (not the seed given to seed() itself); and seed() must pass "
                    "dynamic_seed on: super().seed(seed, dynamic_seed) (ignore for deterministic envs)"
                )
                findings.append(Finding(name, WARNING, message, hint))
            findings += probe.closing
        if not seed_matters:
            findings.append(
                Finding(
                    name,
                    WARNING,
                    "seeds differing by one gave identical trajectories",
                    WRAPPED_SAME_EPISODES_HINT
                    if wrapped
                    else "pass the seed on to the simulator (ignore for deterministic envs)",
                )
            )
        return findings

    return guard(name, "seeded rollouts", body)


def _run_and_replay(ctx: CheckContext, dynamic: bool) -> tuple[list[Episode], list[Episode]]:
    """Episodes of seeded random actions, and the same seed and actions replayed in an env of its own.

    Args:
        ctx: The check's context (its seed, episodes and step cap).
        dynamic: The ``dynamic_seed`` both envs are seeded with.

    Returns:
        The first rollout's episodes and the replay's.
    """
    env, fresh = ctx.make_env(), ctx.make_env()
    first = rollout(env, ctx, ctx.seed, dynamic)
    replay = rollout(fresh, ctx, ctx.seed, dynamic, actions=[episode.actions for episode in first])
    ctx.close(env)
    ctx.close(fresh)
    return first, replay


class SeedProbe(NamedTuple):
    """What a fresh env's ``seed()`` kept (``probe_seed``).

    Attributes:
        dropped: How ``seed()`` dropped ``dynamic_seed`` or the whole call, naming it with its file and line
            (None: it kept the flag, or keeps it under a name of its own).
        ignored: ``seed()`` changed none of the env's attributes: it dropped the call, not only the flag.
        closing: An error finding when closing the probed env raised.
    """

    dropped: str | None
    ignored: bool
    closing: list[Finding]


def probe_seed(ctx: CheckContext, dynamic: bool, check: str) -> SeedProbe:
    """Seed a fresh env with ``dynamic_seed=dynamic`` and read back what its ``seed()`` kept.

    ``BaseEnv.seed`` and DI-engine's envs keep the flag as ``_dynamic_seed``: an env that keeps the other
    value ignored the argument (a constant passed on to ``super().seed``, say). A ``seed()`` that changed
    none of the env's attributes ignored the call (overridden without calling ``super().seed``; one that
    only seeds a global RNG is the global RNG check's to name).

    Args:
        ctx: The check's context.
        dynamic: The ``dynamic_seed`` to seed the probed env with.
        check: The calling check's name, for the finding of a failing ``close()``.
    """
    env = ctx.make_env()
    closing: list[Finding] = []
    try:
        before = dict(env.__dict__)
        seed_env(env, ctx.seed, dynamic)
        after = env.__dict__
        kept = after.get("_dynamic_seed")
        ignored = after.keys() == before.keys() and all(after[key] is value for key, value in before.items())
    finally:
        # The probed env is seeded and never reset: a close() that fails in that state is a finding of its
        # own, and must not hide what the probe found, nor the check's other findings, as a raise would.
        try:
            env.close()
        except Exception as error:  # noqa: BLE001 - whatever close() raises is the finding
            what = f"{type(env).__name__}.close() of an env seeded with dynamic_seed={dynamic} and never reset"
            closing.append(raised(check, what, error, CLOSE_UNRESET_HINT))
    where = source_of(type(env).seed)
    named = f"{type(env).__name__}.seed(){f' at {where}' if where else ''}"
    if ignored:
        message = (
            f"{named} kept neither the seed nor dynamic_seed={dynamic}: it set none of the env's attributes "
            "(BaseEnv.seed keeps both for reset())"
        )
        return SeedProbe(message, True, closing)
    if kept is None or bool(kept) == dynamic:
        return SeedProbe(None, False, closing)
    return SeedProbe(f"{named} dropped dynamic_seed={dynamic} (it kept _dynamic_seed = {kept!r})", False, closing)


CLOSE_UNRESET_HINT = (
    "close() must work on an env in any state, one seeded and never reset too: release only what reset() "
    "or seed() has built (check for None), as a manager whose launch fails closes its envs"
)


def pass_dynamic_seed_on(consequence: str) -> str:
    """The fix for a ``seed()`` that drops ``dynamic_seed``; ``consequence`` says what goes wrong meanwhile."""
    return (
        "in seed(self, seed, dynamic_seed=True), pass the argument on: super().seed(seed, dynamic_seed), not a "
        f"constant (the managers pass True to collector envs and False to evaluator envs; as it is, {consequence})"
    )


def call_super_seed(consequence: str) -> str:
    """The fix for a ``seed()`` that drops the whole call; ``consequence`` says what goes wrong meanwhile."""
    return (
        "in seed(self, seed, dynamic_seed=True), call super().seed(seed, dynamic_seed): BaseEnv.seed keeps both, "
        f"and reset() replays or varies its episodes by them through self._next_episode_seed() (as it is, "
        f"{consequence})"
    )


def check_global_rng(ctx: CheckContext) -> list[Finding]:
    """Seeding, resetting and stepping leave numpy's and Python's global RNG state untouched.

    The rollout starts from fresh global states drawn from entropy, so an env that seeds a global RNG
    with a constant is caught even when an earlier check left that very state; the caller's states
    are put back afterwards.
    """
    name = "check_global_rng"

    def body() -> list[Finding]:
        def run() -> None:
            env = ctx.make_env()
            rollout(env, ctx, ctx.seed, dynamic=True)
            env.random_action()
            ctx.close(env)

        return [
            Finding(
                name,
                ERROR,
                f"the env changed the global {what} RNG state",
                "use self.np_random or np.random.default_rng(seed) instead of the global RNG",
            )
            for what in global_rngs_touched(run)
        ]

    return guard(name, "seeded rollouts", body)


def global_rngs_touched(run: Callable[[], object]) -> list[str]:
    """The global RNGs (numpy's, Python's) whose state ``run()`` changed; the caller's states are put back.

    ``run`` starts from fresh global states drawn from entropy, so an env that seeds a global RNG with a
    constant is caught even when an earlier check left that very state.
    """
    with global_rngs_kept():
        np.random.set_state(np.random.RandomState().get_state())
        random.setstate(random.Random().getstate())
        numpy_state, python_state = np.random.get_state(), random.getstate()
        run()
        numpy_after, python_after = np.random.get_state(), random.getstate()
    numpy_same = all(np.array_equal(x, y) for x, y in zip(numpy_state, numpy_after, strict=True))
    return [
        what
        for what, same in (
            ("numpy (np.random.seed / np.random.*)", numpy_same),
            ("Python (random.seed / random.*)", python_after == python_state),
        )
        if not same
    ]


def check_subprocess(ctx: CheckContext) -> list[Finding]:
    """The env gives the same trajectory in ``SyncSubprocessEnvManager`` (shared memory) as in-process."""
    name = "check_subprocess"
    from ding_env.env_manager import BaseEnvManager
    from ding_env.env_manager.subprocess_env_manager import SyncSubprocessEnvManager

    def run(manager_cls: type) -> list[tuple[np.ndarray, ...]]:
        with manager_cls([ctx.make_env], {}) as manager:
            manager.seed(ctx.seed)
            manager.launch()
            space = manager.action_space
            space.seed(ctx.seed)
            trace = []
            for _ in range(min(ctx.max_steps, 200)):
                timestep = manager.step({0: space.sample()})[0]
                trace.append(flat_step(timestep.obs, timestep.reward))
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

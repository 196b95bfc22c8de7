"""The main job behind ``ding-env run``: collect with a policy, then evaluate, and report."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, TextIO

import gymnasium as gym
import numpy as np

from ding_env.collector import collect
from ding_env.config import is_count
from ding_env.errors import ConfigError, DingEnvError
from ding_env.evaluator import DEFAULT_MAX_EPISODE_STEPS, EpisodeStepLimitError, EvalResult, evaluate
from ding_env.ops import Op
from ding_env.policies import RandomPolicy
from ding_env.progress import progress_bar
from ding_env.registry import get_env_cls, import_object
from ding_env.run_config import build_managers
from ding_env.summary import counted, describe_value

# The progress line's mean return covers this many of the latest episodes.
RECENT_EPISODES = 100
# The env's time limit times this is the default bound on an evaluation episode: room for an env
# that counts its time limit its own way (frames, turns), while one that never ends an episode still fails fast.
EPISODE_LIMIT_MARGIN = 10
# The evaluation's step count is redrawn at most this often (seconds): a long episode shows it is running.
REDRAW_INTERVAL = 0.25
RANDOM_POLICY_NOTE = "random (uniform actions, no learning: --policy MODULE:CALLABLE runs yours)"


@dataclass
class RunSummary:
    """What a run measured."""

    exp_name: str
    manager: str
    collect_steps: int
    collect_seconds: float
    collect_episodes: int
    collect_returns: list[float]
    truncated_episodes: int
    evaluation: EvalResult
    stop_value: float | None
    policy: str = "random"
    steps_asked: int | None = None  # fewer were collected when every collector env ran its episode_num episodes

    @property
    def steps_per_second(self) -> float:
        """Collector throughput."""
        return self.collect_steps / max(self.collect_seconds, 1e-9)


def import_policy(spec: str) -> Callable[[Any], Any]:
    """The policy ``'module:callable'`` names: a callable from a batch of observations to a batch of actions.

    Raises:
        RegistryError: The module or the name cannot be found.
        ConfigError: What the name holds is not callable.
    """
    policy = import_object(spec)
    if not callable(policy):
        raise ConfigError(
            f"--policy {spec!r} is {describe_value(policy)}, not callable: name a function (or an object with "
            "__call__) that maps a batch of observations to a batch of actions"
        )
    return policy


def default_eval_max_steps(cfg: Any) -> int:
    """The default bound on an evaluation episode's steps for a validated run config.

    ``EPISODE_LIMIT_MARGIN`` times the env's own time limit, when one is known (``section_time_limit``),
    else ``DEFAULT_MAX_EPISODE_STEPS``.
    """
    limit = section_time_limit(cfg.env)
    return DEFAULT_MAX_EPISODE_STEPS if limit is None else EPISODE_LIMIT_MARGIN * limit


def section_time_limit(env: Any) -> int | None:
    """The time limit of the env an env section builds, when the section says it or Gymnasium registers it.

    The section's ``max_episode_steps`` (a DI-engine env's, the class config's default merged in), its
    ``make_kwargs``' (``gym.make``'s), or the Gymnasium registration of its ``env_id`` (the section's, or its
    type's: a built-in type such as ``cartpole`` fixes one); None when none of them gives one.
    """
    for limit in (env.get("max_episode_steps"), (env.get("make_kwargs") or {}).get("max_episode_steps")):
        if is_count(limit):
            return limit
    env_id = env.get("env_id")
    if env_id is None and "type" in env:
        env_id = (getattr(get_env_cls(env), "config", None) or {}).get("env_id")
    if not isinstance(env_id, str):
        return None
    try:
        limit = gym.spec(env_id).max_episode_steps
    except gym.error.Error:  # an id Gymnasium does not register (legacy gym's, ALE's before ale_py is imported)
        return None
    return int(limit) if is_count(limit) else None


def run_job(
    cfg: Any,
    policy_spec: str = "random",
    steps: int = 20000,
    eval_episodes: int | None = None,
    manager_type: str | None = None,
    replay_dir: str | None = None,
    progress: TextIO | None = None,
    eval_max_steps: int | None = None,
) -> RunSummary:
    """Collect exactly ``steps`` env steps with the policy, then evaluate it; return the summary.

    Args:
        cfg: A validated run config.
        policy_spec: ``'random'`` or ``'module:callable'`` (see :func:`import_policy`).
        steps: Env steps to collect. A lockstep batch env (a Gymnasium vector env from ``env.batch``) steps
            every sub-env each time, so the collection may end up to one batch past it; the summary's
            ``collect_steps`` is the true count.
        eval_episodes: Evaluation episodes (None: the config's ``env.n_evaluator_episode``).
        manager_type: Overrides the config's ``env.manager.type``.
        replay_dir: Where the evaluator envs record replays (None: the config's ``env.replay_path``,
            which may be None: no replays).
        progress: Where progress goes (None: no progress output).
        eval_max_steps: Steps an evaluation episode may take (None: :func:`default_eval_max_steps`).

    Raises:
        EpisodeStepLimitError: When an evaluation episode reaches ``eval_max_steps`` without ending.
        RegistryError, ConfigError: When ``policy_spec`` names nothing callable (before any env is built).
        ValueError: For ``steps``, ``eval_episodes`` or ``eval_max_steps`` not an int >= 1 (before any env is built).
    """
    for name, value, optional in (
        ("steps", steps, False),
        ("eval_episodes", eval_episodes, True),
        ("eval_max_steps", eval_max_steps, True),
    ):
        if not (optional and value is None) and not is_count(value):
            default = " (None: the default)" if optional else ""
            raise ValueError(f"run_job: {name} must be an int >= 1{default}, got {value!r}")
    own_policy = None if policy_spec == "random" else import_policy(policy_spec)  # a bad name before any env is built
    collector, evaluator = build_managers(cfg, manager_type)
    with collector, evaluator:
        replay_source = "--replay" if replay_dir is not None else "the config's env.replay_path"
        if replay_dir is None:
            replay_dir = cfg.env.get("replay_path")
        recording = partial(_recording_note, replay_dir, replay_source)  # a note on the evaluator's env errors
        if replay_dir is not None:
            # Before launch: the envs are built for recording then, so a missing renderer fails before collecting.
            with recording():
                evaluator.enable_save_replay(str(replay_dir))
        collector.launch()
        with recording():
            evaluator.launch()
        policy = RandomPolicy(collector.action_space, cfg.seed) if own_policy is None else own_policy
        # The random policy's per-env action streams go on from where collection left them, and how far each env's
        # went depends on the steps asked for and, in an async manager, on timing: the evaluation starts its own.
        eval_policy = RandomPolicy(evaluator.action_space, cfg.seed) if own_policy is None else own_policy
        returns: list[float] = []
        truncated = 0
        done_steps = 0
        n_episode = cfg.env.n_evaluator_episode if eval_episodes is None else eval_episodes
        max_episode_steps = default_eval_max_steps(cfg) if eval_max_steps is None else eval_max_steps
        # batch=N envs (a Gymnasium vector env, EnvPool) replay a static seed only when all their sub-envs
        # reset together, which an evaluator's episodes of different lengths never do.
        batched = cfg.env.get("batch") is not None
        if progress is not None:
            seeding = " (each episode seeded anew from the run's seed: batch envs)" if batched else ""
            progress.write(
                f"collecting {counted(steps, 'step')}, then evaluating {counted(n_episode, 'episode')}{seeding}\n"
            )
            if replay_dir is not None:  # where the videos go, or they are found only by looking
                progress.write(
                    f"the evaluator records its episodes as videos in {str(replay_dir)!r} ({replay_source})\n"
                )
            progress.flush()
        start = time.perf_counter()
        with progress_bar(steps, progress, "collect", "step") as bar:
            for batch in collect(collector, policy, steps):
                done_steps += len(batch.env_id)
                for info in (info for info, done in zip(batch.info, batch.done, strict=True) if done):
                    if "eval_episode_return" in info:  # not an abnormal step's (step_error='abnormal'): no return
                        returns.append(float(info["eval_episode_return"]))
                truncated += int(batch.truncated.sum())
                bar.update(len(batch.env_id))
                if returns:
                    bar.set_postfix_str(f"return {np.mean(returns[-RECENT_EPISODES:]):.1f}", refresh=False)
        elapsed = time.perf_counter() - start
        with progress_bar(n_episode, progress, "eval   ", "ep") as bar, recording(), _bound_note():
            counter = _StepCounter(bar)
            result = evaluate(
                evaluator,
                eval_policy,
                n_episode,
                cfg.env.stop_value,
                seed=cfg.seed,
                on_episode=lambda _: bar.update(),
                dynamic_seed=batched,
                max_episode_steps=max_episode_steps,
                on_step=counter,
            )
            counter.show_last()
        return RunSummary(
            cfg.exp_name,
            type(collector).__name__,
            done_steps,
            elapsed,
            len(returns),
            returns,
            truncated,
            result,
            cfg.env.stop_value,
            policy_spec,
            steps,
        )


@contextmanager
def _recording_note(replay_dir: Any, source: str) -> Iterator[None]:
    """Notes on an env error of the evaluator that the replays it records were asked for, and how to run without."""
    try:
        yield
    except DingEnvError as error:
        # Recording starts with an episode: an env that fails to record fails to launch or reset.
        if replay_dir is not None and getattr(error, "op", None) in (Op.LAUNCH, Op.RESET):
            without = "without --replay" if source == "--replay" else "with --set env.replay_path=none"
            error.add_note(
                f"the evaluator's envs record replays to {str(replay_dir)!r}, as {source} asks; {without} they do not"
            )
        raise


class _StepCounter:
    """Shows the evaluation's env steps beside its episodes, redrawn at most every ``REDRAW_INTERVAL`` s.

    ``show_last()`` draws the count the last call gave: the bar's last line would otherwise keep the count of
    its last redraw (the first step's, for an evaluation shorter than the interval).
    """

    def __init__(self, bar: Any) -> None:
        self.bar, self.steps, self.last_drawn = bar, 0, -REDRAW_INTERVAL

    def __call__(self, steps: int) -> None:
        self.steps = steps
        now = time.monotonic()
        # The bar redraws only when an episode ends; an env with long episodes would look stuck without this.
        if now - self.last_drawn >= REDRAW_INTERVAL:
            self.last_drawn = now
            self.bar.set_postfix_str(f"{steps} steps")

    def show_last(self) -> None:
        self.bar.set_postfix_str(f"{self.steps} steps")


@contextmanager
def _bound_note() -> Iterator[None]:
    """Notes on an evaluation episode that reached the bound how to change the bound from the command line."""
    try:
        yield
    except EpisodeStepLimitError as error:
        error.add_note(
            f"ding-env run --eval-max-steps N sets the bound (default: {EPISODE_LIMIT_MARGIN} x the env's time "
            f"limit: the env section's max_episode_steps, its make_kwargs' or its Gymnasium id's; else "
            f"{DEFAULT_MAX_EPISODE_STEPS})"
        )
        raise


def _collect_steps(summary: RunSummary) -> str:
    """The steps collected, and why they are fewer than asked when they are."""
    if summary.steps_asked is None or summary.collect_steps >= summary.steps_asked:
        return f"{summary.collect_steps}"
    ended = "every collector env ran its env.manager.episode_num episodes"
    return f"{summary.collect_steps} of {summary.steps_asked} ({ended})"


def format_summary(summary: RunSummary) -> str:
    """The summary table printed at the end of ``ding-env run``."""
    evaluation = summary.evaluation
    collect_mean = f"{np.mean(summary.collect_returns):.2f}" if summary.collect_returns else "n/a"
    if summary.stop_value is None:
        reached = "no stop value"
    elif summary.policy == "random" and not evaluation.stop_reached:
        # Not a failure: random actions are the baseline a learner's returns are read against.
        reached = f"no (stop value {summary.stop_value}; a random policy is not expected to reach it)"
    else:
        reached = f"{'yes' if evaluation.stop_reached else 'no'} (stop value {summary.stop_value})"
    policy = RANDOM_POLICY_NOTE if summary.policy == "random" else summary.policy
    rows = [
        ("run", summary.exp_name),
        ("policy", policy),
        ("manager", summary.manager),
        ("collect steps", _collect_steps(summary)),
        ("collect throughput", f"{summary.steps_per_second:,.0f} steps/s"),
        ("collect episodes", f"{summary.collect_episodes} ({summary.truncated_episodes} truncated)"),
        ("collect mean return", collect_mean),
        ("eval episodes", f"{len(evaluation.returns)}"),
        ("eval return", f"{evaluation.mean:.2f} +- {evaluation.std:.2f}"),
        ("stop value reached", reached),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)

"""The ``ding-env`` command line.

Usage::

    ding-env run CONFIG [--policy random|MODULE:CALLABLE] [--steps N] [--eval-episodes N]
                        [--manager base|subprocess|async_subprocess] [--seed S] [--replay DIR]
                        [--set key.sub=value ...]
    ding-env check TARGET [--config FILE] [--episodes N] [--max-steps N] [--seed S] [--json]
    ding-env list
    ding-env demo [--episodes N] [--envs N] [--manager ...] [--seed S]

Exit codes: 0 success (``check``: no errors), 1 the run failed (``check``: errors found),
2 usage or config error, 130 interrupted (Ctrl-C; envs and workers are closed first).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from ding_env.registry import ENV_REGISTRY

USAGE_ERROR = 2
INTERRUPTED = 130  # the shell's code for a process ended by SIGINT


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return USAGE_ERROR
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        # The managers' context managers have closed every env and worker on the way out.
        print(f"\nding-env {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ding-env", description="DI-engine-style RL envs and env managers.")
    commands = parser.add_subparsers(dest="command")

    run = commands.add_parser("run", help="collect with a policy, then evaluate, from a config file")
    run.add_argument("config", help="config file (main_config/create_config or a single config dict)")
    run.add_argument("--policy", default="random", help="'random' or MODULE:CALLABLE mapping obs batches to actions")
    run.add_argument("--steps", type=int, default=20000, help="env steps to collect (default 20000)")
    run.add_argument("--eval-episodes", type=int, default=None, help="evaluation episodes (default: the config's)")
    run.add_argument("--manager", choices=("base", "subprocess", "async_subprocess"), default=None)
    run.add_argument("--seed", type=int, default=None, help="override the config's seed")
    run.add_argument(
        "--replay", default=None, metavar="DIR", help="save evaluation replays under DIR (default: env.replay_path)"
    )
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    run.set_defaults(handler=_run)

    check = commands.add_parser("check", help="check an env against the BaseEnv contract")
    check.add_argument("target", help="module:Class, a registered env type, or a config file")
    check.add_argument("--config", default=None, help="config file whose env section configures the env")
    check.add_argument("--episodes", type=int, default=3, help="episodes per rollout (default 3)")
    check.add_argument("--max-steps", type=int, default=1000, help="step cap per episode (default 1000)")
    check.add_argument("--seed", type=int, default=0)
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(handler=_check)

    list_cmd = commands.add_parser("list", help="list registered env types and where they live")
    list_cmd.set_defaults(handler=_list)

    demo = commands.add_parser("demo", help="run random episodes of every registered env through a manager")
    demo.add_argument(
        "--episodes",
        type=int,
        default=3,
        help="episodes per env type, at least: envs that end an episode in the same step all count (default 3)",
    )
    demo.add_argument("--envs", type=int, default=4, help="envs per manager (default 4)")
    demo.add_argument("--manager", default="base", choices=("base", "subprocess", "async_subprocess"))
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(handler=_demo)
    return parser


def _run(args: argparse.Namespace) -> int:
    from ding_env.errors import ConfigError, RegistryError
    from ding_env.run import format_summary, run_job
    from ding_env.run_config import load_run_config

    overrides = list(args.set) + ([f"seed={args.seed}"] if args.seed is not None else [])
    try:
        if args.steps < 1 or (args.eval_episodes is not None and args.eval_episodes < 1):
            raise ConfigError("--steps and --eval-episodes must be >= 1")
        cfg = load_run_config(args.config, overrides)
    except (ConfigError, RegistryError) as error:
        print(f"ding-env run: {error}", file=sys.stderr)
        return USAGE_ERROR
    print(f"ding-env run {args.config}: env type {cfg.env.type!r}, seed {cfg.seed}", file=sys.stderr)
    try:
        summary = run_job(cfg, args.policy, args.steps, args.eval_episodes, args.manager, args.replay, sys.stderr)
    except (ConfigError, RegistryError, NotImplementedError) as error:
        print(f"ding-env run: {error}", file=sys.stderr)
        return USAGE_ERROR
    except Exception as error:  # noqa: BLE001 - the CLI reports any failure as exit 1 with its message
        # The first line names the env and the command; the remote traceback follows in the exception.
        print(f"ding-env run failed: {type(error).__name__}: {str(error).splitlines()[0]}", file=sys.stderr)
        return 1
    print(format_summary(summary))
    return 0


def _check(args: argparse.Namespace) -> int:
    import json

    from ding_env.checker import check_env
    from ding_env.checker.target import resolve_target
    from ding_env.errors import ConfigError, RegistryError

    if args.episodes < 1 or args.max_steps < 1:
        print("ding-env check: --episodes and --max-steps must be >= 1", file=sys.stderr)
        return USAGE_ERROR
    try:
        env_cls, cfg = resolve_target(args.target, args.config)
    except (ConfigError, RegistryError) as error:
        print(f"ding-env check: {error}", file=sys.stderr)
        return USAGE_ERROR

    def progress(name: str) -> None:
        if not args.json:
            print(f"  running {name} ...", file=sys.stderr, flush=True)

    report = check_env(
        env_cls, cfg, episodes=args.episodes, max_steps=args.max_steps, seed=args.seed, progress=progress
    )
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.format())
    return 0 if report.passed else 1


def _list(args: argparse.Namespace) -> int:
    names = ENV_REGISTRY.names()
    width = max((len(name) for name in names), default=4)
    print(f"{'type':<{width}}  module")
    for name in names:
        print(f"{name:<{width}}  {ENV_REGISTRY.source(name)}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from ding_env.demo import run_demo

    if args.episodes < 1 or args.envs < 1:
        print("ding-env demo: --episodes and --envs must be >= 1", file=sys.stderr)
        return USAGE_ERROR
    start = time.perf_counter()
    rows = run_demo(ENV_REGISTRY.names(), args.episodes, args.envs, args.manager, args.seed, progress=print)
    header = f"{'env type':<14} {'episodes':>8} {'steps':>8} {'mean return':>12} {'truncated':>9} {'steps/s':>9}"
    print()
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row.env_type:<14} {row.episodes:>8} {row.steps:>8} {row.mean_return:>12.2f} "
            f"{row.truncated:>9} {row.steps_per_second:>9.0f}"
        )
    print(f"\n{len(rows)} env types, {args.manager} manager, {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

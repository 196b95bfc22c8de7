"""The ``ding-env`` command line: ``list`` env types and run a ``demo``.

Usage::

    ding-env list
    ding-env demo [--episodes N] [--manager base|subprocess|async_subprocess] [--seed S]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from ding_env.registry import ENV_REGISTRY

USAGE_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return USAGE_ERROR
    return args.handler(args)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ding-env", description="DI-engine-style RL envs and env managers.")
    commands = parser.add_subparsers(dest="command")

    list_cmd = commands.add_parser("list", help="list registered env types and where they live")
    list_cmd.set_defaults(handler=_list)

    demo = commands.add_parser("demo", help="run random episodes of every registered env through a manager")
    demo.add_argument("--episodes", type=int, default=3, help="episodes per env type (default 3)")
    demo.add_argument("--envs", type=int, default=4, help="envs per manager (default 4)")
    demo.add_argument("--manager", default="base", choices=("base", "subprocess", "async_subprocess"))
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(handler=_demo)
    return parser


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

"""The ``ding-env`` command line.

Usage::

    ding-env [--version] [--verbose] COMMAND ...
    ding-env run CONFIG [--policy random|MODULE:CALLABLE] [--steps N] [--eval-episodes N] [--eval-max-steps N]
                        [--manager base|subprocess|async_subprocess|base_v2|subprocess_v2|remote|...]
                        [--seed S] [--replay DIR]
                        [--set key.sub=value ...]
    ding-env check TARGET [--config FILE] [--di-engine] [--episodes N] [--max-steps N] [--seed S] [--json]
    ding-env serve TARGET [--config FILE] [--envs N] [--workers N] [--bind ENDPOINT] [--keys DIR]
                          [--insecure] [--max-message-mb M] [--lease-timeout S]
    ding-env keygen DIR [--force]
    ding-env port SRC (--out DST | --in-place) [--fix] [--try] [--steps N] [--quiet]
    ding-env list [--import MODULE ...]
    ding-env demo [TYPE ...] [--import MODULE ...] [--episodes N] [--max-steps N] [--envs N] [--manager ...]
                  [--seed S]

The current directory is on ``sys.path``, as for ``python -m ding_env``, so ``coin:Coin`` and a
config's ``import_names`` find modules next to the user.

Exit codes: 0 success (``check``: no errors), 1 the run failed (``check``: errors found),
2 usage or config error, 130 interrupted (Ctrl-C; envs and workers are closed first), 141 the reader of
the output closed it (``ding-env list | head``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from ding_env.cli import commands as handlers
from ding_env.cli.commands import BROKEN_PIPE, INTERRUPTED, USAGE_ERROR
from ding_env.demo import DEFAULT_MAX_STEPS
from ding_env.user_warnings import entry_point_warnings_unlocated
from ding_env.version import __version__

# Every manager type runs `ding-env run` (the V2 ones, which return treetensor timesteps to DI-engine's task
# pipelines, through the batched API they share); `demo` steps through the dict API, which the V2 ones change.
DEMO_MANAGERS = ("base", "subprocess", "async_subprocess")
# env_pool is taken so that run refuses it saying how to run EnvPool (as batch envs), not as an unknown choice.
RUN_MANAGERS = (
    *DEMO_MANAGERS,
    "base_v2",
    "subprocess_v2",
    "remote",
    "async_remote",
    "ray",
    "async_ray",
    "gym_vector",
    "env_pool",
)
MANAGER_HELP = (
    "base: envs in this process; subprocess: shared-memory workers, every env each step; "
    "async_subprocess: workers, returns as soon as wait_num envs are ready"
)
RUN_MANAGER_HELP = MANAGER_HELP + (
    "; base_v2 / subprocess_v2: DI-engine's V2 managers over base / subprocess; "
    "remote / async_remote: envs on `ding-env serve` servers (set env.manager.servers and "
    "env.evaluator_manager.servers); ray / async_ray: envs on Ray actors, a local Ray instance or a cluster "
    "(env.manager.address, num_hosts); gym_vector: DI-engine's GymVectorEnvManager (Gymnasium's AsyncVectorEnv); "
    "env_pool: refused, saying how to run EnvPool pools as batch envs"
)
COMMON_EXAMPLES = """examples:
  ding-env run configs/cartpole.py --steps 5000 --manager subprocess
  ding-env check my_env:MyEnv
  ding-env list
  ding-env --verbose run my_config.py   # full tracebacks on failure
"""
RUN_EXAMPLES = """examples:
  ding-env run configs/cartpole.py
  ding-env run configs/pong.py --steps 2000 --manager async_subprocess --set env.collector_env_num=4
  ding-env run my_config.py --policy my_policy:act --set env.manager.shared_memory=false --seed 1
"""
CHECK_EXAMPLES = """examples:
  ding-env check my_env:MyEnv                   # a BaseEnv subclass next to you (my_env.py)
  ding-env check my_env:MyEnv --config my_config.py
  ding-env check cartpole                       # a registered env type
  ding-env check gym:CartPole-v1                # a Gymnasium id in DingEnvWrapper
  ding-env check my_wrapper_config.py           # env section with env_id: DingEnvWrapper
  ding-env check ported.cartpole_env:CartPoleEnv --di-engine   # an env written for DI-engine
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if os.getcwd() not in sys.path and "" not in sys.path:
        # The `ding-env` script's sys.path starts at its bin folder; `python -m` starts at the current directory.
        sys.path.insert(0, os.getcwd())
    if args.command is None:
        parser.print_help()
        return USAGE_ERROR
    try:
        with entry_point_warnings_unlocated():
            code = args.handler(args)
        sys.stdout.flush()  # here, so a reader that stopped reading is seen below and not at exit
        return code
    except BrokenPipeError:
        # `ding-env list | head`: the reader closed the pipe. Exit as a command killed by SIGPIPE does,
        # without a traceback, and with stdout pointed away so the interpreter's last flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE
    except KeyboardInterrupt:
        # The managers' context managers have closed every env and worker on the way out.
        print(f"\nding-env {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED


SERVE_EXAMPLES = """examples:
  ding-env serve gym:CartPole-v1 --envs 4                # tcp://127.0.0.1:5555
  ding-env serve my_env:MyEnv --envs 8 --bind tcp://127.0.0.1:6000
  ding-env serve configs/pong.py --envs 4 --workers 4 --bind 'tcp://127.0.0.1:*'   # a free port

  ding-env keygen keys/ && ding-env serve gym:CartPole-v1 --envs 4 --keys keys/ --bind tcp://0.0.0.0:5555

Without --keys the server has no authentication and no encryption: it binds loopback only unless
--insecure is given; reach it through an SSH tunnel (ssh -L 5555:127.0.0.1:5555 HOST). With --keys
(from `ding-env keygen`) connections are encrypted and only clients holding an admitted key get answers.
"""


def _add_command(commands: Any, name: str, summary: str, epilog: str, description: str | None = None) -> Any:
    return commands.add_parser(
        name,
        help=summary,
        description=description or summary,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _add_target_arguments(command: argparse.ArgumentParser) -> None:
    """The env a command works on, as ``checker.target.resolve_target`` reads it."""
    command.add_argument(
        "target",
        help="module:Class, a registered env type, a Gymnasium env id (CartPole-v1 or gym:ID), or a config file",
    )
    command.add_argument("--config", default=None, help="config file whose env section configures the env")
    _add_import_argument(command, "TARGETs")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ding-env",
        description="DI-engine-style RL envs and env managers.",
        epilog=COMMON_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ding-env {__version__}")
    parser.add_argument(
        "--verbose", action="store_true", help="on failure, print the full traceback (the env's own one too)"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = _add_command(
        commands,
        "run",
        "collect with a policy, then evaluate, from a config file",
        RUN_EXAMPLES,
        "Collect with a policy in the collector envs, then evaluate in the evaluator envs.",
    )
    run.add_argument(
        "config",
        help="config file (main_config/create_config or a single config dict), or a registered env type "
        "(cartpole) or Gymnasium env id (CartPole-v1) with the defaults",
    )
    run.add_argument("--policy", default="random", help="'random' or MODULE:CALLABLE mapping obs batches to actions")
    run.add_argument(
        "--steps",
        type=int,
        default=20000,
        help="env steps to collect, exactly (default 20000); a Gymnasium vector env (env.batch, batch_source "
        "gym_vector) steps all its sub-envs at once, so with it the last step may pass N by up to one batch, and "
        "the summary says how many ran",
    )
    run.add_argument("--eval-episodes", type=int, default=None, help="evaluation episodes (default: the config's)")
    run.add_argument(
        "--eval-max-steps",
        type=int,
        default=None,
        metavar="N",
        help="steps an evaluation episode may take: an episode still running after N steps fails the run, "
        "naming the env (default: 10 x the env's time limit: the env section's max_episode_steps, its make_kwargs' "
        "or its Gymnasium id's; else 100000)",
    )
    run.add_argument(
        "--manager", choices=RUN_MANAGERS, default=None, help=RUN_MANAGER_HELP + " (default: the config's)"
    )
    run.add_argument("--seed", type=int, default=None, help="override the config's seed")
    run.add_argument(
        "--replay", default=None, metavar="DIR", help="save evaluation replays under DIR (default: env.replay_path)"
    )
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key; repeat for more (values are Python literals; true/false are booleans, "
        "none is None)",
    )
    run.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS, help="full tracebacks on failure")
    run.set_defaults(handler=handlers.run)

    check = _add_command(
        commands,
        "check",
        "check an env against the BaseEnv contract",
        CHECK_EXAMPLES,
        "Run the checks on an env and print one line per check, with a fix for each failure.",
    )
    _add_target_arguments(check)
    check.add_argument(
        "--di-engine",
        action="store_true",
        help="DI-engine mode: build a cfg-requiring env from its default_config() and report what DI-engine's "
        "envs do and the managers accept (gym spaces, spaces after reset, (1,) random actions) as warnings",
    )
    check.add_argument("--episodes", type=int, default=3, help="episodes per rollout (default 3)")
    check.add_argument("--max-steps", type=int, default=1000, help="step cap per episode (default 1000)")
    check.add_argument("--seed", type=int, default=0, help="base seed of the checks' rollouts (default 0)")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(handler=handlers.check)

    serve = _add_command(
        commands,
        "serve",
        "host envs and serve them to a remote manager over ZeroMQ",
        SERVE_EXAMPLES,
        "Host N envs (in the server process, or in --workers processes) and answer one client's requests for "
        "them until Ctrl-C.",
    )
    _add_target_arguments(serve)
    serve.add_argument("--envs", type=int, default=1, help="envs to host (default 1)")
    serve.add_argument(
        "--workers",
        type=int,
        default=0,
        help="worker processes hosting the envs (default 0: the envs run in the server process, the faster "
        "choice in docs/remote.md's measurements); N: crash isolation, step and reset timeouts enforced, "
        "heavy envs stepped in parallel",
    )
    serve.add_argument(
        "--evaluator",
        action="store_true",
        help="host evaluator envs: each env's config from its class's create_evaluator_env_cfg (is_train=False: "
        "the evaluation preprocessing); default: collector envs, as ding-env run's collector builds them",
    )
    serve.add_argument("--bind", default=None, help="ZeroMQ endpoint to listen on (default tcp://127.0.0.1:5555)")
    serve.add_argument(
        "--keys",
        default=None,
        metavar="DIR",
        help="CurveZMQ keys from `ding-env keygen`: server.key_secret and the admitted clients' *.key",
    )
    serve.add_argument(
        "--insecure",
        action="store_true",
        help="allow an endpoint other machines can reach without --keys (no authentication: private networks only)",
    )
    serve.add_argument(
        "--max-message-mb", type=float, default=256.0, help="larger requests drop their connection (default 256)"
    )
    serve.add_argument(
        "--lease-timeout",
        type=float,
        default=10.0,
        help="seconds of silence after which the client loses its envs to a new one (default 10)",
    )
    serve.set_defaults(handler=handlers.serve)

    from ding_env.porting.command import PORT_EXAMPLES, SUMMARY, add_port_arguments

    port = _add_command(commands, "port", SUMMARY, PORT_EXAMPLES)
    add_port_arguments(port)
    port.set_defaults(handler=handlers.port)

    keygen = _add_command(
        commands,
        "keygen",
        "write a server and a client CurveZMQ key pair for `ding-env serve --keys`",
        "example:\n  ding-env keygen keys/   # the server needs server.key_secret and client.key;"
        " the client needs client.key_secret and server.key",
    )
    keygen.add_argument("folder", help="where to write server.key, server.key_secret, client.key, client.key_secret")
    keygen.add_argument(
        "--force",
        action="store_true",
        help="replace the keys already in the folder (servers and clients holding the old keys are locked out)",
    )
    keygen.set_defaults(handler=handlers.keygen)

    list_cmd = _add_command(
        commands,
        "list",
        "list registered env types, where they live and whether their extras are installed",
        "example:\n  ding-env list --import my_pkg.envs   # also the types my_pkg.envs registers",
    )
    _add_import_argument(list_cmd, "listed")
    list_cmd.set_defaults(handler=handlers.list_types)

    demo = _add_command(
        commands,
        "demo",
        "run random episodes of every registered env through a manager",
        "examples:\n  ding-env demo --manager subprocess --episodes 2\n"
        "  ding-env demo --import my_pkg.envs my_env   # only my_env, a type my_pkg.envs registers",
    )
    demo.add_argument("types", nargs="*", metavar="TYPE", help="env types to run (default: every registered one)")
    _add_import_argument(demo, "run")
    demo.add_argument(
        "--episodes",
        type=int,
        default=3,
        help="episodes per env type, at least: envs that end an episode in the same step all count (default 3)",
    )
    demo.add_argument(
        "--max-steps",
        type=int,
        default=DEFAULT_MAX_STEPS,
        help=f"env steps per type; a type whose episodes have not ended by then is cut (default {DEFAULT_MAX_STEPS})",
    )
    demo.add_argument("--envs", type=int, default=4, help="envs per manager (default 4)")
    demo.add_argument("--manager", default="base", choices=DEMO_MANAGERS, help=MANAGER_HELP + " (default base)")
    demo.add_argument(
        "--seed", type=int, default=0, help="the envs' seed, which their random actions follow too (default 0)"
    )
    demo.set_defaults(handler=handlers.demo)
    return parser


def _add_import_argument(command: argparse.ArgumentParser, verb: str) -> None:
    command.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help=f"import MODULE first, so the types it registers are {verb} too; repeat for more",
    )


if __name__ == "__main__":
    sys.exit(main())

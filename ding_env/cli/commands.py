"""The ``ding-env`` commands: what each subcommand does once its arguments are parsed."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

from ding_env.registry import ENV_REGISTRY

USAGE_ERROR = 2
INTERRUPTED = 130  # the shell's code for a process ended by SIGINT
BROKEN_PIPE = 141  # the shell's code for a process ended by SIGPIPE


_BOUNDS = {">= 1": lambda value: value >= 1, ">= 0": lambda value: value >= 0, "> 0": lambda value: value > 0}


def flag_problem(*checks: tuple[str, float | None, str]) -> str | None:
    """The usage error of the first count flag whose value breaks its bound, for every command to print alike.

    Args:
        *checks: ``(flag, value, bound)`` triples, such as ``('--steps', args.steps, '>= 1')``. A bound is
            ``'>= 1'``, ``'>= 0'`` or ``'> 0'``; a None value (an optional flag not given) keeps any bound.

    Returns:
        The first broken bound as ``'--steps must be >= 1, got 0'`` (the flag, what it expects, what arrived),
        or None when every value keeps its bound.
    """
    for flag, value, bound in checks:
        if value is not None and not _BOUNDS[bound](value):
            return f"{flag} must be {bound}, got {value}"
    return None


def run(args: argparse.Namespace) -> int:
    """`ding-env run`: a config's collector and evaluator with a policy; prints the summary."""
    from ding_env.errors import ConfigError, RegistryError
    from ding_env.run import format_summary, run_job
    from ding_env.run_config import describe_env_section, load_run_config, unused_sections

    overrides = list(args.set) + ([f"seed={args.seed}"] if args.seed is not None else [])
    try:
        problem = flag_problem(
            ("--steps", args.steps, ">= 1"),
            ("--eval-episodes", args.eval_episodes, ">= 1"),
            ("--eval-max-steps", args.eval_max_steps, ">= 1"),
        )
        if problem:
            raise ConfigError(problem)
        cfg = load_run_config(args.config, overrides)
    except (ConfigError, RegistryError) as error:
        print(f"ding-env run: {error}", file=sys.stderr)
        return USAGE_ERROR
    print(f"ding-env run {args.config}: env {describe_env_section(cfg.env)}, seed {cfg.seed}", file=sys.stderr)
    if unused_sections(cfg):
        print(
            f"ding-env run: not used here: {', '.join(unused_sections(cfg))} (ding-env run reads exp_name, seed and "
            "env; the policy steps the envs as --policy says)",
            file=sys.stderr,
        )
    try:
        with ended_by_signals():  # a hangup or a kill ends the run as Ctrl-C does: every env and worker closed
            summary = run_job(
                cfg,
                args.policy,
                args.steps,
                args.eval_episodes,
                args.manager,
                args.replay,
                sys.stderr,
                args.eval_max_steps,
            )
    except Terminated as ended:
        print(f"ding-env run: stopped by {ended.name}; every env closed", file=sys.stderr)
        return 128 + ended.signum
    except (ConfigError, RegistryError, NotImplementedError) as error:
        print(f"ding-env run: {error}", file=sys.stderr)
        return USAGE_ERROR
    except Exception as error:  # noqa: BLE001 - the CLI reports any failure as exit 1 with its message
        print(describe_failure("run", error, args.verbose), file=sys.stderr)
        return 1
    print(format_summary(summary))
    return 0


def check(args: argparse.Namespace) -> int:
    """`ding-env check`: the implementation checks on an env type, class or config; prints the report."""
    import json

    from ding_env.checker import CHECKS, check_env
    from ding_env.checker.target import resolve_target
    from ding_env.errors import ConfigError, RegistryError

    problem = flag_problem(
        ("--episodes", args.episodes, ">= 1"), ("--max-steps", args.max_steps, ">= 1"), ("--seed", args.seed, ">= 0")
    )
    if problem:
        print(f"ding-env check: {problem}", file=sys.stderr)
        return USAGE_ERROR
    if not import_modules("check", args.imports):
        return USAGE_ERROR
    try:
        env_cls, cfg = resolve_target(args.target, args.config, undeclared_keys=args.di_engine)
    except (ConfigError, RegistryError) as error:
        print(f"ding-env check: {error}", file=sys.stderr)
        return USAGE_ERROR

    from ding_env.progress import progress_bar

    with progress_bar(len(CHECKS), None if args.json else sys.stderr, "check", "check") as bar:

        def progress(name: str) -> None:
            bar.set_postfix_str(name, refresh=False)
            bar.update()

        report = check_env(
            env_cls,
            cfg,
            episodes=args.episodes,
            max_steps=args.max_steps,
            seed=args.seed,
            progress=progress,
            di_engine=args.di_engine,
        )
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.format())
    return 0 if report.passed else 1


def where_envs_step(workers: int | None) -> str:
    """One line for ``ding-env serve``'s start: where the envs step, and the other choice."""
    if workers:
        return f"the envs step in {workers} worker processes (--workers 0: in this process, fastest for cheap envs)"
    # The server's own process is the measured default for cheap envs; costly ones (Atari) ran faster in
    # workers (benchmarks/RESULTS.md, the remote Pong rows), which users would not learn from the default.
    return (
        "the envs step in this process; --workers N steps them in N processes, in parallel and each crash "
        "isolated (faster for costly envs such as Atari)"
    )


def serve(args: argparse.Namespace) -> int:
    """`ding-env serve`: hosts envs for remote managers until Ctrl-C."""
    from ding_env.checker.target import resolve_target
    from ding_env.errors import ConfigError, RegistryError
    from ding_env.remote.served_envs import env_fns_for

    problem = flag_problem(
        ("--envs", args.envs, ">= 1"),
        ("--workers", args.workers, ">= 0"),
        ("--max-message-mb", args.max_message_mb, "> 0"),
        ("--lease-timeout", args.lease_timeout, "> 0"),
    )
    if problem:
        print(f"ding-env serve: {problem}", file=sys.stderr)
        return USAGE_ERROR
    if not import_modules("serve", args.imports):
        return USAGE_ERROR
    try:
        from ding_env.remote.server import DEFAULT_BIND, EnvServer
    except ImportError as error:
        print(f"ding-env serve needs pyzmq (pip install 'ding-env[zmq]'): {error}", file=sys.stderr)
        return USAGE_ERROR
    from ding_env.env_manager.backends.hosted_env import spaces_of_fn
    from ding_env.env_manager.env_layout import EnvLayout
    from ding_env.remote.served_envs import ServedEnvs

    try:
        role = "evaluator" if args.evaluator else "collector"
        env_fns = env_fns_for(*resolve_target(args.target, args.config, batch_envs=True, role=role), args.envs)
        # One throwaway env, as a manager builds one before launch: an env that cannot be built is named now,
        # not at a client's first launch.
        spaces_of_fn(env_fns[0])
        server = EnvServer(
            lambda: ServedEnvs(env_fns, {"num_workers": args.workers}),
            args.bind or DEFAULT_BIND,
            allow_remote=args.insecure,
            max_message_bytes=int(args.max_message_mb * 2**20),
            lease_timeout=args.lease_timeout,
            keys=args.keys,
        )
    except (ConfigError, RegistryError) as error:
        print(f"ding-env serve: {error}", file=sys.stderr)
        return USAGE_ERROR
    except Exception as error:  # noqa: BLE001 - an env that fails to build: reported as every command's failures
        print(describe_failure("serve", error, args.verbose), file=sys.stderr)
        return 1
    with server:
        if args.insecure and args.keys is None:
            print(
                f"ding-env serve: WARNING: {server.address} has no authentication or encryption; anyone who reaches "
                "it can run the envs' methods. Use it on a private network only.",
                file=sys.stderr,
            )
        env_ids = EnvLayout(env_fns).env_num  # a batch env's sub-envs are env ids of their own
        served = f"{args.envs} envs" if env_ids == args.envs else f"{args.envs} batch envs ({env_ids} env ids)"
        print(f"ding-env serve: {served} of {args.target} at {server.address}", flush=True)
        print(f"ding-env serve: {where_envs_step(args.workers)}", flush=True)
        print("ding-env serve: ready (Ctrl-C or SIGTERM stops and closes every env)", flush=True)
        # SIGTERM (systemd, kill) ends the server as Ctrl-C does, a step in progress too: envs and workers closed.
        try:
            with ended_by_signals():
                server.serve()
        except Terminated as ended:
            print(f"ding-env serve: stopped by {ended.name}; every env closed", flush=True)
    return 0


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: raised in the main thread wherever it runs, an env's step too.

    A BaseException, as KeyboardInterrupt is: the server answers an env's exceptions and serves on, and
    ``ding-env run`` reports them as failures.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.name = signal.Signals(signum).name


# Signals that end a command as Ctrl-C does (a kill, a closed terminal or SSH session); SIGHUP is POSIX-only.
ENDING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextlib.contextmanager
def ended_by_signals() -> Iterator[None]:
    """Within the block, ``ENDING_SIGNALS`` raise ``Terminated`` in the main thread.

    So ``finally`` blocks close envs, workers and shared memory, where the signals' default action ends the
    process with none of that. Signal handlers belong to the main thread: a block run in another thread keeps
    the defaults.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _terminate) for signum in ENDING_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(signum)


def port(args: argparse.Namespace) -> int:
    """`ding-env port`: DI-engine env code renamed, scanned and (with --try) run; prints the report."""
    from ding_env.porting.command import run_port

    return run_port(args)


def keygen(args: argparse.Namespace) -> int:
    """`ding-env keygen`: a server and a client key pair for encrypted connections."""
    try:
        from ding_env.remote.keys import generate
    except ImportError as error:
        print(f"ding-env keygen needs pyzmq (pip install 'ding-env[zmq]'): {error}", file=sys.stderr)
        return USAGE_ERROR
    from ding_env.errors import ConfigError

    try:
        written = generate(args.folder, force=args.force)
    except ConfigError as error:
        print(f"ding-env keygen: {error}", file=sys.stderr)
        return USAGE_ERROR
    for path in written:
        print(path)
    print(
        "ding-env keygen: the server needs server.key_secret and client.key (--keys DIR); the client needs "
        "client.key_secret and server.key (the remote manager's keys_dir=DIR). Keep the *_secret files private."
    )
    return 0


def import_modules(command: str, modules: list[str]) -> bool:
    """Import each module given to ``--import`` (the types they register join the registry); False on failure."""
    import importlib

    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as error:
            print(f"ding-env {command}: cannot import {module!r} given to --import: {error}", file=sys.stderr)
            return False
    return True


def list_types(args: argparse.Namespace) -> int:
    """`ding-env list`: the registered env types, their extras and where they are defined."""
    from ding_env.errors import RegistryError
    from ding_env.extras import extras_status

    if not import_modules("list", args.imports):
        return USAGE_ERROR
    names = ENV_REGISTRY.names()
    width = max((len(name) for name in names), default=4)
    print(f"{'type':<{width}}  {'extras':<28}  registered by")
    for name in names:
        try:
            extras = extras_status(ENV_REGISTRY.source(name))
        except RegistryError as error:
            extras = f"broken: {error}"
        print(f"{name:<{width}}  {extras:<28}  {ENV_REGISTRY.place(name)}")
    return 0


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def describe_failure(command: str, error: BaseException, verbose: bool) -> str:
    """The failure as the CLI prints it: the whole traceback with ``--verbose``, else one line with where.

    ``where`` is the innermost frame of the user's code (see :func:`describe_error`).
    """
    if verbose:
        return f"ding-env {command} failed:\n" + "".join(traceback.format_exception(error))
    return f"ding-env {command} failed: {describe_error(error)}; --verbose shows the traceback"


def describe_error(error: BaseException) -> str:
    """``'Type: first line of the message (at file:line); notes'``, for one line of output.

    ``file:line`` is the innermost frame of the user's code (not ding_env's, not the standard library's
    nor an installed package's), read from the env's own traceback too when the env runs in a worker.
    """
    frames = [(frame.filename, frame.lineno) for frame in traceback.extract_tb(error.__traceback__)]
    frames += [(file, int(line)) for file, line in _FRAME.findall(str(error))]  # the remote traceback
    package = str(Path(__file__).resolve().parents[1])  # ding_env, not ding_env/cli
    library = tuple(str(Path(path).resolve()) for path in (sys.prefix, sys.base_prefix, os.__file__.rsplit("/", 1)[0]))
    user = [
        (file, line)
        for file, line in frames
        if not str(Path(file).resolve()).startswith((package, *library)) and not file.startswith("<")
    ]
    where = f" (at {user[-1][0]}:{user[-1][1]})" if user else ""
    first_line = str(error).splitlines()[0] if str(error) else ""
    notes = "".join(f"; {note}" for note in getattr(error, "__notes__", ()))
    return f"{type(error).__name__}: {first_line}{where}{notes}"


def demo(args: argparse.Namespace) -> int:
    """`ding-env demo`: a few episodes of the named env types (every registered one by default); prints a table."""
    from ding_env.demo import run_demo

    problem = flag_problem(
        ("--episodes", args.episodes, ">= 1"),
        ("--envs", args.envs, ">= 1"),
        ("--max-steps", args.max_steps, ">= 1"),
        ("--seed", args.seed, ">= 0"),
    )
    if problem:
        print(f"ding-env demo: {problem}", file=sys.stderr)
        return USAGE_ERROR
    if not import_modules("demo", args.imports):
        return USAGE_ERROR
    known = ENV_REGISTRY.names()
    unknown = [name for name in args.types if name not in known]
    if unknown:
        print(
            f"ding-env demo: unknown env type {', '.join(map(repr, unknown))}; registered: {', '.join(known)} "
            "(--import MODULE registers a module's types first)",
            file=sys.stderr,
        )
        return USAGE_ERROR
    start = time.perf_counter()
    types = list(dict.fromkeys(args.types)) or known

    def describe(error: Exception) -> str:
        return "".join(traceback.format_exception(error)).rstrip() if args.verbose else describe_error(error)

    rows = run_demo(
        types,
        args.episodes,
        args.envs,
        args.manager,
        args.seed,
        progress=print,
        max_steps=args.max_steps,
        describe_error=describe,
    )
    header = f"{'env type':<14} {'episodes':>8} {'steps':>8} {'mean return':>12} {'truncated':>9} {'steps/s':>9}"
    print()
    print(header)
    print("-" * len(header))
    for row in rows:
        if row.error is not None:
            print(f"{row.env_type:<14} {'-':>8} {'-':>8} {'-':>12} {'-':>9} {'-':>9}  failed")
            continue
        mean_return = f"{row.mean_return:>12.2f}" if row.episodes else f"{'-':>12}"  # no episode ended
        print(
            f"{row.env_type:<14} {row.episodes:>8} {row.steps:>8} {mean_return} "
            f"{row.truncated:>9} {row.steps_per_second:>9.0f}" + ("  cut" if row.cut else "")
        )
    kinds = "env type" if len(rows) == 1 else "env types"
    failed = [row.env_type for row in rows if row.error is not None]
    ending = f"\n{len(rows)} {kinds}, {args.manager} manager, {time.perf_counter() - start:.1f} s"
    if failed:  # a failed type is the demo failing (exit 1), as a failure is in `ding-env run`; its line says why
        hint = "" if args.verbose else "; --verbose shows the tracebacks"
        ending += f", {len(failed)} failed ({', '.join(failed)}{hint})"
    print(ending)
    return 1 if failed else 0

"""The ``ding-env port`` command line (also ``python -m ding_env.porting``)."""

from __future__ import annotations

import argparse
import sys

from ding_env.errors import ConfigError

PORT_EXAMPLES = """examples:
  ding-env port my_envs/ --out ported/my_envs                 # rename the imports, report what is left
  ding-env port my_envs/ --out ported/my_envs --fix --try     # also fix what is sure, and run each env
  ding-env port DI-engine/dizoo/maze --out ported/dizoo/maze --try
  ding-env port my_env.py --in-place                          # my_env.py.orig keeps the original

The report is printed and written as PORTING.md in the ported folder (NAME.PORTING.md beside a ported
file). DST must be new, or where an earlier port of the same SRC went. Exit status: 0 when nothing failed,
1 when something did (a name the rename does not bring, a removed numpy name left, an env that did not
import, build or run with --try), 2 for a usage error.
"""
SUMMARY = "port DI-engine env code: rename its imports and report, with file:line, what else to change"


def add_port_arguments(command: argparse.ArgumentParser) -> None:
    """The arguments of ``ding-env port``."""
    command.add_argument("src", help="a Python file or a folder (a package of DI-engine env code)")
    where = command.add_mutually_exclusive_group()
    where.add_argument("--out", default=None, metavar="DST", help="where the port goes (a new file or folder)")
    where.add_argument(
        "--in-place", action="store_true", help="port over SRC; each changed file keeps its original as FILE.orig"
    )
    command.add_argument(
        "--fix", action="store_true", help="also apply the fixes the scan is sure of (numpy 2 names, moved imports)"
    )
    command.add_argument(
        "--try",
        dest="trial",
        action="store_true",
        help="import the port, run each env it registers with its DI-engine config in the base and subprocess "
        "managers, and check it with ding-env check --di-engine",
    )
    command.add_argument("--steps", type=int, default=200, help="random env steps per manager with --try (default 200)")
    command.add_argument(
        "--force",
        action="store_true",
        help="port over an earlier port of SRC at DST even where its files were edited since (the edits are lost)",
    )
    output = command.add_mutually_exclusive_group()
    output.add_argument("--quiet", action="store_true", help="print only the summary and the failures")
    output.add_argument("--json", action="store_true", help="print the report as JSON (PORTING.md is written too)")


def run_port(args: argparse.Namespace) -> int:
    """Port, print the report, write PORTING.md; the exit status says whether anything failed."""
    import json

    from ding_env.porting.report import format_report, report_dict
    from ding_env.porting.tool import port

    if args.steps < 1:
        print("ding-env port: --steps must be >= 1", file=sys.stderr)
        return 2
    try:
        result = port(args.src, args.out, args.in_place, args.fix, args.steps if args.trial else None, args.force)
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    for notice in result.notices:
        print(f"ding-env port: {notice}", file=sys.stderr)
    report = format_report(result)
    result.report.write_text(report)
    if args.json:
        print(json.dumps(report_dict(result), indent=2))
    elif args.quiet:
        print("\n".join(line for line in report.splitlines() if line.startswith("|")))
        for failure in result.failures:
            print(f"FAILED {failure}")
    else:
        print(report)
    print(f"ding-env port: report written to {result.report}", file=sys.stderr)
    return 1 if result.failures else 0


def main(argv: list[str] | None = None) -> int:
    """``python -m ding_env.porting``: the same as ``ding-env port``."""
    parser = argparse.ArgumentParser(
        prog="python -m ding_env.porting",
        description=SUMMARY,
        epilog=PORT_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_port_arguments(parser)
    return run_port(parser.parse_args(argv))

"""The examples' command line (``--field value`` for every field of their ``Args`` dataclass) and their config."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

# The env type's own config, installed with the package, so the examples run from any directory.
PACKAGED_CONFIG = Path(__file__).resolve().parents[1] / "config" / "cartpole_config.py"


def run_from_command_line(args_cls: type, train: Callable[[Any], Any], description: str) -> None:
    """Parse ``--field value`` for every ``args_cls`` field, train, and print the final evaluation."""
    parser = argparse.ArgumentParser(description=description)
    for field in fields(args_cls):
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=type(field.default), default=field.default)
    result = train(args_cls(**vars(parser.parse_args())))
    print(f"final eval return {result.mean:.1f} +- {result.std:.1f}; stop value reached: {result.stop_reached}")

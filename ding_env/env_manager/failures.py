"""How managers report env failures: which errors leave an env needing a reset, and failed closes."""

from __future__ import annotations

from typing import Any

from ding_env.env_manager.outcome import TimestepBatch
from ding_env.errors import DingEnvError, EnvError


def is_reset_error(error: DingEnvError) -> bool:
    """Whether ``error`` is a failed (auto-)reset, which always leaves its env needing a reset."""
    return getattr(error, "command", None) == "reset"


def raise_close_failures(failures: list[tuple[int, str]]) -> None:
    """Raise ``EnvError`` for the first env that failed to close, listing the others too."""
    if failures:
        (env_id, text), others = failures[0], failures[1:]
        also = "; ".join(f"env {other_id}: {other_text}" for other_id, other_text in others)
        raise EnvError(env_id, "close", f"{text} (also {also})" if also else text)


def raise_step_errors(outcome: TimestepBatch, results: Any, step_error: str) -> None:
    """Raise the step's first error that must be raised, with every env's result and every error on it.

    Step errors are raised with ``step_error='raise'``; a failed auto-reset always is (the env
    cannot continue without a reset), after the step's results are kept.
    """
    if not outcome.errors:
        return
    raised = [error for _, error in sorted(outcome.errors.items()) if step_error == "raise" or is_reset_error(error)]
    if raised:
        error = raised[0]
        error.results = results
        error.errors = {int(outcome.env_id[row]): other for row, other in sorted(outcome.errors.items())}
        raise error

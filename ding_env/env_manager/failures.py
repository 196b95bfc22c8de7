"""How managers report env failures: which errors leave an env needing a reset, and failed closes."""

from __future__ import annotations

from typing import Any

from ding_env.env_manager.outcome import TimestepBatch
from ding_env.errors import DingEnvError, EnvError, EnvTimeoutError
from ding_env.ops import Op


def is_reset_error(error: DingEnvError) -> bool:
    """Whether ``error`` is a failed (auto-)reset, which always leaves its env needing a reset.

    An error whose ``failed_reset`` is true counts as one whatever operation it names: a server lost
    during a step took the auto-resets due after it with it.
    """
    return getattr(error, "failed_reset", False) or getattr(error, "op", getattr(error, "command", None)) is Op.RESET


def raise_close_failures(failures: list[EnvError]) -> None:
    """Raise ``EnvError`` for the first env that failed to close, listing the others too."""
    if failures:
        first, others = failures[0], failures[1:]
        also = "; ".join(f"env {other.env_id}: {other.message}" for other in others)
        raise EnvError(first.env_id, Op.CLOSE, f"{first.message} (also {also})" if also else first.message)


def first_failure(errors: list[DingEnvError]) -> DingEnvError:
    """The error to raise for ``errors`` (in env id order): the first, holding every timeout like it.

    Envs that hang in one step or reset (each worker passing ``step_timeout`` raises its own
    ``EnvTimeoutError``) are one ``EnvTimeoutError`` naming them all, in id order: raising the first
    alone would read as if that env were the only one hung.
    """
    first = errors[0]
    if not isinstance(first, EnvTimeoutError):
        return first
    alike = [
        error
        for error in errors
        if isinstance(error, EnvTimeoutError) and error.command is first.command and error.timeout == first.timeout
    ]
    env_ids = sorted({env_id for error in alike for env_id in error.env_ids})
    if env_ids == first.env_ids:
        return first
    return EnvTimeoutError(env_ids, first.command, first.timeout, any(error.grouped for error in alike))


def raise_step_errors(outcome: TimestepBatch, results: Any, step_error: str) -> None:
    """Raise the step's first error that must be raised (see ``first_failure``), with every result and error on it.

    Step errors are raised with ``step_error='raise'``; a failed auto-reset always is (the env
    cannot continue without a reset), after the step's results are kept.
    """
    if not outcome.errors:
        return
    raised = [error for _, error in sorted(outcome.errors.items()) if step_error == "raise" or is_reset_error(error)]
    if raised:
        error = first_failure(raised)
        error.results = results
        error.errors = {int(outcome.env_id[row]): other for row, other in sorted(outcome.errors.items())}
        raise error

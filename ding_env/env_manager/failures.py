"""How managers report env failures: which errors leave an env needing a reset, and failed closes."""

from __future__ import annotations

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

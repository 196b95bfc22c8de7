"""Checks of the env's lifecycle: cheap, picklable construction and an idempotent ``close()``."""

from __future__ import annotations

import pickle

import cloudpickle

from ding_env.checker.report import ERROR, Finding
from ding_env.checker.rollout import CheckContext, cause_of, guard, raised


def check_lazy_init(ctx: CheckContext) -> list[Finding]:
    """Constructing is cheap (no simulator before reset) and the unreset env pickles."""
    name = "check_lazy_init"

    def body() -> list[Finding]:
        env = ctx.make_env()
        findings = []
        if getattr(env, "_init_flag", False):
            findings.append(
                Finding(
                    name,
                    ERROR,
                    "the env is initialised right after construction (_init_flag is True)",
                    "build the simulator in the first reset(), not in __init__",
                )
            )
        try:
            pickle.loads(cloudpickle.dumps(env))
        except Exception as error:  # noqa: BLE001 - any pickling failure is the finding
            # Where pickle raised (inside cloudpickle) says nothing: the attribute that fails to pickle does.
            attribute = next((key for key, value in getattr(env, "__dict__", {}).items() if not _pickles(value)), None)
            if attribute is None:
                findings.append(
                    raised(
                        name,
                        "pickling the env before its first reset",
                        error,
                        "keep __init__ to plain config; create sockets, simulators and files in reset()",
                    )
                )
            else:
                findings.append(
                    Finding(
                        name,
                        ERROR,
                        f"pickling the env before its first reset raised {type(error).__name__}: {error} "
                        f"(its attribute {attribute!r}, set before the first reset)",
                        f"create self.{attribute} in reset() instead: the managers pickle an env that has not been "
                        "reset to send it to a worker process",
                        cause=cause_of(error),
                    )
                )
        ctx.close(env)
        return findings

    return guard(name, "constructing the env", body)


def _pickles(value: object) -> bool:
    """Whether ``value`` pickles as the managers pickle an env (cloudpickle)."""
    try:
        cloudpickle.dumps(value)
    except Exception:  # noqa: BLE001 - whatever pickling raises, the value does not pickle
        return False
    return True


def check_close_twice(ctx: CheckContext) -> list[Finding]:
    """``close()`` may be called twice (after use, and before use)."""
    name = "check_close_twice"

    def body() -> list[Finding]:
        env = ctx.make_env()
        env.close()
        env = ctx.make_env()
        env.seed(ctx.seed)
        env.reset()
        env.close()
        env.close()
        if ctx.close_failures:  # close() raised in another check's env only (after a step, say)
            raise ctx.close_failures[0]
        return []

    return guard(name, "close()", body, "make close() idempotent: release resources only if they exist")

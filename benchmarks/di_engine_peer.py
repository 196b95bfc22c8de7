"""DI-engine's subprocess env managers on one benchmark workload, run in DI-engine's own venv.

DI-engine pins numpy<2 and imports legacy gym, so ``bench_env_manager.py`` starts this script
with the Python of ``.venv-di-engine`` (built from ``requirements-di-engine.txt``) and reads the
JSON line it prints last: ``{"steps_per_second": ...}`` (with ``"close_error"`` when the
manager failed to close), or ``{"skip": reason}``. The envs are the same raw Gymnasium envs
behind DI-engine's own ``DingEnvWrapper``, stepped through its dict API (its only one) with
the same fixed actions, timed the same way as every other executor.

Usage::

    .venv-di-engine/bin/python benchmarks/di_engine_peer.py LABEL sync|async SECONDS MIN_STEPS
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import timed  # noqa: E402
from workloads import WORKLOADS  # noqa: E402

MANAGERS = {"sync": "SyncSubprocessEnvManager", "async": "AsyncSubprocessEnvManager"}


def wrapped(make_env: Callable):
    """The env ``make_env`` builds, behind DI-engine's ``DingEnvWrapper``."""
    from ding.envs import DingEnvWrapper

    return DingEnvWrapper(make_env())


def steps_per_second(label: str, kind: str, seconds: float, min_steps: int) -> dict:
    """Time DI-engine's ``kind`` manager on the workload called ``label``."""
    workload = next((w for w in WORKLOADS if w.label == label), None)
    if workload is None:
        raise SystemExit(f"unknown workload {label!r}; known: {[w.label for w in WORKLOADS]}")
    if kind not in MANAGERS:
        raise SystemExit(f"unknown manager kind {kind!r}; expected one of {sorted(MANAGERS)}")
    if not workload.installed:
        return {"skip": f"{workload.needs} is not installed in DI-engine's venv"}
    import ding.envs

    manager_cls = getattr(ding.envs, MANAGERS[kind])
    actions = workload.actions()
    manager = manager_cls([partial(wrapped, fn) for fn in workload.gym_fns()], manager_cls.default_config())
    manager.launch()

    def step(i: int) -> int:
        batch = actions[i % len(actions)]
        return len(manager.step({env_id: batch[env_id] for env_id in manager.ready_obs}))

    try:
        reply = {"steps_per_second": timed(step, seconds, min_steps)}
    except BaseException:
        manager.close()
        raise
    try:
        manager.close()
    except (OSError, EOFError) as error:  # its async manager can find a worker's pipe reset or closed on close
        reply["close_error"] = f"{type(error).__name__}: {error}"
    return reply


if __name__ == "__main__":
    label, kind, seconds, min_steps = sys.argv[1:5]
    print(json.dumps(steps_per_second(label, kind, float(seconds), int(min_steps))))

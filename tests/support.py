"""Helpers the tests share: process, shared-memory and trajectory helpers (no test module imports another)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

from ding_env import create_env_manager
from tests.conftest import manager_cfg
from tests.envs import BatchOfEnvs, CountingEnv

REPO = Path(__file__).resolve().parents[1]
# DI-engine 0.5.3 lives in a venv of its own, which `make test` builds; DING_ENV_DI_ENGINE_VENV names another one.
DI_ENGINE_VENV = Path(os.environ.get("DING_ENV_DI_ENGINE_VENV", REPO / ".venv-di-engine"))


def di_engine_dizoo() -> Path:
    """The ``dizoo`` folder of DI-engine's installed wheel (its env packages' sources)."""
    found = sorted(DI_ENGINE_VENV.glob("lib/python3*/site-packages/dizoo"))
    assert found, f"DI-engine's venv is missing at {DI_ENGINE_VENV}: `make test` builds .venv-di-engine"
    return found[0]


def counting_fns(count: int, **cfg):
    """``count`` constructors of ``CountingEnv(cfg)``."""
    return [partial(CountingEnv, cfg) for _ in range(count)]


def as_batch_envs(env_fns: list) -> list:
    """The envs of ``env_fns`` with the same env ids, hosted as batch envs beside a plain env.

    Each pair of consecutive envs becomes one ``BatchOfEnvs`` (2 envs: one batch env; 4: two); an odd
    last env stays as it is (3 envs: a batch env and a plain env), and a single env is a batch env of one.
    """
    if len(env_fns) == 1:
        return [partial(BatchOfEnvs, dict(env_fns=env_fns))]
    pairs = [partial(BatchOfEnvs, dict(env_fns=env_fns[i : i + 2])) for i in range(0, len(env_fns) - 1, 2)]
    return pairs + env_fns[len(pairs) * 2 :]


def shm_segments():
    return set(os.listdir("/dev/shm"))


def leaked_segments(before: set[str], grace: float = 1.0) -> set[str]:
    """Segments in ``/dev/shm`` that were not in ``before`` and that no process maps, for ``grace`` seconds.

    The machine's other jobs create segments and semaphores too: theirs are mapped by their processes
    while they live, or gone within moments.
    """
    deadline = time.monotonic() + grace
    while True:
        leaked = shm_segments() - before
        for pid in filter(str.isdigit, os.listdir("/proc")) if leaked else ():
            try:
                leaked -= shm_segments_mapped_by(int(pid))
            except OSError:  # ended meanwhile
                continue
        if not leaked or time.monotonic() > deadline:
            return leaked
        time.sleep(0.1)


def shm_segments_mapped_by(pid: int) -> set[str]:
    """Names (as in ``/dev/shm``) of the shared-memory segments process ``pid`` maps and that still exist.

    Read from ``/proc/<pid>/maps``: unlike a diff of ``/dev/shm``, other processes on the machine do not show.
    """
    with open(f"/proc/{pid}/maps") as maps:
        paths = {line.split(maxsplit=5)[5].strip() for line in maps if len(line.split(maxsplit=5)) == 6}
    return {os.path.basename(path) for path in paths if path.startswith("/dev/shm/") and not path.endswith("(deleted)")}


def child_pids(parent: int | None = None):
    """Pids of the children of ``parent`` (this process by default), leaving out the ``ps`` that lists them."""
    parent = os.getpid() if parent is None else parent
    out = subprocess.run(["ps", "-o", "pid=,comm=", "--ppid", str(parent)], capture_output=True, text=True).stdout
    return {int(line.split()[0]) for line in out.splitlines() if line.split()[1] != "ps"}


def trajectory(manager_type, env_fn, steps=60, record=None, seed=123, actions=2, **cfg):
    """``record(batch)`` of every batched step with actions ``(env_id + t) % actions``."""
    record = record or arrays_of
    with create_env_manager(manager_cfg(manager_type, **cfg), env_fn) as manager:
        manager.seed(seed)
        manager.launch()
        trace = []
        for t in range(steps):
            ready = manager.ready_obs_batch
            trace.append(record(manager.step_batch(ready.env_id, (ready.env_id + t) % actions)))
        return trace


def arrays_of(batch):
    return batch.env_id.copy(), _flat(batch.obs), batch.reward.copy(), batch.done.copy(), batch.truncated.copy()


def _flat(obs):
    if isinstance(obs, dict):
        return np.concatenate([_flat(obs[key]).reshape(len(_flat(obs["vec"])), -1) for key in sorted(obs)], axis=1)
    if isinstance(obs, tuple):
        return np.concatenate([_flat(item).reshape(len(item), -1) for item in obs], axis=1)
    return obs.astype(np.float64).copy()


def assert_same(trace_a, trace_b):
    assert len(trace_a) == len(trace_b)
    for step_a, step_b in zip(trace_a, trace_b, strict=True):
        for a, b in zip(step_a, step_b, strict=True):
            np.testing.assert_array_equal(a, b)


def resource_tracker_pids():
    """The pid of multiprocessing's resource tracker, if it runs (read from the stdlib's private state)."""
    from multiprocessing import resource_tracker

    pid = resource_tracker._resource_tracker._pid
    return {pid} if pid else set()


def process_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (an unreaped zombie counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone before the open, or between the open and the read
        return False


def run_without_modules(modules, code, cwd=None):
    """Run Python ``code`` in a fresh interpreter (this checkout first on its path) in which ``modules``
    cannot be imported, as if their packages were not installed; the completed process, output captured."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    blocked = "".join(f"sys.modules[{module!r}] = None\n" for module in modules)
    return subprocess.run(
        [sys.executable, "-c", f"import sys\n{blocked}{code}"],
        cwd=cwd or repo,
        env={**os.environ, "PYTHONPATH": repo},
        capture_output=True,
        text=True,
        timeout=120,
    )

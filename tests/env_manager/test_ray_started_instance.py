"""The Ray managers with no Ray running: the local instance they start, sized to this machine."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the Ray managers need the ray extra")

REPO = Path(__file__).resolve().parents[2]

LAUNCH = """
from ding_env import create_env_manager
from ding_env.errors import ConfigError
from tests.support import counting_fns

cfg = {"type": "ray", "num_hosts": 2, "host_resources": {"CPU": 4096}, "connect_timeout": 600.0}
try:
    create_env_manager(cfg, counting_fns(2)).launch()
except ConfigError as error:
    print(error)
"""


def test_hosts_the_local_instance_can_never_hold_are_refused_at_once():
    # It waited the whole connect_timeout (here 600 s) for a placement the instance it started cannot grow into.
    result = run_script(LAUNCH, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (
        "2 hosts of {'CPU': 4096} need CPU 8192, and the local Ray instance started for them has CPU" in result.stdout
    )


HELD = """
import os
from ding_env import create_env_manager
from ding_env.errors import ConfigError
from tests.support import counting_fns

cpus = os.cpu_count()  # the instance is sized to this machine: the collector's hosts take every CPU
collector = create_env_manager({"type": "ray", "num_hosts": cpus}, counting_fns(cpus))
collector.launch()
try:
    create_env_manager({"type": "ray", "num_hosts": 1, "connect_timeout": 600.0}, counting_fns(1)).launch()
except ConfigError as error:
    print(error)
evaluator = create_env_manager({"type": "ray", "num_hosts": 1}, counting_fns(1))
collector.close()  # what it held is free again: another manager's hosts fit
evaluator.launch()
print("launched after the close:", sorted(evaluator.step({0: 0})))
evaluator.close()
"""


def test_hosts_the_other_managers_of_the_process_leave_no_room_for_are_refused_at_once():
    # docs/cluster.md's run with a Ray evaluator on the local instance: it waited connect_timeout (60 s) to fail.
    result = run_script(HELD, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "of which this process's other Ray managers hold CPU" in result.stdout
    assert "close those managers first (an evaluator: type 'subprocess')" in result.stdout
    assert "launched after the close: [0]" in result.stdout


UNREACHABLE = """
from ding_env import create_env_manager
from ding_env.errors import ConfigError
from tests.support import counting_fns

cfg = {"type": "ray", "num_hosts": 1, "address": "127.0.0.1:1", "connect_timeout": 2.0}
try:
    create_env_manager(cfg, counting_fns(2)).launch()
except ConfigError as error:
    print(error)
"""


def test_a_ray_address_where_nothing_answers_is_refused_within_connect_timeout():
    # Ray's own init waited for it without end (and Ctrl-C took many seconds to end the wait).
    result = run_script(UNREACHABLE, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "nothing answers at the Ray address '127.0.0.1:1'" in result.stdout
    assert "start Ray's head there (`ray start --head`)" in result.stdout


def run_script(script: str, timeout: float) -> subprocess.CompletedProcess:
    """``script`` in a Python process of its own, where no Ray instance runs yet."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )

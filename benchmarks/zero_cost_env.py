"""Config of the zero-cost env for ``ding-env serve`` (benchmarks/remote.py): the remote round-trip floor.

Loading it registers ``DingBench/ZeroCost-v0`` (``workloads.py``) in the serving process.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workloads  # noqa: E402, F401 - registers DingBench/ZeroCost-v0

config = dict(env=dict(env_id="DingBench/ZeroCost-v0"))

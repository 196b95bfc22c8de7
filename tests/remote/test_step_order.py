"""Steps in any env id order: every manager, the remote ones too, gives each env its own action and result."""

from __future__ import annotations

import numpy as np
import pytest

from ding_env import create_env_manager
from ding_env.checker.target import resolve_target
from ding_env.remote.served_envs import env_fns_for
from tests.conftest import manager_cfg
from tests.remote.serving import CARTPOLE, serving

ORDER = [3, 0, 2, 1]  # across both servers of the remote managers, and within each


def stepped_out_of_order(manager_type: str, servers: list[str]) -> list:
    fns = env_fns_for(*resolve_target(CARTPOLE), 4)
    cfg = {"type": manager_type, "servers": servers} if "remote" in manager_type else manager_cfg(manager_type)
    if manager_type == "async_remote":
        cfg["step_wait_timeout"] = None  # every env in flight, as the sync managers return them
    trace = []
    with create_env_manager(cfg, fns) as manager:
        manager.seed(5)
        manager.launch()
        for t in range(3):
            steps = manager.step({env_id: (env_id + t) % 2 for env_id in ORDER})  # the dict API, out of order
            trace.append({i: (ts.obs.tolist(), float(ts.reward[0]), bool(ts.done)) for i, ts in steps.items()})
            batch = manager.step_batch(np.array(ORDER), np.array([(i + t + 1) % 2 for i in ORDER]))
            # The rows: in the order asked (the synchronous managers), ids increasing (the async ones).
            assert batch.env_id.tolist() == (sorted(ORDER) if manager_type.startswith("async") else ORDER)
            trace.append({int(i): obs.tolist() for i, obs in zip(batch.env_id, batch.obs, strict=True)})
        assert sorted(manager.ready_obs) == [0, 1, 2, 3]  # no env left stepping
    return trace


@pytest.fixture(scope="module", params=[(2, 2), (4,)], ids=["two servers of 2", "one server of 4"])
def servers(request):
    with serving(CARTPOLE, request.param[0]) as (first, _):
        if len(request.param) == 1:
            yield [first]
            return
        with serving(CARTPOLE, request.param[1]) as (second, _):
            yield [first, second]


@pytest.mark.parametrize("manager_type", ["subprocess", "async_subprocess", "remote", "async_remote"])
def test_envs_stepped_in_any_id_order_get_the_base_managers_results(manager_type, servers):
    assert stepped_out_of_order(manager_type, servers) == stepped_out_of_order("base", servers)

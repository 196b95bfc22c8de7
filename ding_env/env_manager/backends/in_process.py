"""The in-process backend: envs in the calling process, stepped one after another.

``BaseEnvManager`` hosts every env on it; with ``caller_share=True`` a subprocess manager hosts
one share of its envs on it beside its workers. Its envs have no crash isolation: an env that
kills the process kills the caller, and a hung env can be cut only by a signal, in the main
thread (see ``call_timeout``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from typing_extensions import override

from ding_env.env_manager import arrays
from ding_env.env_manager.backends.base import Backend, Ledger, Spaces, StepOutcome
from ding_env.env_manager.backends.env_host import EnvHost, env_spaces
from ding_env.env_manager.status import abnormal_info, read_attribute
from ding_env.errors import DingEnvError, EnvError


class InProcessBackend(Backend):
    """Hosts its envs in an ``EnvHost`` of this process; a step runs when its results are collected."""

    steps_when_collected = True

    def __init__(self, env_fns: Mapping[int, Callable[[], Any]], cfg: Mapping, name: str, ledger: Ledger) -> None:
        super().__init__(env_fns, cfg, name, ledger)
        self.host = EnvHost(self.env_fns, cfg, limit_time=True)
        self.ready: dict[int, Any] = {}
        self.sent: tuple[np.ndarray, Any, np.ndarray] | None = None

    @override
    def launch(self) -> Spaces:
        self.host.launch()
        first = self.env_ids[0]
        try:
            spaces = env_spaces(self.host.envs[first])
            obs_layout = arrays.layout_of(spaces[0])
        except Exception as error:  # noqa: BLE001 - named with the env, as the workers report it
            self.host.close()
            raise EnvError.of(error, first, "launch") from error
        self.host.set_obs_layout(obs_layout)
        # Dict observations in the space's key order, as the shared-memory backends return them.
        self.order_obs = arrays.compile_order(obs_layout)
        self.reward_layout = arrays.reward_layout(spaces[2])
        return spaces

    @override
    def seed(self, env_id: int, seed: int, dynamic_seed: bool | None) -> None:
        self.host.seed(env_id, seed, dynamic_seed)

    @override
    def set_reset_param(self, env_id: int, param: dict) -> None:
        self.host.reset_params[env_id] = param

    @override
    def reset(self, env_ids: list[int]) -> tuple[list[int], list[DingEnvError]]:
        ready = []
        for env_id in env_ids:  # stops at the first failure, as a reset() that raises should
            try:
                self.ready[env_id] = self.order_obs(self.host.reset(env_id))
            except DingEnvError as error:
                return ready, [error]
            ready.append(env_id)
        return ready, []

    @override
    def send(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray) -> None:
        self.sent = (env_ids, actions, reset_on_done)

    @override
    def finished(self) -> int:
        return 0 if self.sent is None else len(self.sent[0])  # stepped when collected

    @override
    def collect(self, wait: bool) -> StepOutcome | None:
        if self.sent is None:
            return None
        (env_ids, actions, reset_on_done), self.sent = self.sent, None
        count = len(env_ids)
        obs, infos, errors = [None] * count, [None] * count, {}
        done, truncated = [False] * count, [False] * count
        layout = self.reward_layout
        reward = np.zeros((count, *layout.shape), dtype=layout.dtype)  # a failed step's row stays 0
        if not isinstance(actions, list):
            actions = arrays.action_rows(actions, count)  # each env gets arrays of its own
        resets = reset_on_done.tolist()
        order, host, ready_of = self.order_obs, self.host, self.ready
        for row, env_id in enumerate(env_ids.tolist()):
            fields, ready, step_error, reset_error = host.step(env_id, actions[row], resets[row])
            if step_error is not None:
                errors[row] = step_error
                obs[row], infos[row], done[row] = ready_of[env_id], abnormal_info(step_error), True
            else:
                obs[row], reward[row], done[row], truncated[row], infos[row] = fields
                obs[row] = order(obs[row])
            if reset_error is not None:
                errors[row] = reset_error  # decides the env's status: it needs a reset
            ready_of[env_id] = None if ready is None else order(ready)
        return StepOutcome(
            env_ids,
            obs,
            reward,
            np.array(done, dtype=bool),
            np.array(truncated, dtype=bool),
            infos,
            errors,
            reset_on_done,
        )

    @override
    def ready_obs(self, env_ids: np.ndarray) -> Any:
        return arrays.stack(self.ready_obs_rows(env_ids)) if len(env_ids) else None

    @override
    def ready_obs_rows(self, env_ids: np.ndarray) -> list[Any]:
        return [self.ready[env_id] for env_id in env_ids.tolist()]

    @override
    def call(self, env_ids: list[int], name: str, args: tuple, kwargs: dict) -> list:
        results = []
        for env_id in env_ids:
            try:
                results.append(getattr(self.host.envs[env_id], name)(*args, **kwargs))
            except Exception as error:  # noqa: BLE001 - re-raised with the env it came from
                raise EnvError.of(error, env_id, name) from error
        return results

    @override
    def get_attr(self, env_ids: list[int], name: str) -> list:
        return [read_attribute(self.host.envs[env_id], name) for env_id in env_ids]

    @override
    def set_attr(self, env_ids: list[int], name: str, values: list) -> None:
        for env_id, value in zip(env_ids, values, strict=True):
            try:
                setattr(self.host.envs[env_id], name, value)
            except Exception as error:  # noqa: BLE001 - re-raised with the env it came from
                raise EnvError.of(error, env_id, name) from error

    @override
    def close(self) -> list[tuple[int, str]]:
        return self.host.close()

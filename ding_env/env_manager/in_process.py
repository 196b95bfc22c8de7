"""The in-process backend: every env in the calling process, stepped one after another.

``BaseEnvManager`` runs on it; the subprocess managers override these ``_backend_*`` hooks with
their worker processes. The hooks read the manager's env constructors and config and keep the
envs (an ``EnvHost``) and their ready observations; of the manager's state, ``_backend_launch``
records the envs' spaces and ``_backend_reset`` marks each env READY as its reset completes.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.env_manager import arrays
from ding_env.env_manager.batch import StepOutcome
from ding_env.env_manager.env_host import EnvHost, env_spaces
from ding_env.env_manager.failures import raise_close_failures
from ding_env.env_manager.status import READY, abnormal_info, read_attribute
from ding_env.errors import EnvError


class InProcessBackend:
    """The ``_backend_*`` hooks of a manager whose envs live in the calling process."""

    def _backend_launch(self) -> None:
        self._host = EnvHost(dict(enumerate(self._env_fn)), self._cfg, limit_time=True)
        self._host.launch()
        try:
            self._spaces = env_spaces(self._host.envs[0])
            obs_layout = arrays.layout_of(self._spaces[0])
        except Exception as error:  # noqa: BLE001 - named with the env, as the workers report it
            self._host.close()
            raise EnvError.of(error, 0, "launch") from error
        self._host.set_obs_layout(obs_layout)
        # Dict observations in the space's key order, as the shared-memory managers return them.
        self._order_obs = arrays.compile_order(obs_layout)
        self._reward_layout = arrays.reward_layout(self._spaces[2])
        self._ready = [None] * self._env_num

    def _backend_spaces(self) -> tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space]:
        """The spaces before launch, read from a throwaway env."""
        env = self._env_fn[0]()
        try:
            return env_spaces(env)
        finally:
            env.close()

    def _backend_seed(self, env_id: int, seed: int, dynamic_seed: bool | None) -> None:
        self._host.seed(env_id, seed, dynamic_seed)

    def _backend_set_reset_param(self, env_id: int, param: dict) -> None:
        self._host.reset_params[env_id] = param

    def _backend_cancel(self, env_ids: list[int]) -> None:
        """Drop in-flight work of ``env_ids`` before a reset (nothing is in flight here)."""

    def _backend_poll(self) -> None:
        """Collect results that arrived since the last call (nothing arrives late here)."""

    def _backend_reset(self, env_ids: list[int]) -> None:
        for env_id in env_ids:
            self._ready[env_id] = self._order_obs(self._host.reset(env_id))
            self._status[env_id] = READY

    def _backend_step(
        self, env_ids: np.ndarray, rows: slice | np.ndarray, actions: Any, reset_on_done: np.ndarray, batched: bool
    ) -> StepOutcome:
        count = len(env_ids)
        obs, infos, errors = [None] * count, [None] * count, {}
        done, truncated = [False] * count, [False] * count
        layout = self._reward_layout
        reward = np.zeros((count, *layout.shape), dtype=layout.dtype)  # a failed step's row stays 0
        if not isinstance(actions, list):
            actions = arrays.action_rows(actions, count)  # each env gets arrays of its own
        resets = reset_on_done.tolist()
        order = self._order_obs
        for row, env_id in enumerate(env_ids.tolist()):
            fields, ready, step_error, reset_error = self._host.step(env_id, actions[row], resets[row])
            if step_error is not None:
                errors[row] = step_error
                obs[row], infos[row], done[row] = self._ready[env_id], abnormal_info(step_error), True
            else:
                obs[row], reward[row], done[row], truncated[row], infos[row] = fields
                obs[row] = order(obs[row])
            if reset_error is not None:
                errors[row] = reset_error  # decides the env's status: it needs a reset
            self._ready[env_id] = None if ready is None else order(ready)
        done_flags, truncated_flags = np.array(done, dtype=bool), np.array(truncated, dtype=bool)
        return StepOutcome(env_ids, rows, obs, True, reward, done_flags, truncated_flags, infos, errors, reset_on_done)

    def _backend_ready_obs_rows(self, env_ids: np.ndarray) -> list[Any]:
        """The ready observation of each of ``env_ids``, for the dict API."""
        return [self._ready[env_id] for env_id in env_ids.tolist()]

    def _backend_ready_obs_batch(self, env_ids: np.ndarray) -> Any:
        if not len(env_ids):
            return None
        return arrays.stack([self._ready[env_id] for env_id in env_ids.tolist()])

    def _backend_call(self, env_id: int, name: str, args: tuple, kwargs: dict) -> Any:
        """Call method ``name`` of one env; what it raises is an ``EnvError`` naming the env, as from a worker."""
        try:
            return getattr(self._host.envs[env_id], name)(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - re-raised with the env it came from
            raise EnvError.of(error, env_id, name) from error

    def _backend_getattr_each(self, env_ids: list[int], name: str) -> list[Any]:
        """``read_attribute`` of each env (subprocess backends ask each worker once)."""
        return [read_attribute(self._host.envs[env_id], name) for env_id in env_ids]

    def _backend_call_each(self, env_ids: list[int], name: str, args: tuple, kwargs: dict) -> list[Any]:
        """``_backend_call`` on each env (subprocess backends ask each worker once)."""
        return [self._backend_call(env_id, name, args, kwargs) for env_id in env_ids]

    def _backend_set_attr(self, env_ids: list[int], name: str, values: list[Any]) -> None:
        """Set ``name`` of each env to its value (subprocess backends ask each worker once)."""
        for env_id, value in zip(env_ids, values, strict=True):
            setattr(self._host.envs[env_id], name, value)

    def _backend_workers(self) -> list:
        return []

    def _backend_close(self) -> None:
        raise_close_failures(self._host.close())

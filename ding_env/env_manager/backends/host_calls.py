"""``HostCalls``: an env host's calls of its envs' methods and attributes by name.

``call_env_method`` and attribute broadcast reach the envs through them; a batch env's method runs once
for all its ids.
"""

from __future__ import annotations

from typing import Any

from ding_env.env.base_env import BaseEnv
from ding_env.env_manager.backends.batch_host import BatchHost
from ding_env.env_manager.status import read_attribute
from ding_env.errors import EnvError
from ding_env.ops import Op


class HostCalls:
    """Calls on the envs of ``envs`` by name, for ``EnvHost``.

    Attributes:
        envs: ``{env_id: env}`` hosted (a batch env's sub-env ids map to the batch env).
        batch: The host's batch envs, or None.
    """

    envs: dict[int, BaseEnv]
    batch: BatchHost | None

    def call(self, env_ids: list[int], name: str, args: tuple, kwargs: dict) -> list:
        """Call method ``name`` of each env; one result per env (an env's exception raises ``EnvError``).

        A batch env's method runs once per call, whatever the number of its ids asked: each of them gets
        its result (a method that saves, renders or counts acts once), as ``set_attr`` sets its attribute
        once. ``random_action`` without arguments is drawn per sub-env.
        """
        results = []
        batch_of = {} if self.batch is None else self.batch.batch_of
        answered: dict[int, Any] = {}  # a batch env's result in this call, by its first id
        for env_id in env_ids:
            batch = batch_of.get(env_id)
            try:
                if batch is not None and name == "random_action" and not (args or kwargs):
                    results.append(self.batch.random_action(env_id))  # one sub-env's action, not the batch env's
                    continue
                if batch is not None and batch.first in answered:
                    results.append(answered[batch.first])
                    continue
                result = getattr(self.envs[env_id], name)(*args, **kwargs)
            except Exception as error:  # noqa: BLE001 - re-raised with the env it came from
                raise EnvError.of(error, env_id, Op.CALL, name) from error
            if batch is not None:
                answered[batch.first] = result
            results.append(result)
        return results

    def get_attr(self, env_ids: list[int], name: str) -> list:
        """Attribute ``name`` of each env, as ``status.read_attribute`` gives it."""
        return [read_attribute(self.envs[env_id], name) for env_id in env_ids]

    def set_attr(self, env_ids: list[int], name: str, values: list) -> None:
        """Set attribute ``name`` of each env to its value (an env's exception raises ``EnvError``)."""
        for env_id, value in zip(env_ids, values, strict=True):
            env = self.envs[env_id]
            # An env that wraps another (a Gymnasium env in ManagerVectorEnv) says where the attribute lives.
            setter = getattr(type(env), "set_wrapper_attr", None)
            try:
                if setter is None:
                    setattr(env, name, value)
                else:
                    setter(env, name, value)
            except Exception as error:  # noqa: BLE001 - re-raised with the env it came from
                raise EnvError.of(error, env_id, Op.SET_ATTR, name) from error

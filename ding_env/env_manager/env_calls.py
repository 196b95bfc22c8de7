"""The env manager's calls that reach the envs themselves: their attributes and methods.

Mixed into ``EnvManager``, of which it asks three things: ``_each(env_ids, ask)``, which checks the
manager runs and asks each backend hosting some of ``env_ids``, ``_check_env_attribute(name)``,
which raises unless env attributes can be read now, and ``_check_batch_attribute(name, value_of)``,
which refuses values a batch env cannot take; and ``env_num`` and ``_name`` (for errors).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ding_env.env_manager import validation
from ding_env.env_manager.status import CALLABLE, MISSING


class EnvCalls:
    """Attribute reads and writes, method calls and replays on the envs of an ``EnvManager``."""

    def set_env_attr(self, name: str, values: Any, env_ids: Sequence[int] | None = None) -> None:
        """Set attribute ``name`` of envs ``env_ids`` (default: every env), as Gymnasium's ``set_attr``.

        Args:
            name: The env attribute (not a private one).
            values: A list or tuple with one value per env of ``env_ids``, or one value for all of them.
            env_ids: The envs to change; None for every env.

        Raises:
            ValueError: For an unknown env id, a private name, or a list of the wrong length.
        """
        env_ids = self._env_id_list(env_ids)
        if not isinstance(name, str) or not name or name.startswith("_"):
            raise ValueError(f"{self._name}: set_env_attr takes a public attribute name, got {name!r}")
        if isinstance(values, (list, tuple)):
            if len(values) != len(env_ids):
                raise ValueError(
                    f"{self._name}: set_env_attr({name!r}) got {len(values)} values for {len(env_ids)} envs {env_ids}"
                )
            value_of = dict(zip(env_ids, values, strict=True))
        else:
            value_of = dict.fromkeys(env_ids, values)
        self._check_batch_attribute(name, value_of)
        self._each(env_ids, lambda backend, ids: backend.set_attr(ids, name, [value_of[i] for i in ids]))

    def call_env_method(self, name: str, *args: Any, env_ids: Sequence[int] | None = None, **kwargs: Any) -> list:
        """Call method ``name`` of envs ``env_ids`` (default: every env); one result per env, in order.

        Raises:
            ValueError: For an unknown env id.
            EnvError: When an env's method raised (named by its env id).
        """
        return self._each(self._env_id_list(env_ids), lambda backend, ids: backend.call(ids, name, args, kwargs))

    def random_action(self) -> dict[int, Any]:
        """A random action for every ready env, drawn by the env itself."""
        env_ids = self.ready_obs_id
        return dict(zip(env_ids, self.call_env_method("random_action", env_ids=env_ids), strict=True))

    def __getattr__(self, name: str) -> Any:
        """Broadcast env attributes: ``manager.foo`` is ``[env.foo for env in envs]``.

        A callable attribute gives a function calling it on every env.
        """
        if name.startswith("_"):
            raise AttributeError(name)
        self._check_env_attribute(name)
        every = list(range(self.env_num))
        values = self._each(every, lambda backend, ids: backend.get_attr(ids, name))
        missing = [env_id for env_id, value in zip(every, values, strict=True) if value is MISSING]
        if missing:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}, and envs {missing} have none")
        if all(value is CALLABLE for value in values):

            def broadcast(*args: Any, **kwargs: Any) -> list[Any]:
                return self.call_env_method(name, *args, **kwargs)

            return broadcast
        return values

    def _env_id_list(self, env_ids: Sequence[int] | None) -> list[int]:
        if env_ids is None:
            return list(range(self.env_num))
        return validation.parse_env_ids(self._name, self.env_num, env_ids).tolist()

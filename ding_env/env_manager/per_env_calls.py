"""DI-engine's per-env manager calls: ``ready_imgs``, ``reward_shaping`` and ``enable_save_figure``.

DI-engine's evaluators and collectors call these on a manager; each goes to one env
(or to every ready env) through the manager's backend, in every manager type.
"""

from __future__ import annotations

from typing import Any


class PerEnvCalls:
    """Mixed into ``BaseEnvManager``: calls that DI-engine code makes on one env through its manager."""

    @property
    def ready_imgs(self) -> dict[int, Any]:
        """``{env_id: frame}``: ``env.render()`` of every ready env (DI-engine's evaluators log them as video)."""
        env_ids = self.ready_obs_id
        return dict(zip(env_ids, self._backend_call_each(env_ids, "render", (), {}), strict=True))

    def reward_shaping(self, env_id: int, transitions: list[dict]) -> list[dict]:
        """``env.reward_shaping(transitions)`` of env ``env_id``: its shaped transitions."""
        self._check_running()
        return self._backend_call(self._check_env_id(env_id), "reward_shaping", (transitions,), {})

    def enable_save_figure(self, env_id: int, figure_path: str) -> None:
        """``env.enable_save_figure(figure_path)`` of env ``env_id``."""
        self._check_running()
        self._backend_call(self._check_env_id(env_id), "enable_save_figure", (figure_path,), {})

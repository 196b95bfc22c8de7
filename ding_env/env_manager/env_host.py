"""``EnvHost``: the envs one process runs, with retries, renewal and error capture.

The serial manager hosts every env in the caller's process; each subprocess
worker hosts its share. Both use this class, so resetting with
``max_retry``/``retry_type``, renewing an env after an abnormal step, auto-reset
and the output checks behave the same in every manager.
"""

from __future__ import annotations

import time
import traceback
import warnings
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import gymnasium as gym

from ding_env.base_env import BaseEnv, step_fields_of
from ding_env.env_manager import arrays
from ding_env.errors import EnvError
from ding_env.timestep import StepFields
from ding_env.wrappers.legacy_gym import to_gymnasium_space

# What stepping one env produced, as a plain tuple (built once per env step, so no NamedTuple):
# ``(fields, ready_obs, error)``: the step's ``StepFields`` (None when the step raised); the
# observation the env shows next (the reset one after an auto-reset), or None when it needs a
# reset; and the ``EnvError`` the step raised, or None.
StepRecord = tuple[StepFields | None, Any, EnvError | None]


def env_spaces(env: Any) -> tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space]:
    """The observation, action and reward spaces of ``env``, as Gymnasium spaces.

    An env that knows its spaces only after its first reset (some of DI-engine's do) is reset
    once to read them, as DI-engine's managers do; gym's spaces become Gymnasium's.
    """
    try:
        spaces = (env.observation_space, env.action_space, env.reward_space)
    except AttributeError:
        spaces = (None,)
    if any(space is None for space in spaces):  # unset, or None until the first reset
        env.reset()
        spaces = (env.observation_space, env.action_space, env.reward_space)
    return tuple(to_gymnasium_space(space) for space in spaces)


def stepper_of(env: Any) -> Callable[[Any], StepFields]:
    """``env.step_fields``, or the same built from ``env.step`` for an env without it (DI-engine's own)."""
    step_fields = getattr(env, "step_fields", None)
    return step_fields if callable(step_fields) else partial(step_fields_of, env)


class EnvHost:
    """Creates, seeds, resets and steps a set of envs in this process.

    Args:
        env_fn: ``{env_id: constructor}`` for the hosted envs.
        cfg: The manager config (``max_retry``, ``retry_type``,
            ``retry_waiting_time``, ``step_error`` are used).
        obs_layout: Layout every observation must match, or None to skip the check.
    """

    def __init__(self, env_fn: Mapping[int, Callable[[], BaseEnv]], cfg: Mapping, obs_layout: Any = None) -> None:
        self.env_fn = dict(env_fn)
        self.cfg = cfg
        self.set_obs_layout(obs_layout)
        self.envs: dict[int, BaseEnv] = {}
        self._steppers: dict[int, Callable[[Any], StepFields]] = {}
        self.seeds: dict[int, tuple[int, bool | None]] = {}
        self.reset_params: dict[int, dict] = {env_id: {} for env_id in self.env_fn}

    def set_obs_layout(self, layout: Any) -> None:
        """Check every observation against ``layout`` from now on (None: no check)."""
        self._check = _no_check if layout is None else arrays.compile_check(layout, self.describe)

    def describe(self, env_id: int) -> str:
        """Names an env in error messages."""
        return f"env {env_id} ({self.envs[env_id]!r})"

    def launch(self) -> None:
        """Build every env (envs are lazy: this is cheap until their first reset)."""
        self.envs = {env_id: fn() for env_id, fn in self.env_fn.items()}
        self._steppers = {env_id: stepper_of(env) for env_id, env in self.envs.items()}

    def seed(self, env_id: int, seed: int, dynamic_seed: bool | None) -> None:
        """Seed one env now and remember the seed for renewals."""
        self.seeds[env_id] = (seed, dynamic_seed)
        env = self.envs[env_id]
        if dynamic_seed is None:
            env.seed(seed)
        else:
            env.seed(seed, dynamic_seed=dynamic_seed)

    def reset(self, env_id: int) -> Any:
        """Reset one env with its reset params, retrying per ``max_retry`` / ``retry_type``.

        Raises:
            EnvError: With the last attempt's traceback when every attempt fails.
        """
        attempts = self.cfg["max_retry"]
        for attempt in range(1, attempts + 1):
            try:
                obs = self.envs[env_id].reset(**self.reset_params[env_id])
                self.check_obs(env_id, obs, "reset obs")
                return obs
            except Exception as error:  # noqa: BLE001 - retried, then re-raised with the env's context
                if attempt == attempts:
                    raise EnvError(
                        env_id, "reset", f"{type(error).__name__}: {error}", traceback.format_exc()
                    ) from error
                time.sleep(self.cfg["retry_waiting_time"])
                if self.cfg["retry_type"] == "renew":
                    self.renew(env_id)
        raise AssertionError("unreachable")

    def step(self, env_id: int, action: Any, reset_on_done: bool) -> StepRecord:
        """Step one env; auto-reset it when its episode ends and ``reset_on_done``.

        An exception in ``env.step`` is captured in the record; with
        ``step_error='abnormal'`` the env is then renewed (and reset when
        ``reset_on_done``). A failing auto-reset raises.
        """
        try:
            fields = self._steppers[env_id](action)
            self._check(fields.obs, env_id, "step obs")  # not check_obs: one call less per step
        except Exception as error:  # noqa: BLE001 - reported per env, after the other envs stepped
            env_error = EnvError(env_id, "step", f"{type(error).__name__}: {error}", traceback.format_exc())
            env_error.__cause__ = error
            ready = None
            if self.cfg["step_error"] == "abnormal":
                self.renew(env_id)
                ready = self.reset(env_id) if reset_on_done else None
            return None, ready, env_error
        if fields.done:
            return fields, self.reset(env_id) if reset_on_done else None, None
        return fields, fields.obs, None

    def renew(self, env_id: int) -> None:
        """Replace one env with a fresh one from its constructor, keeping its seed."""
        old = self.envs[env_id]
        self.envs[env_id] = self.env_fn[env_id]()
        self._steppers[env_id] = stepper_of(self.envs[env_id])
        if env_id in self.seeds:
            self.seed(env_id, *self.seeds[env_id])
        try:
            old.close()
        except Exception as error:  # noqa: BLE001 - a broken env may fail to close; warn and go on
            warnings.warn(f"env {env_id} raised while closing before renewal: {error!r}", stacklevel=2)

    def check_obs(self, env_id: int, obs: Any, field: str) -> None:
        """Raise ``EnvDataError`` unless ``obs`` matches the layout exactly."""
        self._check(obs, env_id, field)

    def close(self) -> list[tuple[int, str]]:
        """Close every env; return ``(env_id, error text)`` for each failure (all envs are attempted)."""
        failures = []
        for env_id, env in self.envs.items():
            try:
                env.close()
            except Exception as error:  # noqa: BLE001 - close them all, then report
                failures.append((env_id, f"{type(error).__name__}: {error}"))
        self.envs = {}
        return failures


def _no_check(obs: Any, env_id: int, field: str) -> None:
    """The observation check when no layout is set."""

"""Run an env written against the legacy gym API (or any env that is not a Gymnasium env) as a Gymnasium env.

Such envs are recognised without importing gym: anything that is not a ``gymnasium.Env``.
That covers gym up to 0.21 (``reset()`` returns the observation, ``step()`` four values,
seeding through ``env.seed(seed)``), gym 0.22-0.25 (the same, with ``reset(seed=...)``
accepted too), gym 0.26 (Gymnasium's five values, but gym's own spaces and no ``seed()``), and
duck-typed envs of either API.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import io
import sys
from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.errors import ConfigError


def is_legacy_env(env: Any) -> bool:
    """True for an env that is not a Gymnasium env, which ``LegacyGymEnv`` then adapts."""
    return not isinstance(env, gym.Env)


def to_gymnasium_space(space: Any) -> gym.spaces.Space:
    """Rebuild a legacy gym space as the matching Gymnasium space.

    Raises:
        TypeError: For a space of a kind Gymnasium has no counterpart for.
    """
    if isinstance(space, gym.spaces.Space):
        return space
    kind = type(space).__name__
    if kind == "Discrete":
        return gym.spaces.Discrete(int(space.n), start=int(getattr(space, "start", 0)))
    if kind == "Box":
        return gym.spaces.Box(low=np.asarray(space.low), high=np.asarray(space.high), dtype=space.dtype)
    if kind == "MultiDiscrete":
        return gym.spaces.MultiDiscrete(np.asarray(space.nvec))
    if kind == "MultiBinary":
        return gym.spaces.MultiBinary(space.n)
    if kind == "Dict":
        return gym.spaces.Dict({key: to_gymnasium_space(sub) for key, sub in space.spaces.items()})
    if kind == "Tuple":
        return gym.spaces.Tuple(tuple(to_gymnasium_space(sub) for sub in space.spaces))
    raise TypeError(f"cannot convert legacy gym space {space!r} to a Gymnasium space")


def without_passive_checker(env: Any) -> Any:
    """``env`` with gym 0.26's ``PassiveEnvChecker`` taken out of its wrapper chain (in place).

    That checker tests ``isinstance(done, np.bool8)``: numpy 2 has no ``bool8`` (numpy 1.24-1.26
    warn about it), so every gym 0.26 env made by ``gym.make`` fails its first step on numpy 2.
    Taking it out is what ``gym.make(env_id, disable_env_checker=True)`` does; it only checks the
    first reset and step, as ding_env's checker does better.
    """
    if _is_passive_checker(env):
        return env.env
    outer = env
    while _is_wrapper(outer):
        if _is_passive_checker(outer.env):
            outer.env = outer.env.env
            break
        outer = outer.env
    return env


def _is_passive_checker(env: Any) -> bool:
    kind = type(env)
    return kind.__name__ == "PassiveEnvChecker" and kind.__module__.startswith("gym.")


def _is_wrapper(env: Any) -> bool:
    return hasattr(env, "env") and env.env is not env


def legacy_gym_has(env_id: str) -> bool:
    """True when legacy gym is installed and has ``env_id`` registered."""
    if importlib.util.find_spec("gym") is None:
        return False
    return env_id in quietly_imported_gym().envs.registry


def quietly_imported_gym() -> Any:
    """The legacy ``gym`` module, imported without the notice it prints to stderr (to use Gymnasium instead).

    ding-env reaches legacy gym only for ids Gymnasium lacks (DI-engine's) or when told to
    (``is_gymnasium=False``), and says so itself where that matters.
    """
    if "gym" in sys.modules:  # imported already: its notice printed then, if ever
        return sys.modules["gym"]
    # sys.stderr is the process's: swapped only for this one import, which prints the notice.
    with contextlib.redirect_stderr(io.StringIO()):
        return importlib.import_module("gym")


# Legacy gym 0.26 envs that fail at their first steps under numpy 2, and why.
FAILS_ON_NUMPY_2 = {
    "LunarLanderContinuous-v2": "its engines hand Box2D numpy float32 impulses, which Box2D refuses",
    "CarRacing-v2": "its car hands Box2D the float32 motor speeds of continuous actions, which Box2D refuses",
    "Acrobot-v1": "its integrator asks for np.float_, which numpy 2 removed",
}


def make_legacy_gym_env(env_id: str, make_kwargs: dict | None, owner: str) -> Any:
    """``gym.make(env_id, **make_kwargs)`` with legacy gym, as DI-engine makes its envs.

    Raises:
        ConfigError: When gym is not installed or has no such id.
    """
    if importlib.util.find_spec("gym") is None:
        raise ConfigError(
            f"{owner}: is_gymnasium=False makes env_id {env_id!r} with legacy gym, which is not installed "
            "(pip install gym, or leave is_gymnasium unset to use Gymnasium)"
        )
    why = FAILS_ON_NUMPY_2.get(env_id)
    continuous = False
    if env_id in ("LunarLander-v2", "LunarLanderContinuous-v2"):  # one env: continuous=... decides which
        continuous = bool((make_kwargs or {}).get("continuous", env_id == "LunarLanderContinuous-v2"))
        why = FAILS_ON_NUMPY_2["LunarLanderContinuous-v2"] if continuous else None
    if env_id == "CarRacing-v2":  # discrete actions (continuous=False, DI-engine's default) step under numpy 2
        continuous = bool((make_kwargs or {}).get("continuous", True))
        why = why if continuous else None
    if why is not None and int(np.__version__.split(".")[0]) >= 2:
        from ding_env.env.gym_ids import latest_version  # the env layer's: imported when an id needs it

        current = latest_version(env_id)
        if current is not None:
            instead = f"set env_id to Gymnasium's {current!r}"
        elif env_id in gym.registry:  # Gymnasium's own id is the newest
            instead = f"make it with Gymnasium, which has {env_id!r} (leave is_gymnasium unset)"
        else:
            instead = "make the env with Gymnasium"
        made = f"{env_id!r} with continuous=True" if continuous and env_id == "LunarLander-v2" else repr(env_id)
        raise ConfigError(f"{owner}: legacy gym's {made} cannot step under numpy {np.__version__}: {why}; {instead}")
    legacy_gym = quietly_imported_gym()

    # gym's passive env checker only warns, and under numpy 2 it fails on np.bool8
    kwargs = {"disable_env_checker": True, **dict(make_kwargs or {})}
    try:
        return legacy_gym.make(env_id, **kwargs)
    except legacy_gym.error.Error as error:
        raise ConfigError(f"{owner}: env_id {env_id!r} is not available in legacy gym: {error}") from error


def _renders_rgb_array_per_call(env: Any, metadata: dict) -> bool:
    """Whether ``env.render`` takes a ``mode`` per call (gym before 0.26) and lists ``'rgb_array'`` among its modes."""
    modes = metadata.get("render.modes") or metadata.get("render_modes") or ()  # gym < 0.22, gym 0.22-0.25
    try:
        takes_mode = "mode" in inspect.signature(env.render).parameters
    except (TypeError, ValueError, AttributeError):  # no render, or one without a signature
        return False
    return takes_mode and "rgb_array" in modes


def replay_make_kwargs() -> dict:
    """What ``gym.make`` takes for an env whose frames are recorded: its render mode of one frame per call.

    gym 0.26 takes ``render_mode='rgb_array'``; gym 0.25 named that mode ``'single_rgb_array'`` (its
    ``'rgb_array'`` gives a list of frames); older gym takes the mode at each ``render`` call instead.
    """
    version = tuple(int(part) for part in quietly_imported_gym().__version__.split(".")[:2] if part.isdigit())
    if version >= (0, 26):
        return {"render_mode": "rgb_array"}
    return {"render_mode": "single_rgb_array"} if version >= (0, 25) else {}


class LegacyGymEnv(gym.Env):
    """Gymnasium API over a legacy-gym env.

    ``step`` splits the legacy ``done`` into ``terminated`` and ``truncated``
    using ``info['TimeLimit.truncated']``, as gym's TimeLimit reported it.

    Args:
        env: The legacy env instance.
    """

    def __init__(self, env: Any) -> None:
        self.legacy_env = env = without_passive_checker(env)
        self.observation_space = to_gymnasium_space(env.observation_space)
        self.action_space = to_gymnasium_space(env.action_space)
        # Gymnasium 1.x dropped reward_range; legacy code (DI-engine's envs) still reads it.
        self.reward_range = tuple(getattr(env, "reward_range", (-float("inf"), float("inf"))))
        self.metadata = dict(getattr(env, "metadata", {}) or {})
        # gym 0.26 envs take their render mode at make; older ones at each render(mode=...) call.
        self.render_mode = getattr(env, "render_mode", None)
        self._render_mode_per_call = self.render_mode is None and _renders_rgb_array_per_call(env, self.metadata)
        if self._render_mode_per_call:
            self.render_mode = "rgb_array"
        self.spec = (
            getattr(env, "spec", None)
            if isinstance(getattr(env, "spec", None), gym.envs.registration.EnvSpec)
            else None
        )

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """Reset; a seed goes through ``env.seed`` where the env has one, else to ``reset(seed=...)`` (gym 0.26).

        ``options`` go to ``reset(options=...)`` (gym 0.26); an env whose reset takes none refuses them.
        """
        seeder = getattr(self.legacy_env, "seed", None)
        if seed is None or callable(seeder):
            if seed is not None:
                seeder(seed)
            if options is None:
                return self._observation_and_info(self.legacy_env.reset())
            try:
                return self._observation_and_info(self.legacy_env.reset(options=options))
            except TypeError as error:
                raise TypeError(
                    f"legacy env {self.legacy_env!r}: reset options {sorted(options)[:10]} were given, and its "
                    f"reset() may take none ({error})"
                ) from error
        try:
            result = self.legacy_env.reset(seed=seed, **({} if options is None else {"options": options}))
        except TypeError as error:
            raise TypeError(
                f"legacy env {self.legacy_env!r} has no seed() method and its reset() takes no seed, "
                f"so it cannot be seeded ({error})"
            ) from error
        return self._observation_and_info(result)

    def _observation_and_info(self, result: Any) -> tuple[Any, dict]:
        """A reset's ``(obs, info)`` (gym 0.26) or bare observation (older gym), as ``(obs, info)``."""
        if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict):
            space = self.observation_space
            if not (isinstance(space, gym.spaces.Tuple) and space.contains(result)):
                return result[0], dict(result[1])
        return result, {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """Step and split ``done`` into terminated/truncated."""
        result = self.legacy_env.step(action)
        if len(result) == 5:
            return result
        obs, reward, done, info = result
        info = dict(info or {})
        truncated = bool(done and info.pop("TimeLimit.truncated", False))
        return obs, reward, bool(done) and not truncated, truncated, info

    def render(self) -> Any:
        """The legacy env's frame: ``render()`` of a gym 0.26 env, ``render(mode='rgb_array')`` of an older one."""
        if self._render_mode_per_call:
            return self.legacy_env.render(mode="rgb_array")
        return self.legacy_env.render()

    def close(self) -> None:
        """Close the legacy env."""
        self.legacy_env.close()


class GymToGymnasiumWrapper:
    """DI-engine's ``GymToGymnasiumWrapper``: a Gymnasium env behind the legacy gym API.

    Despite the name (DI-engine's), it goes from Gymnasium to gym, for code written against
    gym: ``seed(s)`` seeds the next ``reset()``, which returns the observation alone, and
    ``step`` returns ``(obs, reward, done, info)``. Unlike DI-engine's, truncation is not
    lost: a step cut short by a time limit says so in ``info['TimeLimit.truncated']``, as
    gym's ``TimeLimit`` did, and a later reset continues the seeded generator instead of
    replaying the seeded episode. ``DingEnvWrapper`` reads such an env (or a wrapper chain
    ending in one) back into Gymnasium's API with ``terminated`` and ``truncated`` apart.

    Args:
        env: A Gymnasium env.
    """

    def __init__(self, env: gym.Env) -> None:
        if not isinstance(env, gym.Env):
            raise TypeError(f"GymToGymnasiumWrapper wraps a Gymnasium env, got {type(env).__name__}")
        self.env = env
        self._seed: int | None = None

    def seed(self, seed: int | None = None) -> list[int | None]:
        """Seed the next ``reset()``."""
        self._seed = seed
        return [seed]

    def reset(self) -> Any:
        """Reset (seeded once after ``seed()``) and return the observation."""
        seed, self._seed = self._seed, None
        obs, _ = self.env.reset(seed=seed)
        return obs

    def step(self, action: Any) -> tuple[Any, Any, bool, dict]:
        """Step; ``done`` is ``terminated or truncated``, and a truncation is marked in the info."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        done = bool(terminated or truncated)
        if done:
            info = dict(info, **{"TimeLimit.truncated": bool(truncated and not terminated)})
        return obs, reward, done, info

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "env":
            raise AttributeError(name)
        return self.env.get_wrapper_attr(name)  # anywhere in the chain, as gym's wrappers forwarded it


_LEGACY_API = ("reset", "step", "observation_space", "action_space")  # anything else gets Gymnasium's TypeError


class AcceptsLegacyGym:
    """Mixed into ding_env's Gymnasium wrappers: given a legacy gym env, a wrapper speaks gym's API back.

    ``EvalEpisodeReturnWrapper(gym.make('HalfCheetah-v4'))`` of legacy gym (what DI-engine's env
    code does with its wrappers) becomes ``GymToGymnasiumWrapper(EvalEpisodeReturnWrapper(
    LegacyGymEnv(env)))``: the wrapper works on the Gymnasium view, and the caller keeps gym's
    ``seed()``, ``reset() -> obs`` and four-value ``step()``, with a time limit marked in
    ``info['TimeLimit.truncated']``. A Gymnasium env is wrapped as usual.
    """

    def __new__(cls, env: Any = None, *args: Any, **kwargs: Any) -> Any:
        """The wrapper itself for a Gymnasium env; for a legacy one, the wrapper behind gym's API."""
        if env is not None and is_legacy_env(env) and all(hasattr(env, name) for name in _LEGACY_API):
            return GymToGymnasiumWrapper(cls(LegacyGymEnv(env), *args, **kwargs))
        return super().__new__(cls)

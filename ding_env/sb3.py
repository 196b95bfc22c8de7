"""A Stable-Baselines3 ``VecEnv`` over any env manager: SB3's algorithms train through ding_env's managers.

Needs the ``sb3`` extra (``pip install 'ding-env[sb3]'``). A finished env is reset within
its step, as SB3's own vec envs do: the step returns the reset observation, the true
final one is in ``info["terminal_observation"]``, and ``info["TimeLimit.truncated"]`` says
the episode was cut short rather than ended (SB3 bootstraps from the terminal
observation then).
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import iterate

from ding_env.lockstep import Lockstep, rewards_of

try:
    _vec_env = importlib.import_module("stable_baselines3.common.vec_env")
except ImportError as error:  # pragma: no cover - the message is what matters
    raise ImportError(
        f"ding_env.sb3 needs Stable-Baselines3 ({error}); install it with: pip install 'ding-env[sb3]'"
    ) from error


class ManagerVecEnv(_vec_env.VecEnv):
    """SB3's ``VecEnv`` over an env manager of any type.

    Args:
        manager: The manager, launched or not (it is launched here, as SB3's vec envs build their envs
            at once); ``close()`` closes it. Its envs must auto-reset forever (``auto_reset=True``,
            ``episode_num=inf``, the defaults) and be ``BaseEnv`` s (a Gymnasium env in a
            ``DingEnvWrapper``).

    Example::

        from stable_baselines3 import PPO

        cartpole = lambda: DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
        venv = ManagerVecEnv(create_env_manager({"type": "subprocess"}, [cartpole] * 8))
        PPO("MlpPolicy", venv, seed=0).learn(50_000)

    ``seed(s)`` gives env ``i`` the seed ``s + i`` at the next ``reset()``, a dynamic seed: every
    episode, the first included, draws its seed reproducibly from it. So env ``i``'s first
    observation is not ``gym.make(...).reset(seed=s + i)``'s, as it is in ``DummyVecEnv``, though the
    same ``s`` always gives the same episodes. ``get_attr``, ``set_attr`` and ``env_method`` read,
    set or call the envs' own attributes through the manager (``manager.set_env_attr`` and
    ``manager.call_env_method``), for every env or those ``indices`` names.

    ``render_mode`` is the envs' (SB3 asks all of them to have the same one), ``metadata`` has env
    0's ``render_fps`` (what ``VecVideoRecorder`` reads), and ``get_images()`` returns every env's
    frame, as ``DummyVecEnv``'s does, so ``render()`` and ``VecVideoRecorder`` work.

    Raises:
        TypeError: For something else than a manager (env factories, a ``ManagerVectorEnv``).
        EnvError: From the manager's launch, for one whose ``env_fn`` return Gymnasium envs not in
            ``DingEnvWrapper`` (naming the env and how to wrap it).
        ValueError: For a manager whose envs do not auto-reset forever.
    """

    def __init__(self, manager: Any) -> None:
        # Launches the manager: SB3 reads env attributes (render_mode) as the VecEnv is built.
        self._lockstep = Lockstep(manager, "ManagerVecEnv")
        self.manager = manager
        self._actions: Any = None
        self._options_held = False  # the manager holds options of set_options() for the envs' resets
        try:  # SB3's own checks (one render mode for every env) come after the launch: nothing is left running
            super().__init__(
                self._lockstep.num_envs, self._lockstep.single_observation_space, self._lockstep.single_action_space
            )
        except BaseException:
            self._lockstep.close()
            raise
        # SB3's own render_modes stay; the envs' other keys (render_fps) are for VecVideoRecorder, which reads the
        # metadata of a VecEnv that is not one of SB3's own.
        self.metadata = {**self._lockstep.metadata(), **self.metadata}

    def reset(self) -> Any:
        """Reset every env, with the seeds of ``seed()`` and the options of ``set_options()`` if given.

        The manager keeps the options for the envs' auto-resets until the next ``reset()``, which without
        new options resets them with none (SB3's own vec envs give them to this one reset only).
        """
        seeds = None if all(seed is None for seed in self._seeds) else list(self._seeds)
        reset_param = None
        if any(self._options) or self._options_held:  # new options, or the last ones to take back
            reset_param = {env_id: dict(options or {}) for env_id, options in enumerate(self._options)}
        self._options_held = any(self._options)
        obs = self._lockstep.reset(seeds, reset_param)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Keep the actions for :meth:`step_wait` (the managers step in one call).

        Float actions a rounding error outside a ``Box``'s bounds are put on them: SB3's off-policy
        algorithms (TD3, SAC, DDPG) map ``[-1, 1]`` back to the bounds in float32, which may land a unit in
        the last place outside, where the managers refuse an action outside its space. Values further out
        are left to be refused.
        """
        self._actions = on_bounds(self._lockstep.single_action_space, actions)

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict]]:
        """Step every env: ``(obs, rewards, dones, infos)`` as SB3's ``DummyVecEnv`` returns them."""
        obs, batch = self._lockstep.step(self._actions)
        infos = [dict(info) for info in batch.info]
        done_rows = np.flatnonzero(batch.done).tolist()
        if done_rows:
            step_obs = list(iterate(self._lockstep.observation_space, batch.obs))
            for row in done_rows:
                infos[row]["terminal_observation"] = step_obs[row]
        for info, truncated in zip(infos, batch.truncated.tolist(), strict=True):
            info["TimeLimit.truncated"] = truncated
        return obs, rewards_of(batch).astype(np.float32), batch.done, infos

    def close(self) -> None:
        """Close the manager and its envs."""
        self._lockstep.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The attribute ``attr_name`` of the envs ``indices`` (default: every env)."""
        try:
            values = self._lockstep.env_attribute(attr_name)
        except AttributeError:
            if attr_name != "render_mode":
                raise
            values = [None] * self.num_envs  # an env without render_mode does not render, as in gym.Env
        if callable(values):
            raise AttributeError(f"{attr_name!r} is a method of the envs: call it with env_method")
        return [values[index] for index in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set attribute ``attr_name`` of the envs ``indices`` (default: all) to ``value``, as SB3's vec envs do."""
        selected = list(self._get_indices(indices))
        self._lockstep.set_env_attribute(attr_name, [value] * len(selected), selected)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """Call ``method_name`` on the envs ``indices`` (default: all); one result per env, in order."""
        selected = list(self._get_indices(indices))
        method = self._lockstep.env_attribute(method_name)  # checks the name: a method the envs have
        if not callable(method):
            raise AttributeError(f"{method_name!r} is an attribute of the envs, not a method: read it with get_attr")
        return self.manager.call_env_method(method_name, *method_args, env_ids=selected, **method_kwargs)

    def get_images(self) -> list[Any]:
        """Every env's frame (its ``render()``), as ``DummyVecEnv.get_images`` returns them.

        Not in ``rgb_array`` mode, a warning and one None per env, as ``DummyVecEnv`` gives.
        """
        if self.render_mode != "rgb_array":
            warnings.warn(
                f"The render mode is {self.render_mode}, but this method assumes it is `rgb_array` to obtain images.",
                stacklevel=2,
            )
            return [None] * self.num_envs
        return self._lockstep.render()

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """Whether each env's Gymnasium env is wrapped in a ``wrapper_class``, as ``DummyVecEnv`` says.

        The Gymnasium env inside a ``DingEnvWrapper`` is looked at (SB3's ``Monitor`` there is found); an env
        with no Gymnasium env (a ``BaseEnv`` of its own) is wrapped in nothing.
        """
        selected = list(self._get_indices(indices))
        try:
            self._lockstep.env_attribute("wrapper_class_names")
        except AttributeError:
            return [False] * len(selected)
        name = f"{wrapper_class.__module__}.{wrapper_class.__qualname__}"
        return [name in names for names in self.manager.call_env_method("wrapper_class_names", env_ids=selected)]


def on_bounds(space: Any, actions: Any) -> Any:
    """``actions`` of the ``Box`` ``space`` with values a few float32 rounding errors outside its bounds clipped."""
    if not (isinstance(space, spaces.Box) and space.dtype.kind == "f"):
        return actions
    if not (isinstance(actions, np.ndarray) and actions.dtype.kind == "f"):
        return actions
    clipped = np.clip(actions, space.low, space.high)
    if clipped is actions or np.array_equal(clipped, actions):
        return actions
    slack = _ROUNDING * np.maximum(1.0, np.maximum(np.abs(space.low), np.abs(space.high)))
    return clipped if np.all(np.abs(clipped - actions) <= slack) else actions


# A few float32 units in the last place, relative to the bounds' magnitude.
_ROUNDING = 4 * float(np.finfo(np.float32).eps)

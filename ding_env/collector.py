"""Driving a (collector) env manager with a policy and yielding transition batches.

Works with every manager, including the async one whose steps return other
envs than the ones just stepped: each env's last observation and action are
kept until its result arrives. With ``device``, the policy gets torch tensors
and the batches hold tensors (``ding_env.torch_adapter``; the ``torch`` extra).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from ding_env.config import is_count
from ding_env.env.spaces import ARRAY_SPACES
from ding_env.env_manager import BaseEnvManager, arrays
from ding_env.env_manager.status import EnvStatus
from ding_env.errors import EnvStateError


class TransitionBatch(NamedTuple):
    """Transitions of one step, row ``k`` belonging to ``env_id[k]``.

    Attributes:
        env_id: int64 array of env ids.
        obs: Observations the actions were taken in.
        action: The actions.
        reward: ``(n, 1)`` rewards.
        next_obs: Observations after the actions: the true final observation
            where ``done`` (never a reset one).
        done: ``(n,)`` bool: the episode ended.
        truncated: ``(n,)`` bool: it ended at a time limit (bootstrap from ``next_obs``).
        info: List of info dicts.
    """

    env_id: np.ndarray
    obs: Any
    action: np.ndarray
    reward: np.ndarray
    next_obs: Any
    done: np.ndarray
    truncated: np.ndarray
    info: list

    @property
    def terminated(self) -> np.ndarray:
        """``(n,)`` bool: the episode reached a terminal state (do not bootstrap)."""
        return self.done & ~self.truncated


Policy = Callable[[Any], Any]


def policy_actions(
    policy: Policy, obs: Any, count: int, per_env: bool = False, env_ids: np.ndarray | None = None
) -> np.ndarray:
    """``policy(obs)`` as an array of ``count`` actions, one per observation row.

    A policy with a true ``takes_env_ids`` attribute (``ding_env.policies``) is called as
    ``policy(obs, env_ids)`` when ``env_ids`` are given. With ``per_env`` (an action space of no
    one-array batch: ``Dict``, ``Tuple``) each action is one object of a 1-d object array, however
    numpy would stack them.

    Raises:
        ValueError: Naming the policy, how many actions it returned and how many envs were ready.
    """
    returned = policy(obs, env_ids) if env_ids is not None and getattr(policy, "takes_env_ids", False) else policy(obs)
    if per_env and isinstance(returned, (list, tuple, np.ndarray)):
        actions = np.empty(len(returned), dtype=object)
        actions[:] = list(returned)  # one object per row: never stacked into a 2-d array
    else:
        actions = np.asarray(returned)
    if actions.ndim == 0 or len(actions) != count:
        if returned is None:
            got = "None"
        else:
            got = "a scalar" if actions.ndim == 0 else f"{len(actions)} actions (shape {actions.shape})"
        code = getattr(policy, "__code__", None)  # where a function policy is defined, for the user to look
        where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
        raise ValueError(
            f"policy {getattr(policy, '__qualname__', policy)!r}{where} returned {got} for {count} observations; "
            f"return one action per row of the observation batch"
        )
    return actions


def check_progress(manager: BaseEnvManager, env_ids: np.ndarray, what: str) -> None:
    """Raise when none of ``env_ids`` is to step and no env is stepping: no step could ever change that.

    Raises:
        EnvStateError: Naming the envs that wait for a reset or have run their ``episode_num`` episodes.
    """
    if len(env_ids):
        return
    status = manager.env_status  # read only when nothing steps
    if any(state == EnvStatus.STEPPING for state in status.values()):
        return
    waiting = [env_id for env_id, state in status.items() if state == EnvStatus.NEEDS_RESET]
    finished = [env_id for env_id, state in status.items() if state == EnvStatus.FINISHED]
    why = [f"envs {waiting[:20]} need a reset (auto_reset is off)"] if waiting else []
    why += [f"envs {finished[:20]} ran their episode_num episodes"] if finished else []
    raise EnvStateError(
        f"{what}: no env can step and none is stepping, so it would wait for ever: {', '.join(why)}; turn "
        "auto_reset on, raise episode_num, or ask for fewer steps or episodes"
    )


def collect(
    manager: BaseEnvManager,
    policy: Policy,
    n_steps: int | None = None,
    device: Any = None,
    step_every_env: bool | None = None,
) -> Iterator[TransitionBatch]:
    """Step ``manager`` with ``policy`` and yield one :class:`TransitionBatch` per manager step.

    Args:
        manager: A launched manager (auto-reset keeps envs running).
        policy: Maps a batch of observations to a batch of actions.
        n_steps: Collect exactly this many env steps (None: until ``manager.done``): the last manager step
            takes actions for only as many ready envs as steps remain (the lowest ids, so the same seed
            gives the same batches), and envs still in flight (async managers) are waited for, so none is
            stepped past ``n_steps``. Called again and again, a multiple of ``manager.env_num`` gives every
            env the same share of the steps; another ``n_steps`` steps the lowest ids once more per call.
        device: None: numpy in and out. A torch device (``"cpu"``, ``"cuda"``): the policy gets
            the observations as tensors on it and may return a tensor; the batches hold tensors
            (``env_id`` and ``info`` stay numpy and Python).
        step_every_env: Step every ready env, as lockstep batch envs (a Gymnasium vector env) need: they
            step all their sub-envs or none, so the last manager step may take up to one batch past
            ``n_steps``. None: whether the manager hosts one (``manager.lockstep``).

    Returns:
        An iterator of batches whose arrays are copies, safe to keep.

    Raises:
        ValueError: For ``n_steps`` not None nor an int >= 1 (at the call, before any step).
    """
    if n_steps is not None and not is_count(n_steps):
        raise ValueError(f"collect: n_steps must be an int >= 1 or None (until manager.done), got {n_steps!r}")
    if step_every_env is None:
        step_every_env = manager.lockstep
    if device is None:
        return _collect_numpy(manager, policy, n_steps, step_every_env)
    return _collect_torch(manager, policy, n_steps, device, step_every_env)


def _collect_torch(
    manager: BaseEnvManager, policy: Policy, n_steps: int | None, device: Any, step_every_env: bool
) -> Iterator[TransitionBatch]:
    from ding_env.torch_adapter import TorchConverter  # torch is imported only when a device is asked for

    converter = TorchConverter(device)

    @functools.wraps(policy)  # errors about its actions name the caller's policy
    def numpy_policy(obs: Any, *env_ids: np.ndarray) -> Any:  # env_ids: for a policy that takes_env_ids
        return converter.to_numpy(policy(converter.to_torch(obs, ("policy",)), *env_ids))

    numpy_policy.takes_env_ids = getattr(policy, "takes_env_ids", False)  # a class attribute: wraps misses it

    to_torch = converter.to_torch
    for batch in _collect_numpy(manager, numpy_policy, n_steps, step_every_env):
        yield batch._replace(
            obs=to_torch(batch.obs, ("obs",)),
            action=to_torch(batch.action, ("action",)),
            reward=to_torch(batch.reward, ("reward",)),
            next_obs=to_torch(batch.next_obs, ("next_obs",)),
            done=to_torch(batch.done, ("done",)),
            truncated=to_torch(batch.truncated, ("truncated",)),
        )


def _collect_numpy(
    manager: BaseEnvManager, policy: Policy, n_steps: int | None, step_every_env: bool
) -> Iterator[TransitionBatch]:
    layout = arrays.layout_of(manager.observation_space)
    last_obs = arrays.allocate(layout, manager.env_num)
    last_action: np.ndarray | None = None
    per_env = not isinstance(manager.action_space, ARRAY_SPACES)  # the managers take a list of such actions
    steps = sent = 0  # env steps returned, and actions sent (an async manager returns some of them later)
    while (n_steps is None or steps < n_steps) and not manager.done:
        ready = manager.ready_obs_batch
        env_ids, obs = ready.env_id, ready.obs
        if n_steps is not None and not step_every_env and len(env_ids) > n_steps - sent:
            # The last steps: only as many envs as steps remain, so the count comes out exact.
            env_ids, obs = env_ids[: n_steps - sent], arrays.take(obs, slice(0, n_steps - sent))
        if len(env_ids):
            actions = policy_actions(policy, obs, len(env_ids), per_env, env_ids)
            if last_action is None:
                last_action = np.zeros((manager.env_num, *actions.shape[1:]), dtype=actions.dtype)
            arrays.write(last_obs, env_ids, obs)
            last_action[env_ids] = actions
            sent += len(env_ids)
            batch = manager.step_batch(env_ids, actions)
        else:
            check_progress(manager, env_ids, f"collect({n_steps} steps) after {steps}")
            batch = manager.step_batch(np.zeros(0, dtype=np.int64), np.zeros((0, *last_action.shape[1:])))
        if not len(batch.env_id):
            continue
        rows = batch.env_id
        steps += len(rows)
        yield TransitionBatch(
            rows.copy(),
            arrays.take(last_obs, rows),
            last_action[rows],
            batch.reward.copy(),
            arrays.map_tree(np.copy, batch.obs),
            batch.done.copy(),
            batch.truncated.copy(),
            batch.info,
        )

"""``EnvPoolRunner``: one EnvPool pool stepped for the ``env_pool`` type, in EnvPool's sync or async mode.

``step`` sends the actions of ready envs to the pool and hands back their results as timesteps,
straight from EnvPool's stacked arrays: no batch-env and manager layers in between, which would
cost about as much as the pool's own step on envs such as MuJoCo's (``benchmarks/RESULTS.md``).

- ``batch_size == env_num`` (EnvPool's synchronous mode): ``step`` returns the result of every env
  it stepped, and an env whose episode ended is restarted before ``step`` returns, so every env is
  ready again.
- ``batch_size < env_num`` (EnvPool's asynchronous mode): the pool steps, in its threads, every env
  it has an action for, and ``step`` returns the first ``batch_size`` results to arrive: the envs
  whose results are not returned keep running while the caller's policy computes for the returned
  ones (EnvPool's ``send`` / ``recv``). An env whose episode ended is ready again once its restart
  has arrived and its done step has been returned.

In both modes the done step carries the true final observation, and ``truncated`` and
``eval_episode_return`` (the raw game return) in its info; an env is restarted with EnvPool's own
reset (a step whose action it ignores, as ``EnvPoolBatchEnv`` resets it), which never appears as a
transition. With the same seeds and each env given the same actions, every env's trajectory is the
same in both modes, and the one ``EnvPoolBatchEnv`` gives it in any manager; which envs come back in
which asynchronous batch depends on EnvPool's threads.

A step or reset interrupted on its way through the pool (Ctrl-C inside EnvPool's ``send`` or ``recv``)
leaves the envs in no known state: later steps raise ``EnvStateError``, never waiting for results that
may not come, until ``start`` makes a new pool.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import islice
from typing import Any

import numpy as np

from ding_env.env.batch_sources.envpool_env import EnvPoolBatchEnv, idle_actions
from ding_env.env.seeding import derive_seeds
from ding_env.env.timestep import BaseEnvTimestep, final_info
from ding_env.env_manager.actions import ActionChecker
from ding_env.errors import EnvStateError


class EnvPoolRunner:
    """The envs of ``pool_env``'s task in one EnvPool pool that returns up to ``batch_size`` results per ``step``.

    Args:
        pool_env: The task and its settings (``EnvPoolBatchEnv.make_pool``); its own pool is never made.
        batch_size: Results per ``step``: ``pool_env.num_envs`` for the synchronous mode, fewer for the
            asynchronous one.
        owner: Names the manager in error messages.
    """

    def __init__(self, pool_env: EnvPoolBatchEnv, batch_size: int, owner: str) -> None:
        self.pool_env = pool_env
        self.env_num = pool_env.num_envs
        self.batch_size = batch_size
        self.synchronous = batch_size == self.env_num
        # EnvPool's recv waits for this many results (the synchronous pool: for as many as were sent).
        # While the caller acts on every ready env, at least env_num - batch_size + 1 envs are running
        # whenever an asynchronous step still needs results: never more.
        self.recv_size = self.env_num if self.synchronous else min(batch_size, self.env_num - batch_size + 1)
        self.pool: Any = None
        # Observations are kept as rows of the arrays EnvPool returned (new arrays at every recv, which
        # nothing writes again); the caller gets copies of its own (timesteps here, ready_obs in the manager).
        self.ready: dict[int, np.ndarray] = {}  # env id -> the observation to act on
        # Results arrived and not returned yet, oldest first: env id -> (timestep, its observation's row).
        self.held: dict[int, tuple[BaseEnvTimestep, np.ndarray]] = {}
        self.restarted: dict[int, np.ndarray] = {}  # first observations of envs whose done step is held
        self.running: set[int] = set()  # envs stepping or restarting in the pool
        self.restarting = np.zeros(self.env_num, dtype=bool)
        self.game_returns = np.zeros(self.env_num, dtype=np.float64)
        self.owner = owner
        self.check_actions = ActionChecker(pool_env.action_space, owner).check_mapping
        self.interrupted: str | None = None  # what interrupted a step or reset in EnvPool's calls, until start()

    def start(self, seed: int) -> None:
        """Make a new pool (env ``i`` seeded with ``seed + i``) and reset every env; wait for ``batch_size`` of them."""
        self.close()
        self.pool = self.pool_env.make_pool(derive_seeds(seed, self.env_num), self.recv_size)
        self.interrupted = None
        self._in_pool(self._reset_all)

    def reset(self) -> None:
        """The synchronous mode's new episodes: reset each env in its pool, its episodes going on from its seed."""
        self._in_pool(self._reset_all)

    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """Send ``actions`` (of ready envs) and return the results, up to ``batch_size`` of those that arrived first.

        The synchronous mode returns every stepped env's result. The asynchronous one returns fewer
        (even none) when too few envs are running for EnvPool to gather another batch: when envs that
        restarted during the step became ready, or the caller left ready envs without an action.
        Their results come back in later steps.

        Raises:
            ValueError: For an action outside the action space (naming its env id), or (asynchronous
                mode) for no actions when no result can come back (naming the ready envs).
            EnvStateError: After a step or reset that was interrupted (``start`` makes the pool again).
        """
        if self.interrupted is not None:
            raise EnvStateError(
                f"{self.owner}: an earlier step or reset was interrupted ({self.interrupted}) while EnvPool ran it, "
                "which leaves its envs in no known state; call reset() to make the pool again"
            )
        env_ids = list(actions)
        stacked = self.check_actions(np.array(env_ids, dtype=np.int64), actions) if env_ids else None
        if stacked is None and self.synchronous:
            return {}
        returned = self._in_pool(self._step, env_ids, stacked)
        if returned is None:
            raise ValueError(
                f"{self.owner}.step: no actions, and no result can come back: {len(self.running)} envs are running, "
                f"fewer than the {self.recv_size} EnvPool gathers at a time; give actions to the ready envs "
                f"{sorted(self.ready)[:20]}"
            )
        return returned

    def _in_pool(self, work: Callable[..., Any], *args: Any) -> Any:
        """``work(*args)``; anything raised on the way (Ctrl-C in EnvPool's own calls) marks the pool interrupted."""
        try:
            return work(*args)
        except BaseException as error:
            self.interrupted = type(error).__name__
            raise

    def _step(self, env_ids: list[int], stacked: np.ndarray | None) -> dict[int, BaseEnvTimestep] | None:
        """Send the checked actions of ``env_ids``, receive, and take the results to return (None: none can)."""
        if stacked is not None:
            self.pool.send(stacked.astype(self.pool.action_space.dtype, copy=False), np.array(env_ids, dtype=np.int32))
            for env_id in env_ids:
                del self.ready[env_id]
            self.running.update(env_ids)
        self._receive_for_step()
        if not (env_ids or self.held):
            return None
        # The synchronous mode: every stepped env's result, in the order asked for.
        order = env_ids if self.synchronous else list(islice(self.held, self.batch_size))
        returned = {}
        for env_id in order:
            timestep, next_obs = self.held.pop(env_id)
            returned[env_id] = timestep
            if not timestep.done:
                self.ready[env_id] = next_obs
            elif env_id in self.restarted:
                self.ready[env_id] = self.restarted.pop(env_id)
        if not (self.synchronous or self.ready):
            # Every env this step returned may be restarting: wait for one to act on, as the caller's
            # next step needs (further results are held for it).
            while not self.ready and len(self.running) >= self.recv_size:
                self._receive()
        return returned

    def _reset_all(self) -> None:
        """Reset every env in the pool; wait for all of them (synchronous) or ``batch_size`` (asynchronous)."""
        self.ready, self.held, self.restarted = {}, {}, {}
        self.running = set(range(self.env_num))
        self.restarting[:] = True
        self.pool.async_reset()
        while len(self.ready) < self.batch_size:
            self._receive()

    def _receive_for_step(self) -> None:
        """Receive what a step waits for: every running env (synchronous), or ``batch_size`` results."""
        if self.synchronous:
            while self.running:  # the stepped envs, then the restarts of those whose episode ended
                self._receive()
            return
        while len(self.held) < self.batch_size and len(self.running) >= self.recv_size:
            self._receive()

    def _receive(self) -> None:
        """Take in one batch of EnvPool results: steps become held timesteps, restarts ready observations."""
        obs, reward, terminated, truncated, info = self.pool.recv()
        env_ids = info["env_id"].tolist()
        self.running.difference_update(env_ids)  # first: whatever fails below, recv never waits for them again
        obs = self.pool_env.convert_obs(obs)
        raw = info.get("reward", reward)  # unclipped when EnvPool clips the reward
        ended = []
        for row, env_id in enumerate(env_ids):
            if self.restarting[env_id]:
                self.restarting[env_id] = False
                if info["elapsed_step"][row] == 0:  # a new game (after a lost life the game goes on)
                    self.game_returns[env_id] = 0.0
                (self.restarted if env_id in self.held else self.ready)[env_id] = obs[row]
                continue
            self.game_returns[env_id] += raw[row]
            done = bool(terminated[row] or truncated[row])
            step_info = {}
            if done:
                step_info = final_info(None, self.game_returns[env_id], bool(truncated[row] and not terminated[row]))
                ended.append(env_id)
            reward_row = np.array([reward[row]], dtype=np.float32)
            self.held[env_id] = BaseEnvTimestep(obs[row].copy(), reward_row, done, step_info), obs[row]
        if ended:  # EnvPool restarts an env whose episode ended when it is stepped once more, the action ignored
            self.pool.send(idle_actions(self.pool, len(ended)), np.array(ended, dtype=np.int32))
            self.restarting[ended] = True
            self.running.update(ended)

    def close(self) -> None:
        """Close the pool (its envs may be running). Safe to call more than once."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        self.ready, self.held, self.restarted, self.running = {}, {}, {}, set()

"""What the remote backend makes of a server's errors and of steps that got no reply: results in the manager's terms."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ding_env.env_manager import arrays
from ding_env.env_manager.outcome import TimestepBatch
from ding_env.env_manager.status import abnormal_info
from ding_env.errors import DingEnvError, EnvCrashedError, EnvError, EnvTimeoutError


def globalised(error: DingEnvError, offset: int, server: str) -> DingEnvError:
    """``error`` with the server's env ids turned into the manager's (the server's first env is ``offset``).

    A note names the ``server`` the env ran on.
    """
    if isinstance(error, EnvError):
        error = EnvError(error.env_id + offset, error.command, error.message, error.remote_traceback, error.op)
    elif isinstance(error, EnvCrashedError):
        error = EnvCrashedError(
            [env_id + offset for env_id in error.env_ids], error.exitcode, error.command, error.hint
        )
    elif isinstance(error, EnvTimeoutError):
        ids = [env_id + offset for env_id in error.env_ids]
        error = EnvTimeoutError(ids, error.command, error.timeout, error.grouped)
    error.add_note(f"(on server {server})")
    return error


def abnormal_batch(
    spaces: tuple,
    env_ids: np.ndarray,
    reset_on_done: np.ndarray,
    error_of: dict[int, Any],
    info_error: Exception,
    ended: bool = True,
) -> TimestepBatch:
    """Results for ``env_ids`` that have none: zero observations and rewards, each env's error in ``error_of``.

    Args:
        spaces: The envs' observation, action and reward spaces.
        env_ids: The envs, in the manager's ids.
        reset_on_done: Whether each was to restart at the end of its episode.
        error_of: ``{env_id: error}`` for every env of ``env_ids``.
        info_error: The error each env's abnormal info names.
        ended: Whether the envs' episodes count as ended (``done``): those of a lost server's envs do, as a
            crashed worker's; a step whose outcome is unknown ends none.
    """
    count = len(env_ids)
    errors = {row: error_of[env_id] for row, env_id in enumerate(env_ids.tolist())}
    obs = arrays.allocate(arrays.layout_of(spaces[0]), count)
    reward = arrays.allocate(arrays.reward_layout(spaces[2]), count)
    done, truncated = np.full(count, ended, dtype=bool), np.zeros(count, dtype=bool)
    infos = [abnormal_info(info_error) for _ in range(count)]
    return TimestepBatch(env_ids, obs, reward, done, truncated, infos, errors, reset_on_done)


def reply_batch(
    reply: dict,
    sent: np.ndarray,
    offset: int,
    server: str,
    infos: list[dict],
    claim_idle: Callable[[list[int]], dict],
) -> TimestepBatch:
    """A step reply as the manager's results for the envs ``sent``.

    Args:
        reply: The decoded reply, its env ids the server's.
        sent: The manager's ids of the envs the request stepped.
        offset: The manager's id of the server's first env.
        server: The server's address (named with its envs' errors).
        infos: The reply's infos, one per row.
        claim_idle: Takes the manager's ids of rows not sent (the idle envs of a worker the server lost);
            gives those whose results the manager takes.
    """
    env_id = reply["env_id"].astype(np.int64) + offset
    if len(env_id) == len(sent) and env_id.tolist() == sent.tolist():  # the common case: the envs sent, as sent
        env_id, kept = sent, range(len(sent))  # the ids as sent: a manager over several servers joins them at once
    else:
        keep = np.isin(env_id, sent)
        if not keep.all():  # idle envs of a worker that died: results for those the manager gives up
            claimed = claim_idle(env_id[~keep].tolist())
            keep |= np.isin(env_id, list(claimed))
        kept = np.flatnonzero(keep).tolist()
    errors = {}
    if reply["errors"]:
        row_of = {row: new for new, row in enumerate(kept)}
        errors = {
            row_of[row]: globalised(error, offset, server) for row, error in reply["errors"].items() if row in row_of
        }
        for row, new in row_of.items():  # an abnormal info names its error as the manager does, by global id
            if new in errors and infos[row].get("abnormal"):
                infos[row] = abnormal_info(errors[new])
    if len(kept) == len(env_id):
        return TimestepBatch(
            env_id, reply["obs"], reply["reward"], reply["done"], reply["truncated"], infos, errors,
            reply["reset_on_done"],
        )  # fmt: skip
    infos = [infos[row] for row in kept]
    rows = np.array(kept, dtype=np.int64)
    return TimestepBatch(
        env_id[rows], arrays.take(reply["obs"], rows), reply["reward"][rows], reply["done"][rows],
        reply["truncated"][rows], infos, errors, reply["reset_on_done"][rows],
    )  # fmt: skip

"""``RemoteBackend``: a share of a manager's envs hosted by an env server (``ding-env serve``) over ZeroMQ.

Each backend method is one request to the server (``ding_env.remote.messages``), with the server's
env ids ``0..n-1`` standing for this share's global ids; ready observations come with the step and
reset replies, so a step of the batched API is one round trip. A step is sent by ``send`` and read by
``collect``, so a manager with several servers has all of them stepping before it waits for any.

The server enforces ``step_timeout`` and ``reset_timeout`` on its workers and answers with the
usual errors; the client waits that long plus ``REPLY_MARGIN`` for the answer, and notices a server
that dies, freezes or drops off the network within ``heartbeat_timeout``. Then every env of the
server is lost: its results are abnormal, naming the server (``ServerLostCrash``), and the next
``reset`` connects again (to a restarted server, say).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from typing_extensions import override

from ding_env.env_manager import arrays
from ding_env.env_manager.backends.base import Backend, Ledger, Spaces
from ding_env.env_manager.backends.remote_results import abnormal_batch, globalised, reply_batch
from ding_env.env_manager.backends.settings import EnvSetup, RemoteSettings
from ding_env.env_manager.env_layout import BatchSlot, describe_entry
from ding_env.env_manager.outcome import TimestepBatch, in_id_order, joined, reordered
from ding_env.errors import ConfigError, DingEnvError, EnvCrashedError, EnvError, EnvTimeoutError
from ding_env.ops import Op
from ding_env.remote.errors import ServerError, ServerLostCrash, ServerLostError
from ding_env.remote.info_wire import InfoReceiver
from ding_env.remote.protocol import READY_OBS, new_client_id
from ding_env.user_warnings import warn_at_caller

if TYPE_CHECKING:
    from ding_env.remote.client import Ticket

# Seconds a reply may take beyond the server's own time limit (it replaces a hung worker first).
REPLY_MARGIN = 10.0
# A server's refusals of a client whose lease lapsed: another client holds its envs now, or held them.
LEASE_LOST = ("Busy", "NoSession")
CLOSE_TIMEOUT = 10.0
WIRE_INT_END = 2**64
WIRE_SEED_DIGITS = 4000  # a larger seed travels as its digits: as many as headers.Seed takes
WIRE_SEED_END = 10**WIRE_SEED_DIGITS


class RemoteBackend(Backend):
    """Hosts the envs ``env_fns`` names on the env server at ``address``.

    Args:
        env_fns: ``{env_id: entry}`` of the share, a constructor or a batch env's ``BatchSlot`` (the server
            builds its own envs; only the ids, and how many constructors they come from, are used).
        settings: How to reach the server, and the settings its envs get.
        name: Names the manager in errors.
        ledger: Where lost envs are reported.
        setup: The envs' seeds and reset kwargs (the manager's): a server connected again gets the seeds again.
        address: The server's endpoint, e.g. ``tcp://127.0.0.1:5555``.
    """

    returns_sorted = True  # a server steps its envs in id order (``send`` sorts a request)

    # How the server's envs get worker processes (said when a step of theirs is stuck past every limit).
    workers_hint = "serve with --workers N"

    def __init__(
        self,
        env_fns: Mapping[int, Callable[[], Any]],
        settings: RemoteSettings,
        name: str,
        ledger: Ledger,
        setup: EnvSetup,
        address: str,
    ) -> None:
        super().__init__(env_fns, name, ledger, setup)
        self.settings = settings
        self.address = address
        self.offset = self.env_ids[0]
        self.connection: Any = None  # a ServerConnection once launched
        self.spaces: Spaces | None = None
        self.lost: ServerLostCrash | None = None
        # Steps in flight, oldest first: (ticket or None once the server is lost, env ids, reset flags).
        self.pending: list[tuple[Ticket | None, np.ndarray, np.ndarray]] = []
        self.held: TimestepBatch | None = None  # results taken in before another request, for the next collect
        # The same for every connection: connecting again (after giving up a frozen server, say) takes back the lease.
        self.client_id = new_client_id()
        self.env_checked = False  # the server's name for its envs was compared with env_fn's (at the first connect)
        self.close_ticket: Ticket | None = None  # the close request sent by ``request_close``

    # ---- connection ------------------------------------------------------

    @override
    def launch(self) -> Spaces:
        self.connect()
        return self.spaces

    def connect(self) -> None:
        """Open a connection, check the server hosts this share, launch its workers with this manager's settings."""
        from ding_env.remote.client import ServerConnection  # imports zmq: only for managers that use it

        settings = self.settings
        connection = ServerConnection(
            self.address,
            settings.connect_timeout,
            settings.heartbeat_timeout,
            keys=settings.keys_dir,
            client_id=self.client_id,
            workers_hint=self.workers_hint,
        )
        try:
            if connection.env_num != len(self.env_ids):
                # --envs counts constructors: a batch env's sub-envs are one.
                constructors = sum(
                    not isinstance(entry, BatchSlot) or entry.sub_id == 0 for entry in self.env_fns.values()
                )
                served, local = connection.env_description, describe_entry(self.env_fns[self.env_ids[0]])
                other = served and local and served != local  # batch envs of another size, say
                raise ConfigError(
                    f"{self.name}: server {self.address} hosts {connection.env_num} envs"
                    f"{f' ({served}; this manager builds {local})' if other else ''}, but this manager gives it envs "
                    f"{self.env_ids[0]}..{self.env_ids[-1]} ({len(self.env_ids)}): start it with --envs {constructors}"
                    f"{' and this env config' if other else ''}, or change env_num or servers"
                )
            self.warn_other_env(connection.env_description)
            launched = connection.request(Op.LAUNCH, settings.connect_timeout, settings=settings.host.as_dict())
            spaces = tuple(launched["spaces"])
            if self.spaces is not None and spaces != self.spaces:
                raise ConfigError(f"{self.name}: server {self.address} back with spaces {spaces}, not {self.spaces}")
        except BaseException as error:
            connection.give_back(error, settings.connect_timeout)
            raise
        self.connection, self.spaces, self.lost = connection, spaces, None
        # The envs' ready observations, as the step and reset replies bring them (row k: env offset + k).
        # Reset kwargs come with every reset; seeds are given again to a server connected again.
        self.ready = arrays.allocate(arrays.layout_of(spaces[0]), len(self.env_ids))
        self.stale = np.zeros(len(self.env_ids), dtype=bool)  # rows an env call may have changed
        self.infos = InfoReceiver(len(self.env_ids))  # the server's sender starts afresh at launch
        try:
            for env_id in self.env_ids:
                if env_id in self.setup.seeds:
                    self.seed(env_id)
        except BaseException as error:
            if self.lost is None:  # the server still holds the envs for this client: it gives them back now
                connection.give_back(error, settings.connect_timeout)
                # Given back, the envs are as a lost server's: the next reset connects again.
                self.lost = self.lost_error(Op.SEED, f"seeding its envs failed ({type(error).__name__}: {error})")
            raise

    def warn_other_env(self, served: str) -> None:
        """Warn when the server names its envs otherwise than this manager's constructor does.

        A wrong address in ``servers`` would otherwise run another env under this config without a word.
        The spaces are not compared: reading them would build the simulator here, where it may not be installed.
        """
        if self.env_checked or not served:
            return
        self.env_checked = True  # once: a connection again (after a lost server) builds no env here to compare
        local = describe_entry(self.env_fns[self.env_ids[0]])
        if local and local != served:
            warn_at_caller(
                f"{self.name}: server {self.address} hosts {served}, and this manager's env_fn builds {local}: if "
                "they are not the same env, check the servers' addresses (env.manager.servers)"
            )

    def request(self, kind: Op, timeout: float | None = None, **body: Any) -> dict:
        """The reply to request ``kind``, its env ids global; a lost server raises ``ServerLostCrash``."""
        if self.lost is not None:
            raise self.lost
        self.finish_steps()  # a reply to a step in flight comes first
        if self.lost is not None:
            raise self.lost
        try:
            reply = self.connection.request(
                kind, timeout if timeout is not None else self.limit(self.settings.host.reset_timeout), **body
            )
        except ServerLostError as error:
            raise self.lose_server(kind, error) from None
        except (EnvError, EnvCrashedError, EnvTimeoutError) as error:
            raise globalised(error, self.offset, self.address) from None
        except ServerError as error:
            error.add_note(f"(server {self.address}, hosting envs {self.env_ids})")
            raise
        self.report_lost(reply)
        return reply

    @staticmethod
    def limit(server_limit: float | None) -> float | None:
        """How long to wait for a reply to a request the server limits to ``server_limit`` seconds (None: no limit)."""
        return None if server_limit is None else server_limit + REPLY_MARGIN

    def lose_server(self, command: Op, error: ServerLostError) -> ServerLostCrash:
        """Give up the connection: every env of the server is lost until a reset connects again."""
        self.lost = self.lost_error(command, error.why)
        self.connection.close()
        return self.lost

    def lost_error(self, command: Op, why: str, failed_reset: bool = False) -> ServerLostCrash:
        """The error of the server's envs once it is lost during ``command`` (``failed_reset``: auto-resets too)."""
        return ServerLostCrash(self.address, self.env_ids, command, why, failed_reset)

    def report_lost(self, reply: dict) -> None:
        """Envs whose worker the server replaced lost their episodes."""
        if reply.get("lost"):
            self.ledger.lose([env_id + self.offset for env_id in reply["lost"]])

    # ---- envs ------------------------------------------------------------

    @override
    def check_seed(self, env_id: int, seed: int) -> None:
        if seed >= WIRE_SEED_END:
            raise ConfigError(
                f"{self.name}: env {env_id}'s seed has more than {WIRE_SEED_DIGITS} digits, where a remote env's "
                f"seed has at most {WIRE_SEED_DIGITS} (any int below 10**{WIRE_SEED_DIGITS})"
            )

    @override
    def seed(self, env_id: int) -> None:
        seed, dynamic_seed = self.setup.seeds[env_id]
        self.check_seed(env_id, seed)
        if self.lost is not None:  # connecting again (the next reset) gives every env its seed
            return
        wire_seed = seed if seed < WIRE_INT_END else str(seed)  # msgpack's integers end at 2**64
        # A server found lost now is as one known lost: the seed waits for the reconnect.
        with contextlib.suppress(ServerLostCrash):
            self.request(Op.SEED, env_id=env_id - self.offset, seed=wire_seed, dynamic_seed=dynamic_seed)

    @override
    def reset(self, env_ids: list[int]) -> tuple[list[int], list[DingEnvError]]:
        try:
            if self.lost is not None:
                self.connect()
            params = {env_id - self.offset: param for env_id, param in self.setup.params_of(env_ids).items()}
            reply = self.request(Op.RESET, env_ids=list(params), params=params)
        except (ServerLostCrash, ServerLostError, ServerError, ConfigError) as error:
            return [], [error]
        self.keep_ready(reply)
        ready = [env_id + self.offset for env_id in reply["ready"]]
        return ready, [globalised(error, self.offset, self.address) for error in reply["errors"]]

    @override
    def send(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray) -> None:
        env_ids = np.asarray(env_ids, dtype=np.int64)
        listed = env_ids.tolist()  # a list's comparison costs a tenth of numpy's on a few ids
        if listed != sorted(listed):  # a server steps its envs in id order
            order = np.argsort(env_ids, kind="stable")
            env_ids, actions, reset_on_done = env_ids[order], arrays.take(actions, order), reset_on_done[order]
        size = self.settings.request_envs or len(env_ids)
        if len(env_ids) <= size:
            self.send_one(env_ids, actions, reset_on_done)
            return
        # The server steps each part while the last one's reply travels. Parts take every k-th env, so
        # each spans the server's workers (which host consecutive runs) and they step it in parallel.
        parts = -(-len(env_ids) // size)
        for first in range(parts):
            part = slice(first, None, parts)
            self.send_one(env_ids[part], arrays.take(actions, part), reset_on_done[part])

    def send_one(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray) -> None:
        """Send one step request (none to a lost server), and note it in flight."""
        ticket = None
        if self.lost is None:
            if isinstance(actions, np.ndarray) and actions.dtype.hasobject:  # actions without an array form
                actions = actions.tolist()  # travel as a list of values (``arrays.object_rows`` on the server)
            local = env_ids - self.offset
            ticket = self.connection.send(Op.STEP, env_ids=local, actions=actions, reset_on_done=reset_on_done)
        self.pending.append((ticket, env_ids, reset_on_done))

    @override
    def poll(self) -> int:
        self.take_arrived(wait=False)
        return 0 if self.held is None else len(self.held.env_id)

    @override
    def collect(self, wait: bool) -> TimestepBatch | None:
        self.take_arrived(wait)
        held, self.held = self.held, None
        return held

    def take_arrived(self, wait: bool) -> None:
        """Take in the replies that arrived (with ``wait``, to every step in flight), holding them for ``collect``."""
        outcomes = [self.held] if self.held is not None else []
        while self.pending and (
            wait or self.lost is not None or self.pending[0][0] is None or self.connection.has_reply()
        ):
            outcomes.append(self.take_step())
        self.held = in_id_order(joined(outcomes)) if outcomes else None

    def take_step(self) -> TimestepBatch:
        """The outcome of the oldest step in flight (the server answers steps in the order they were sent)."""
        ticket, env_ids, reset_on_done = self.pending.pop(0)
        if self.lost is not None:
            return self.lost_outcome(env_ids, reset_on_done, self.lost)
        try:
            reply = self.connection.receive(ticket, self.limit(self.settings.host.step_wait))
        except ServerLostError as error:
            return self.lost_outcome(env_ids, reset_on_done, self.lose_server(Op.STEP, error))
        except ServerError as error:  # the reply could not be made (an info without wire form, say)
            ids = env_ids.tolist()
            error.add_note(
                f"(server {self.address}, hosting envs {self.env_ids}; envs {ids} need a reset: the server may "
                "have stepped them)"
            )
            error.failed_reset = True  # whatever the server did with them, their state is unknown here
            return abnormal_batch(self.spaces, env_ids, reset_on_done, dict.fromkeys(ids, error), error, ended=False)
        outcome = self.outcome_of(reply, env_ids)
        self.keep_ready_obs(reply)
        self.report_lost(reply)
        return outcome

    def finish_steps(self) -> None:
        """Take in every step in flight, holding the results for the next ``collect`` (before another request)."""
        if self.pending:
            self.take_arrived(wait=True)

    @override
    def cancel(self, env_ids: list[int]) -> None:
        """Let in-flight steps finish and drop the results of ``env_ids``, so a reset starts clean."""
        self.finish_steps()
        if self.held is not None:
            kept = np.setdiff1d(self.held.env_id, env_ids)
            self.held = reordered(self.held, kept) if len(kept) else None

    @override
    def wait(self, timeout: float) -> None:
        if self.pending and self.lost is None:
            self.connection.has_reply(timeout)

    def keep_ready_obs(self, reply: dict) -> None:
        """Keep the stepped envs' ready observations: the step's, or for ended episodes the restart's."""
        local, done = reply["env_id"], reply["done"]
        if not np.count_nonzero(done):  # no episode ended: every row's observation is its ready one
            arrays.write(self.ready, local, reply["obs"])
            return
        arrays.write(self.ready, local[~done], arrays.take(reply["obs"], np.flatnonzero(~done)))
        arrays.write(self.ready, local[done], reply["restart_obs"])

    def outcome_of(self, reply: dict, sent: np.ndarray) -> TimestepBatch:
        """The step reply as an outcome in global ids; rows of idle envs the server lost with a worker are claimed."""
        infos = self.infos.infos(reply["env_id"], reply)
        return reply_batch(reply, sent, self.offset, self.address, infos, self.ledger.claim_idle)

    def lost_outcome(self, sent: np.ndarray, reset_on_done: np.ndarray, error: ServerLostCrash) -> TimestepBatch:
        """Abnormal results for the sent envs and the server's idle ones: zero observations, done, the error.

        None of them can restart: the server is gone, so each needs a reset (which connects again).
        """
        flags = dict(zip(sent.tolist(), reset_on_done.tolist(), strict=True))
        flags |= self.ledger.claim_idle([env_id for env_id in self.env_ids if env_id not in flags])
        env_ids = np.array(sorted(flags), dtype=np.int64)
        restart_error = self.lost_error(error.command, error.why, failed_reset=True)  # the auto-reset is lost too
        error_of = {env_id: restart_error if flags[env_id] else error for env_id in flags}
        flagged = np.array([flags[env_id] for env_id in env_ids.tolist()], dtype=bool)
        return abnormal_batch(self.spaces, env_ids, flagged, error_of, error)

    @override
    def ready_obs(self, env_ids: np.ndarray) -> Any:
        if not len(env_ids):
            return None
        if self.lost is not None:
            raise self.lost
        local = np.asarray(env_ids, dtype=np.int64) - self.offset
        stale = local[self.stale[local]]
        if len(stale):
            arrays.write(self.ready, stale, self.request(READY_OBS, env_ids=stale)["obs"])
            self.stale[stale] = False
        return arrays.take(self.ready, local)  # an index array: a copy, the caller's

    def keep_ready(self, reply: dict) -> None:
        """Keep the ready observations a reset reply brings."""
        if reply["ready"]:
            arrays.write(self.ready, np.array(reply["ready"]), reply["obs"])
            self.stale[reply["ready"]] = False

    @override
    def call(self, env_ids: list[int], name: str, args: tuple, kwargs: dict) -> list:
        local = [env_id - self.offset for env_id in env_ids]
        self.stale[local] = True  # a method may change what the env observes
        return self.request(Op.CALL, env_ids=local, name=name, args=list(args), kwargs=dict(kwargs))["values"]

    @override
    def get_attr(self, env_ids: list[int], name: str) -> list:
        return self.request(Op.GET_ATTR, env_ids=[env_id - self.offset for env_id in env_ids], name=name)["values"]

    @override
    def set_attr(self, env_ids: list[int], name: str, values: list) -> None:
        local = [env_id - self.offset for env_id in env_ids]
        self.stale[local] = True
        self.request(Op.SET_ATTR, env_ids=local, name=name, values=list(values))

    @override
    def request_close(self) -> None:
        if self.connection is not None and self.lost is None:
            self.close_ticket = self.connection.send(Op.CLOSE)

    @override
    def close(self) -> list[EnvError]:
        if self.connection is None or self.lost is not None:
            return []  # a lost server's envs went with it (reported when it was lost)
        ticket, self.close_ticket = self.close_ticket or self.connection.send(Op.CLOSE), None
        try:
            reply = self.connection.receive(ticket, CLOSE_TIMEOUT + (self.settings.host.reset_timeout or 0.0))
        except (ServerLostError, ServerError) as error:
            if isinstance(error, ServerLostError) and error.dropped:
                return []  # died or froze before any step noticed: its envs went with it, as a dead worker's do
            if isinstance(error, ServerError) and error.error_type in LEASE_LOST:
                return []  # its lease lapsed and another client has the envs: none of this manager's is left
            # A server error, or no reply from a server whose heartbeats answer: an env's close() hangs there.
            return [
                EnvError(env_id, Op.CLOSE, f"closing on server {self.address} failed: {error}")
                for env_id in self.env_ids
            ]
        finally:
            self.connection.close()
        return [globalised(failure, self.offset, self.address) for failure in reply["failures"]]

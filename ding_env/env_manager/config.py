"""The config schema shared by every env manager, with each key documented.

All managers accept the same keys; a key that means nothing to a manager
(``context`` for the serial one) is accepted and ignored, so one config can
switch managers by changing ``type`` alone.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

from easydict import EasyDict

from ding_env.config import check_config_dict, merge_known_keys
from ding_env.errors import ConfigError
from ding_env.remote.endpoints import is_endpoint

MANAGER_CONFIG: dict[str, Any] = dict(
    # Manager kind for create_env_manager: 'base', 'subprocess' or 'async_subprocess'; 'base_v2' and
    # 'subprocess_v2' are 'base' and 'subprocess' with the treetensor interface of DI-engine's task pipelines;
    # 'remote' / 'async_remote': envs on env servers (`ding-env serve`, see `servers`); 'ray' / 'async_ray': envs
    # on hosts Ray places on a cluster (the `ray` extra, see `num_hosts`).
    type="base",
    # Episodes each env runs before it counts as finished (``manager.done``).
    episode_num=float("inf"),
    # Attempts to reset an env before its error is raised.
    max_retry=1,
    # 'reset': retry on the same env object; 'renew': build a new one from its env_fn.
    retry_type="reset",
    # Reset an env right after its episode ends (its next ready obs is the reset obs).
    auto_reset=True,
    # Seconds a step may take before EnvTimeoutError (None: no limit; the serial manager cuts a step
    # only in the main thread, see ding_env/env_manager/backends/call_timeout.py).
    step_timeout=None,
    # Seconds a reset may take before EnvTimeoutError (None: no limit; as step_timeout).
    reset_timeout=None,
    # Seconds to wait between reset attempts.
    retry_waiting_time=0.1,
    # Accepted for DI-engine's configs and ignored: results always go through shared memory. (DI-engine
    # needs False for observations its buffers cannot hold; here both need the same fixed layout.)
    shared_memory=True,
    # Arrays the managers return (ready_obs, step results, ready_obs_batch, step_batch) belong to the caller:
    # copies of the shared-memory buffers. False: views, valid until the next call to the manager (faster).
    copy_on_get=True,
    # Subprocess managers: 'fork', 'spawn' or 'forkserver'.
    context="fork",
    # Async managers: step returns once this many envs have results (None or inf: all).
    wait_num=None,
    # Async managers: seconds to wait for wait_num results before returning what is ready (None: no limit).
    step_wait_timeout=0.01,
    # Subprocess managers: seconds a worker may take to start and report its spaces; remote managers: seconds
    # a server may take to answer the handshake and start its workers (an address where nothing listens is
    # given up within 5 s, or this many seconds if fewer).
    connect_timeout=60.0,
    # Subprocess managers: worker processes (None: min(env_num, cpu count)), each hosting a consecutive run of
    # env ids and stepping them one after another. The async manager hands a worker's envs back together, so a
    # fast env waits for its slower siblings; num_workers=env_num gives every env a worker of its own.
    num_workers=None,
    # Subprocess managers: pin worker i to the i-th CPU this process may run on (wrapping around).
    # Keeps two workers from sharing a core while another idles: a few percent faster on a machine
    # of its own; leave off when several jobs share the machine (Linux only).
    cpu_affinity=False,
    # Subprocess managers: the calling process hosts one share of the envs itself, beside the
    # num_workers workers, and steps it while they step theirs (num_workers=1 on two cores: two busy
    # processes instead of two workers and a mostly waiting caller). Those envs lose crash isolation
    # and hard timeouts: they run as in BaseEnvManager.
    caller_share=False,
    # What an exception in env.step does: 'raise' an EnvError (after keeping the
    # other envs' results), or return an 'abnormal' done timestep and renew the env.
    step_error="raise",
    # Remote manager: the env servers' endpoints (`ding-env serve`), e.g. ['tcp://127.0.0.1:5555']; env
    # ids are shared out in consecutive runs, each server hosting as many as it was started with.
    servers=None,
    # Remote manager: seconds without a sign of life from a server (even mid-step) before its envs are lost.
    heartbeat_timeout=1.5,
    # Remote manager: a folder with client.key_secret and server.key (`ding-env keygen`) for servers started
    # with --keys: encrypted connections that only admitted clients get. None: plain connections.
    keys_dir=None,
    # Ray managers: the cluster to join: None starts a local Ray instance sized to this machine (or joins the one
    # `ray start` began here), 'auto' joins the running cluster, 'ray://head:10001' joins through Ray Client.
    address=None,
    # Ray managers: Ray actors hosting the envs, each a consecutive share (None: env_num / envs_per_host, else 1).
    num_hosts=None,
    # Ray managers: envs on each host (None: env_num shared out over num_hosts); num_hosts * envs_per_host == env_num.
    envs_per_host=None,
    # Ray managers: the Ray resources each host reserves, as a placement-group bundle (None: {'CPU': 1}).
    host_resources=None,
    # Ray managers: worker processes inside each host (0: the envs step in the host's own process).
    host_workers=0,
    # Ray managers: how the hosts' bundles are placed: 'SPREAD', 'PACK', 'STRICT_SPREAD' or 'STRICT_PACK'.
    placement_strategy="SPREAD",
    # Ray managers: times Ray restarts a host that died (-1: without limit); its envs come back at their next reset.
    host_max_restarts=-1,
)

# Keys of DI-engine's manager configs that change nothing here, accepted so its configs load as
# they are: ``cfg_type`` and ``import_names`` (written by DI-engine's ``compile_config``), and
# ``reset_inplace``. ding_env managers always reset a finished env in its own process right away
# (with ``auto_reset``) and still return its true final observation; DI-engine's
# ``reset_inplace=True`` returned the reset observation in its place.
DI_ENGINE_ONLY_KEYS = ("cfg_type", "import_names", "reset_inplace")

BOOLEAN_KEYS = ("auto_reset", "shared_memory", "copy_on_get", "cpu_affinity", "caller_share")
MANAGER_TYPES = (
    "base",
    "subprocess",
    "async_subprocess",
    "base_v2",
    "subprocess_v2",
    "remote",
    "async_remote",
    "env_pool",
    "gym_vector",
    "ray",
    "async_ray",
)
REMOTE_TYPES = ("remote", "async_remote")  # the managers whose envs run on env servers (`servers`)
RAY_TYPES = ("ray", "async_ray")  # the managers whose envs run on Ray hosts (`num_hosts`)
# The keys that say where envs run, and the types that read them. Every type accepts every key (one config
# switches managers by its type alone), so one set for another type is ignored: ignored_placement_keys says so.
PLACEMENT_KEYS = {
    "servers": REMOTE_TYPES,
    "keys_dir": REMOTE_TYPES + RAY_TYPES,
    **dict.fromkeys(
        ("num_hosts", "envs_per_host", "address", "host_resources", "host_workers", "placement_strategy"), RAY_TYPES
    ),
}
PLACEMENT_STRATEGIES = ("SPREAD", "PACK", "STRICT_SPREAD", "STRICT_PACK")
CONTEXTS = ("fork", "spawn", "forkserver")


def check_manager_type(manager_type: Any) -> None:
    """Raise ``ConfigError`` unless ``manager_type`` is one of ``MANAGER_TYPES``."""
    _expect(manager_type in MANAGER_TYPES, "type", f"one of {MANAGER_TYPES}", manager_type)


def manager_config(user: dict | None, env_num: int, need_servers: bool = True) -> EasyDict:
    """Merge ``user`` over the defaults and validate every value.

    Args:
        user: The given keys.
        env_num: The envs the manager drives.
        need_servers: Whether a remote type must list its ``servers`` now (False: they are given when the run
            starts, as ``ding-env serve`` and ``ding-env check`` read a config that a run completes later).

    Raises:
        ConfigError: Naming the key, what was expected and what arrived.
    """
    check_config_dict(user, "env manager config")
    user = dict(user or {})
    di_engine_only = {key: user.pop(key) for key in DI_ENGINE_ONLY_KEYS if key in user}
    cfg = merge_known_keys(MANAGER_CONFIG, user, "the env manager config")
    if "reset_inplace" in di_engine_only:
        reset_inplace = di_engine_only["reset_inplace"]
        _expect(isinstance(reset_inplace, bool), "reset_inplace", "True or False", reset_inplace)
        _expect(cfg.auto_reset or not reset_inplace, "reset_inplace", "False when auto_reset is False", reset_inplace)
    check_manager_type(cfg.type)
    _expect(cfg.context in CONTEXTS, "context", f"one of {CONTEXTS}", cfg.context)
    _expect(cfg.retry_type in ("reset", "renew"), "retry_type", "'reset' or 'renew'", cfg.retry_type)
    _expect(cfg.step_error in ("raise", "abnormal"), "step_error", "'raise' or 'abnormal'", cfg.step_error)
    _expect(_is_int(cfg.max_retry) and cfg.max_retry >= 1, "max_retry", "an int >= 1", cfg.max_retry)
    episode_num = cfg.episode_num
    _expect(
        (_is_int(episode_num) and episode_num >= 1) or episode_num == math.inf,
        "episode_num",
        "an int >= 1 or inf",
        episode_num,
    )
    for key in ("step_timeout", "reset_timeout"):
        _expect(cfg[key] is None or (_is_number(cfg[key]) and cfg[key] > 0), key, "None or seconds > 0", cfg[key])
    _expect(
        _is_number(cfg.retry_waiting_time) and cfg.retry_waiting_time >= 0,
        "retry_waiting_time",
        "seconds >= 0",
        cfg.retry_waiting_time,
    )
    _expect(
        _is_number(cfg.connect_timeout) and cfg.connect_timeout > 0,
        "connect_timeout",
        "seconds > 0",
        cfg.connect_timeout,
    )
    for key in BOOLEAN_KEYS:  # a string such as 'False' is true in Python: only real booleans are taken
        _expect(isinstance(cfg[key], bool), key, "True or False", cfg[key])
    wait = cfg.step_wait_timeout
    _expect(wait is None or (_is_number(wait) and wait >= 0), "step_wait_timeout", "None or seconds >= 0", wait)
    if cfg.wait_num == math.inf:  # DI-engine's way to say "every env"
        cfg.wait_num = None
    if cfg.wait_num is not None:
        _expect(_is_int(cfg.wait_num) and 1 <= cfg.wait_num, "wait_num", "None, inf or an int >= 1", cfg.wait_num)
        _expect(cfg.wait_num <= env_num, "wait_num", f"at most env_num={env_num}", cfg.wait_num)
    if cfg.num_workers is not None:
        _expect(
            _is_int(cfg.num_workers) and cfg.num_workers >= 1, "num_workers", "None or an int >= 1", cfg.num_workers
        )
    servers = cfg.servers
    _expect(
        servers is None
        or (isinstance(servers, (list, tuple)) and servers and all(isinstance(a, str) for a in servers)),
        "servers",
        "None or a non-empty list of endpoints such as 'tcp://127.0.0.1:5555'",
        servers,
    )
    for server in servers or ():
        _expect(
            is_endpoint(server),
            "servers",
            "endpoints 'transport://address' such as 'tcp://host:port' (a port from 1 to 65535) or 'ipc://path'",
            server,
        )
    servers_due = need_servers and cfg.type in REMOTE_TYPES
    _expect(not servers_due or servers is not None, "servers", f"a list of endpoints for type {cfg.type!r}", servers)
    _expect(servers is None or len(servers) <= env_num, "servers", f"at most env_num={env_num} endpoints", servers)
    # A server serves one client at a time: a second share of this manager there would be refused as busy.
    _expect(servers is None or len(set(servers)) == len(servers), "servers", "each endpoint once", servers)
    _expect(cfg.keys_dir is None or isinstance(cfg.keys_dir, str), "keys_dir", "None or a folder path", cfg.keys_dir)
    hb = cfg.heartbeat_timeout
    _expect(_is_number(hb) and hb > 0, "heartbeat_timeout", "seconds > 0", hb)
    _check_ray_keys(cfg, env_num)
    _expect(
        not cfg.cpu_affinity or hasattr(os, "sched_setaffinity"),
        "cpu_affinity",
        "False on a system without os.sched_setaffinity",
        cfg.cpu_affinity,
    )
    return cfg


def ignored_placement_keys(section: Mapping) -> str | None:
    """What a manager section sets about where envs run that its type ignores, said in a line; None when nothing.

    A run config that sets ``servers`` but no remote type runs its envs locally: the run goes on (a config may
    switch types on purpose), and this says which keys it ignores and which types read them.
    """
    manager_type = section.get("type", MANAGER_CONFIG["type"])
    ignored = [
        key for key, readers in PLACEMENT_KEYS.items() if section.get(key) is not None and manager_type not in readers
    ]
    if not ignored:
        return None
    readers = sorted({reader for key in ignored for reader in PLACEMENT_KEYS[key]})
    return (
        f"type {manager_type!r} ignores {', '.join(ignored)}, which only types {', '.join(readers)} read: "
        "its envs run on this machine; set the type (ding-env run --manager TYPE) to run them elsewhere"
    )


def _check_ray_keys(cfg: EasyDict, env_num: int) -> None:
    """Validate the Ray managers' keys and settle ``num_hosts`` and ``envs_per_host``."""
    address = cfg.address
    _expect(
        address is None or address in ("auto", "local") or (isinstance(address, str) and _is_ray_address(address)),
        "address",
        "None (a local Ray instance), 'auto' (the cluster of this machine), 'HOST:PORT' or 'ray://HOST:PORT'",
        address,
    )
    for key in ("num_hosts", "envs_per_host"):
        _expect(cfg[key] is None or (_is_int(cfg[key]) and cfg[key] >= 1), key, "None or an int >= 1", cfg[key])
    hosts_given = cfg.num_hosts is not None
    if not hosts_given:
        cfg.num_hosts = env_num // cfg.envs_per_host if cfg.envs_per_host else 1
    # Counts against this manager's envs only for a Ray manager: an evaluator of another type that
    # inherits the collector's keys (env.evaluator_manager over env.manager) has no hosts to count.
    ray = cfg.type in RAY_TYPES
    _expect(not ray or cfg.num_hosts <= env_num, "num_hosts", f"at most env_num={env_num}", cfg.num_hosts)
    per_host = cfg.envs_per_host
    _expect(
        not ray or per_host is None or per_host * cfg.num_hosts == env_num,
        "envs_per_host",
        f"env_num / num_hosts = {env_num} / {cfg.num_hosts} (or None)"
        if hosts_given
        else f"a divisor of env_num={env_num} (each of env_num / envs_per_host hosts gets that many envs), or None",
        per_host,
    )
    resources = cfg.host_resources
    _expect(
        resources is None
        or (
            isinstance(resources, Mapping)
            and resources
            and all(isinstance(name, str) and _is_number(amount) and amount >= 0 for name, amount in resources.items())
            and any(amount > 0 for amount in resources.values())
        ),
        "host_resources",
        "None or a dict of Ray resources such as {'CPU': 1, 'GPU': 0.5}, one amount > 0",
        resources,
    )
    cfg.host_resources = {"CPU": 1} if resources is None else dict(resources)
    workers = cfg.host_workers
    _expect(_is_int(workers) and workers >= 0, "host_workers", "an int >= 0", workers)
    strategy = cfg.placement_strategy
    _expect(strategy in PLACEMENT_STRATEGIES, "placement_strategy", f"one of {PLACEMENT_STRATEGIES}", strategy)
    restarts = cfg.host_max_restarts
    _expect(_is_int(restarts) and restarts >= -1, "host_max_restarts", "an int >= -1", restarts)


def _is_ray_address(address: str) -> bool:
    """Whether ``address`` is ``HOST:PORT`` or ``ray://HOST:PORT`` (an IPv6 host in brackets), as Ray takes them."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    return bool(host) and "/" not in host and port.isdigit() and 0 < int(port) < 65536


def _expect(ok: bool, key: str, expected: str, got: Any) -> None:
    if not ok:
        raise ConfigError(f"env manager config {key!r}: expected {expected}, got {got!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)

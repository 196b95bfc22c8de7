"""The backends that host a manager's envs, behind the interface of ``base.py``.

``in_process.py`` hosts envs in the calling process; ``workers.py`` (synchronous) and
``async_workers.py`` (results as they come) host them in worker processes, sharing the worker set
of ``worker_set.py`` (processes started by ``worker_pool.py``, running ``worker.py``, speaking
``protocol.py``); ``remote.py`` hosts them on an env server (``ding-env serve``) over ZeroMQ.
Every host of envs steps them with ``env_host.EnvHost`` into ``step_rows.StepRows``; ``settings.py``
holds what a backend is given. A manager holds one or more backends, each hosting a consecutive
share of its env ids.
"""

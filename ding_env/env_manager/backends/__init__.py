"""The backends that host a manager's envs: in this process, in worker processes (sync or async).

``base.py`` is the interface every backend implements; a manager holds one or more of them,
each hosting a consecutive share of its env ids.
"""

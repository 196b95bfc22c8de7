"""Envs on other machines: an env server and the wire it speaks over ZeroMQ (the ``zmq`` extra).

``wire`` encodes values and spaces without pickle, ``errors`` names what goes wrong between a client
and a server, ``messages`` the requests, replies and protocol version, ``served_envs`` the envs a
server hosts (in a worker backend), ``server`` the socket loop and ``client`` one connection. The
client side of a manager is ``ding_env.env_manager.backends.remote``. Importing this package
imports no ZeroMQ; ``server`` and ``client`` do.
"""

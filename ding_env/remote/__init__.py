"""Envs on other machines: an env server and the wire it speaks over ZeroMQ (the ``zmq`` extra).

``protocol`` names the protocol, its version and requests; ``endpoints`` the addresses servers bind and
clients reach; ``wire`` encodes values and spaces without pickle, ``headers`` the typed requests and
replies (msgpack headers by msgspec), ``messages`` whole messages, encoded and checked, ``info_wire`` the
step infos as a table, ``errors`` what goes wrong between a client and a server, ``served_envs`` the envs
a server hosts (in its own process or in worker processes), ``server`` the socket loop and ``client`` one
connection. The client side of a manager is ``ding_env.env_manager.backends.remote``. Importing this
package imports neither ZeroMQ nor msgspec; ``headers``, ``messages``, ``server`` and ``client`` do.
"""

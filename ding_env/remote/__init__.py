"""Envs on other machines: an env server and its client over ZeroMQ (the ``zmq`` extra).

``wire`` encodes values and spaces without pickle, ``protocol`` names the requests and errors,
``server`` serves the envs of one machine, ``client`` talks to one server. Importing this package
imports no ZeroMQ; ``server`` and ``client`` do.
"""

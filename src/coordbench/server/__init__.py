"""Serving the backend over HTTP: the app factory and what every app coordbench serves shares.

- :mod:`~coordbench.server.app`: the receiver's (and the green's) routes, error handlers and lifespan;
- :mod:`~coordbench.server.bodylimit` and :mod:`~coordbench.server.jsonguard`: the ASGI middleware every app wears;
- :mod:`~coordbench.server.auth`: the bearer-token check;
- :mod:`~coordbench.server.peers`: receivers behind one load balancer answering for each other;
- :mod:`~coordbench.meters`: the backend's own metrics;
- :mod:`~coordbench.server.loopback`: an ASGI app served on a free loopback port, in a thread.

Nothing is imported here: an agent that only needs the middleware does not load the backend.
"""

"""Online evaluation: every completed trace the receiver holds is evaluated, off the ingest path.

- :mod:`~coordbench.online.evaluator`: which traces are due, the bounded queue, the worker processes;
- :mod:`~coordbench.online.job`: one evaluation as the worker runs it (``coordbench evaluate``'s own);
- :mod:`~coordbench.online.records`: the evaluations kept for reading (bounded, durable with a data dir);
- :mod:`~coordbench.server.evaluations_api`: ``GET /v1/evaluations`` and ``GET /v1/traces/{id}/evaluation``;
- :mod:`~coordbench.online.events`: ``gen_ai.evaluation.result`` events on the evaluated trace.

The dashboards and alert rules built from its metrics are :mod:`coordbench.dashboards`.
"""

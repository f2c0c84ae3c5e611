"""Dashboards of online evaluation, built from the metric and table names so they cannot drift from them.

- :mod:`~coordbench.dashboards.grafana`: the Grafana dashboard, its provisioning and the Prometheus
  alert rules (``make dashboards`` writes them under ``dashboards/``);
- :mod:`~coordbench.dashboards.clickhouse`: the panels read from ClickHouse's tables;
- :mod:`~coordbench.dashboards.page`: the same panels queried from any Prometheus and drawn as a page
  in the report's style, where Grafana is not at hand.
"""

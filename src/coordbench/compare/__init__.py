"""Comparing two runs of a team: what changed in how it coordinates, beyond the noise or not.

``coordbench compare BASE HEAD`` reads two sets of runs (``results.json`` files, folders of them,
or traces), compares them scenario by scenario (:func:`compare_rows`), prints the comparison
(:mod:`~coordbench.compare.render`; ``--json``, ``--markdown``, ``--html``) and fails on the
regressions ``--fail-on`` names (:mod:`~coordbench.compare.rules`).
"""

from coordbench.compare.diff import compare_rows
from coordbench.compare.model import Comparison, Delta, EvidenceChange, GraphChange, PathChange, ScenarioComparison
from coordbench.compare.rules import Rule, RuleError, broken, parse_rules, worse_than

__all__ = [
    "Comparison",
    "Delta",
    "EvidenceChange",
    "GraphChange",
    "PathChange",
    "Rule",
    "RuleError",
    "ScenarioComparison",
    "broken",
    "compare_rows",
    "parse_rules",
    "worse_than",
]

"""The AgentBeats ``results.json``: the contract's models (:mod:`~coordbench.results.document`) and its writer.

:mod:`~coordbench.results.writer` turns assessment reports into rows and documents;
:mod:`~coordbench.results.document` is the contract every reader goes through.
"""

from coordbench.results.document import (
    PART_ORDER,
    ResultRow,
    ResultsDocument,
    ResultsDocumentError,
    RowDetail,
    ScenarioEntry,
    Spread,
    TaskRewards,
    TraceCompleteness,
    results_schema,
    schema_text,
)
from coordbench.results.writer import (
    DOMAIN,
    MAX_SCORE,
    AssessmentReport,
    ScenarioReport,
    agentbeats_results,
    evaluation_results,
    result_row,
    spread_lines,
    summary_text,
    trace_results,
    write_results,
)

__all__ = [
    "DOMAIN",
    "MAX_SCORE",
    "PART_ORDER",
    "AssessmentReport",
    "ResultRow",
    "ResultsDocument",
    "ResultsDocumentError",
    "RowDetail",
    "ScenarioEntry",
    "ScenarioReport",
    "Spread",
    "TaskRewards",
    "TraceCompleteness",
    "agentbeats_results",
    "evaluation_results",
    "result_row",
    "results_schema",
    "schema_text",
    "spread_lines",
    "summary_text",
    "trace_results",
    "write_results",
]

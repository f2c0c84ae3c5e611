"""The assessor's results and HTML reports: built after each assessment, written, served.

``GET /reports`` lists the reports (newest first), ``GET /reports/{assessment_id}`` serves one.
The last :data:`KEPT` stay in memory. With an output directory, each assessment's files are
written under a name of its own, ``<team>-<assessment_id>`` (the team as the request names it,
else its entry role): ``results/<name>.json`` and ``reports/<name>.html``. The newest
assessment's pair is also ``results.json`` (where AgentBeats looks) and ``report.html``, written
together under one lock, so the two always come from the same assessment.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from pathlib import Path

from coordbench.evals.replay import scenario_spans
from coordbench.report import render_report
from coordbench.results.document import ResultsDocument
from coordbench.spans import SpanData

__all__ = ["KEPT", "ReportShelf"]

logger = logging.getLogger(__name__)

KEPT = 100
"""Reports kept in memory."""
_SAFE = re.compile(r"^[A-Za-z0-9._:-]{1,200}$")


class ReportShelf:
    """The reports of the latest assessments.

    Args:
        output_dir: Where to write them too (``None``: memory only).
    """

    def __init__(self, output_dir: Path | None = None) -> None:
        self.output_dir = output_dir
        self._reports: OrderedDict[str, str] = OrderedDict()
        self._latest = threading.Lock()

    def add(
        self, assessment_id: str, document: ResultsDocument, spans: list[SpanData], *, team: str = "assessment"
    ) -> list[Path]:
        """Build the report of ``document`` (the results.json document), keep it, write both; the files written.

        Raises:
            OSError: If the output directory cannot be written (the report is kept and served all the same).
        """
        try:
            html = render_report(document, scenario_spans(spans) if spans else None)
        except Exception as exc:  # the report is a view of the results: it never costs them
            logger.exception("the report of assessment %s could not be built", assessment_id)
            html = render_report(ResultsDocument(results=[])) + f"<!-- not built: {type(exc).__name__} -->"
        self._reports[assessment_id] = html
        self._reports.move_to_end(assessment_id)
        while len(self._reports) > KEPT:
            self._reports.popitem(last=False)
        if self.output_dir is None or not _SAFE.match(assessment_id) or not _SAFE.match(team):
            return []
        name = f"{team}-{assessment_id}"
        results = _write(self.output_dir / "results" / f"{name}.json", document.text())
        report = _write(self.output_dir / "reports" / f"{name}.html", html)
        with self._latest:  # the newest pair: never one assessment's results beside another's report
            _write(self.output_dir / "results.json", document.text())
            _write(self.output_dir / "report.html", html)
        return [results, report]

    def get(self, assessment_id: str) -> str | None:
        """A kept report."""
        return self._reports.get(assessment_id)

    def ids(self) -> list[str]:
        """Kept reports, newest first."""
        return list(reversed(self._reports))


def _write(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (a temporary file renamed), creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
    return path

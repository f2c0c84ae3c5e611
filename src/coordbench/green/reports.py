"""The assessor's HTML reports: built after each assessment, written beside results.json, served.

``GET /reports`` lists them (newest first), ``GET /reports/{assessment_id}`` serves one. The
last :data:`KEPT` stay in memory; with an output directory each is also written to
``<output_dir>/reports/<assessment_id>.html``, and the newest to ``<output_dir>/report.html``.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from pathlib import Path
from typing import Any

from coordbench.evals.replay import scenario_spans
from coordbench.report import render_report
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

    def add(self, assessment_id: str, document: dict[str, Any], spans: list[SpanData]) -> str:
        """Build the report of ``document`` (the results.json document), keep and write it; returns the HTML."""
        html = render_report(document, scenario_spans(spans) if spans else None)
        self._reports[assessment_id] = html
        self._reports.move_to_end(assessment_id)
        while len(self._reports) > KEPT:
            self._reports.popitem(last=False)
        if self.output_dir is not None and _SAFE.match(assessment_id):
            try:
                folder = self.output_dir / "reports"
                folder.mkdir(parents=True, exist_ok=True)
                (folder / f"{assessment_id}.html").write_text(html, encoding="utf-8")
                (self.output_dir / "report.html").write_text(html, encoding="utf-8")
            except OSError as exc:
                logger.error("cannot write the report of %s: %s", assessment_id, exc)
        return html

    def get(self, assessment_id: str) -> str | None:
        """A kept report."""
        return self._reports.get(assessment_id)

    def ids(self) -> list[str]:
        """Kept reports, newest first."""
        return list(reversed(self._reports))

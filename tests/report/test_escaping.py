"""Nothing a participant writes is live in a report: payloads in every string, checked in the DOM and in Chromium.

A report is built from a real evaluation of a trace whose agents, services, spans and messages
carry markup, with markup also in the task, the answer, the errors, the judge's words and the
participants' URLs. Its DOM must hold exactly the elements the same report holds with plain
names: no element, attribute or navigation comes from the data.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from coordbench.evals import EvalContext, EvalPipeline, EvalScenario, TeamOutcome
from coordbench.report import render_comparison, render_report
from coordbench.results import AssessmentReport, ScenarioReport, agentbeats_results
from coordbench.results.document import ResultsDocument
from coordbench.spans import SpanData, StatusCode
from evals.traces import client, server
from support.spans import sid, span

PAYLOADS = [
    "<script>document.title='pwned'</script>",
    "<img src=x onerror=\"document.title='pwned'\">",
    '<meta http-equiv="refresh" content="0;url=http://127.0.0.1:9/">',
    "</title></text></svg></code></td></table><b>escaped</b>",
    '"><svg onload=alert(1)>',
    "' onmouseover='alert(1)",
    "&lt;script&gt;",
    "javascript:alert(1)",
    "]]><![CDATA[<script>x</script>",
]
BAD = "".join(PAYLOADS)


def _trace(a: str, b: str, c: str, host: str, text: str) -> list[SpanData]:
    return [
        span(f"invoke_workflow {text}", span_id=sid(1), start_ms=0, end_ms=100, service=host,
             **{"a2a.step.call_type": "HOST", "note": text}),
        client(host, a, sid(2), sid(1), 0, 100, request=text, reply=text),
        server(a, sid(3), sid(2), 1, 99),
        client(a, b, sid(4), sid(3), 10, 40, request=text, reply=text),
        server(b, sid(5), sid(4), 11, 39),
        client(a, c, sid(6), sid(3), 50, 90, request=text, reply=text, status=StatusCode.ERROR,
               **{"error.type": text}),
        server(c, sid(7), sid(6), 51, 89),
        client(a, f"{b}-ghost", sid(8), sid(3), 60, 70, request=text),  # never answered: an unmatched call
    ]  # fmt: skip


def _document(text: str) -> tuple[ResultsDocument, dict[str, list[SpanData]]]:
    """A results document and spans whose every participant-written string is ``text``-laden."""
    names = [f"{role}{text}" for role in ("coordinator", "researcher", "writer", "assessor")]
    spans = _trace(*names, text)
    scenario_id = "s1"
    ctx = EvalContext.build(
        spans,
        scenario=EvalScenario(id=scenario_id, task=f"task {text}", references=[f"reference {text}"]),
        hosts=[names[3]],
        participants=names[:3],
        outcome=TeamOutcome(state="completed", output=f"answer {text}", error=f"error {text}"),
    )
    evaluation = asyncio.run(EvalPipeline().run(ctx))
    scenario = ScenarioReport(
        id=scenario_id, mode="live", status="error", error=f"failed {text}", trace_id=spans[0].trace_id,
        outcome=ctx.outcome, evaluation=evaluation,
    )  # fmt: skip
    report = AssessmentReport(
        assessment_id=f"assessment{text}",
        participants={f"role{text}": f"http://127.0.0.1:1/{text}?token=t"},
        scenarios=[scenario],
        time_used=1.0,
    )
    return agentbeats_results(report), {scenario_id: spans}


class _Elements(HTMLParser):
    """Every element's tag and attribute names, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, tuple[str, ...]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, tuple(sorted(name for name, _ in attrs))))


def _elements(html: str) -> list[tuple[str, tuple[str, ...]]]:
    parser = _Elements()
    parser.feed(html)
    return parser.elements


_DEFANG = str.maketrans(dict.fromkeys("<>\"'&=", "x"))


def _defanged(value: Any) -> Any:
    """``value`` (a document, or spans) with every markup character in every string replaced by ``x``."""
    if isinstance(value, str):
        return value.translate(_DEFANG)
    if isinstance(value, SpanData):
        return value._replace(
            name=_defanged(value.name), attributes=_defanged(value.attributes), resource=_defanged(value.resource)
        )
    if isinstance(value, dict):
        return {_defanged(k): _defanged(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_defanged(v) for v in value) if isinstance(value, list) else tuple(map(_defanged, value))
    return value


def _pages(text: str, *, defang: bool = False) -> tuple[str, str]:
    """The report and the comparison page of a hostile evaluation (or of the same data with markup taken out)."""
    document, spans = _document(text)
    if defang:
        document, spans = ResultsDocument.read(_defanged(document.wire())), _defanged(spans)
    title = _defanged(f"team{text}") if defang else f"team{text}"
    report = render_report(document, spans)
    comparison = render_comparison([(title, document, "team/report.html")])
    return report, comparison


def test_every_participant_string_is_inert_in_the_report_and_the_comparison() -> None:
    plain_report, plain_comparison = _pages(BAD, defang=True)
    hostile_report, hostile_comparison = _pages(BAD)
    assert _elements(hostile_report) == _elements(plain_report)
    assert _elements(hostile_comparison) == _elements(plain_comparison)
    for page in (hostile_report, hostile_comparison):
        assert "<script" not in page and "<img" not in page and "<svg onload" not in page
        assert page.count("<meta") == 2  # charset and the content security policy: the template's own
    assert "escaped" in hostile_report  # the text is shown, as text


def test_a_link_with_a_script_scheme_is_not_kept() -> None:
    document, _ = _document("x")
    page = render_comparison([("team", document, "javascript:alert(1)")])
    assert "javascript:" not in page


@pytest.mark.slow
def test_chromium_sees_no_element_and_no_navigation_from_the_data(tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    offline = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--proxy-server=127.0.0.1:9",
               "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={tmp_path / 'profile'}",
               "--virtual-time-budget=5000"]  # fmt: skip
    plain, _ = _pages(BAD, defang=True)
    hostile, _ = _pages(BAD)
    doms: list[str] = []
    for name, html in (("plain", plain), ("hostile", hostile)):
        page = tmp_path / f"{name}.html"
        page.write_text(html, encoding="utf-8")
        dom = subprocess.run([chromium, *offline, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                             timeout=180, check=True)  # fmt: skip
        doms.append(dom.stdout)
    plain_dom, hostile_dom = doms
    assert "coordbench assessment" in hostile_dom  # still our page: a meta refresh would have left it
    assert "pwned" not in _title(hostile_dom)
    assert _elements(hostile_dom) == _elements(plain_dom)


def _title(dom: str) -> str:
    start = dom.find("<title>")
    return dom[start : dom.find("</title>", start)]

"""The live UI's routes under ``/ui/``: runs, one run, a team across runs, compare, failures; live updates.

Pages are rendered on the server by the report's templates (one escaping path for every
agent-controlled string) and drawn by the report's SVG code. One small script shipped in the
package (``/ui/static/ui.js``) refreshes the runs table when a run is evaluated (server-sent
events from ``/ui/events``; polling when they cannot be used) and filters a run's waterfall by
the agent clicked; every page works without it. Every answer carries a Content-Security-Policy
that allows nothing but this origin's script, styles in the page, and requests to this origin.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from importlib.resources import files
from typing import Any
from urllib.parse import parse_qs, urlencode

import anyio
from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent
from markupsafe import Markup

from coordbench import __version__
from coordbench.errors import CoordbenchError
from coordbench.online.records import EvaluationRecord
from coordbench.report.html import CSS
from coordbench.report.templates import render
from coordbench.results.document import ResultRow, ResultsDocument
from coordbench.server.auth import bearer_ok
from coordbench.server.evaluations_api import evaluator_of
from coordbench.server.state import backend_of
from coordbench.server.ui.session import cookie_header, session_ok, token_ok
from coordbench.server.ui.views import evaluation_of, failure_groups, run_rows, team_view, when
from coordbench.spans import SpanData

__all__ = ["SECURITY_HEADERS", "login_page", "router"]

router = APIRouter(prefix="/ui", include_in_schema=False)

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
"""Sent with every UI answer: nothing but this origin's script runs, nothing is framed, nothing cached."""

WINDOWS = {"": None, "1h": 3600, "24h": 86_400, "7d": 7 * 86_400}
"""The runs page's time filter: evaluated within this many seconds (``""``: any time)."""
RUNS_SHOWN = 200
"""Runs the runs page lists at most (newest first)."""
TEAM_RUNS = 50
"""Runs a team page reads by default (at most :data:`TEAM_RUNS_MOST`)."""
TEAM_RUNS_MOST = 500
FAILURES_AMONG = 10_000
"""The failures page groups the failed runs among this many most recent runs."""
WATERFALL_PAGE = 400
"""Spans per page of a run's waterfall."""
STREAM_SECONDS = 25.0
"""How long one server-sent-events answer stays open; the browser reconnects (so a server can stop)."""
_OFF = "Online evaluation is off, so no run is listed: start the server with --evaluate (COORDBENCH_EVALUATE=true)."
_ID_DIGITS = frozenset("0123456789abcdef")

_CSS = (
    CSS
    + """
body{margin:16px 24px;max-width:1280px} h1{font-size:1.4em;margin:8px 0 4px} td,th{padding:3px 7px}
nav.ui{display:flex;gap:14px;align-items:center;border-bottom:1px solid #ddd;padding-bottom:8px}
nav.ui a{text-decoration:none;color:#3b6ea8;font-weight:600} .live{margin-left:auto;font-size:0.85em;color:#666}
form.filter{margin:8px 0} tr.failed td{background:#fff6f5} g.node{cursor:pointer}
g.node.selected circle{stroke:#e67e22;stroke-width:5} .dimmed{opacity:0.12} code{font-size:0.92em}
.compare .card{max-width:620px} .error{color:#c0392b;font-weight:600}
table.runs td{white-space:nowrap} table.runs td.evidence{white-space:normal;font-size:0.82em;max-width:360px}
table.runs tr.first td{border-top:2px solid #ccd}
"""
)
"""The report's styles, and the UI's own: navigation, the runs table, a selected agent."""


def _html(title: str, template: str, **context: Any) -> str:
    """A whole page: ``template`` rendered with ``context`` inside the UI's frame (navigation, styles, script)."""
    body = render(template, **context)
    return str(render("ui_page.html.j2", title=title, css=Markup(_CSS), body=body, version=__version__))  # noqa: S704 - our constant


def _page(
    title: str, template: str, *, status: int = 200, headers: dict[str, str] | None = None, **context: Any
) -> Response:
    return HTMLResponse(
        _html(title, template, **context), status_code=status, headers={**SECURITY_HEADERS, **(headers or {})}
    )


def _problem(status: int, message: str) -> Response:
    """An error page: the status and what was wrong, in words."""
    return _page(f"coordbench: {status}", "ui_problem.html.j2", status=status, status_code=status, message=message)


def login_page(*, wrong: bool = False) -> Response:
    """The form that asks for the token (401: the page behind it needs one)."""
    return _page("coordbench: sign in", "ui_login.html.j2", status=401, wrong=wrong)


def _trace_key(trace_id: str) -> str | None:
    key = trace_id.strip().lower()
    return key if len(key) == 32 and set(key) <= _ID_DIGITS else None


def _bad_id(trace_id: str) -> Response:
    return _problem(400, f"a trace id is 32 hex digits, not {trace_id[:80]!r}")


def _records(
    request: Request, *, team: str | None = None, since: int | None = None, limit: int
) -> list[EvaluationRecord] | None:
    evaluator = evaluator_of(request.app)
    if evaluator is None:
        return None
    return evaluator.log.newest(team=team, since_unix_nano=since, limit=limit)


def _window(value: str) -> int | None:
    seconds = WINDOWS[value]
    return None if seconds is None else time.time_ns() - seconds * 1_000_000_000


def _filters(team: str, window: str) -> str | None:
    """What is wrong with the runs page's filters, or ``None``."""
    if len(team) > 255:
        return f"a team name has at most 255 characters, not {len(team)}"
    if window not in WINDOWS:
        return f"window must be one of 1h, 24h, 7d or empty (any time), not {window[:40]!r}"
    return None


def _teams(request: Request) -> list[str]:
    evaluator = evaluator_of(request.app)
    if evaluator is None:
        return []
    return sorted({r.team for r in evaluator.log.newest(limit=evaluator.log.max_records)})


@router.get("/")
async def runs_page(request: Request, team: str = "", window: str = "") -> Response:
    """Runs, newest first, filtered by team and time; new runs appear as they are evaluated."""
    problem = _filters(team, window)
    if problem is not None:
        return _problem(400, problem)
    evaluator = evaluator_of(request.app)
    changes = evaluator.log.changes if evaluator is not None else 0  # read before the rows: none is missed
    records = _records(request, team=team or None, since=_window(window), limit=RUNS_SHOWN)
    query = urlencode({k: v for k, v in (("team", team), ("window", window)) if v})
    return _page(
        "coordbench: runs",
        "ui_runs.html.j2",
        rows=run_rows(records or []),
        off=_OFF if records is None else None,
        teams=_teams(request),
        team=team,
        window=window,
        windows=[w for w in WINDOWS if w],
        fragment=f"/ui/runs?{query}" if query else "/ui/runs",
        shown=RUNS_SHOWN,
        changes=changes,
    )


@router.get("/runs")
async def runs_rows(request: Request, team: str = "", window: str = "") -> Response:
    """The runs table's rows alone (what the page's script swaps in when a run is evaluated)."""
    problem = _filters(team, window)
    if problem is not None:
        return _problem(400, problem)
    records = _records(request, team=team or None, since=_window(window), limit=RUNS_SHOWN) or []
    html = render("ui_runs_rows.html.j2", rows=run_rows(records))
    return HTMLResponse(str(html), headers=SECURITY_HEADERS)


@router.get("/events", response_class=EventSourceResponse)
async def events(request: Request) -> AsyncIterator[ServerSentEvent]:
    """``evaluated`` each time the evaluation log changes (its count of changes as data); one answer lasts 25 s."""
    evaluator = evaluator_of(request.app)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STREAM_SECONDS
    if evaluator is None:
        yield ServerSentEvent(event="off", data=_OFF, retry=60_000)
        return
    seen = evaluator.log.changes
    yield ServerSentEvent(event="ready", data=seen, retry=2_000)
    while (left := deadline - loop.time()) > 0 and not await request.is_disconnected():
        changed = await evaluator.wait_for(lambda seen=seen: evaluator.log.changes != seen, min(left, 5.0))
        if changed:
            seen = evaluator.log.changes
            yield ServerSentEvent(event="evaluated", data=seen, id=str(seen))


@router.get("/static/ui.js")
async def script() -> Response:
    """The one script the pages use (shipped in the package: no CDN, nothing fetched)."""
    text = files("coordbench.server.ui").joinpath("static/ui.js").read_text(encoding="utf-8")
    return Response(text, media_type="text/javascript; charset=utf-8", headers=SECURITY_HEADERS)


async def _spans(request: Request, key: str) -> list[SpanData] | None:
    """The trace's spans if the store holds them (``None``: not held; read off the loop)."""
    store = backend_of(request.app).store
    if key not in store and not store.blocking_reads:
        return None
    build = store.snapshot_builder(key)
    if build is None:
        return None
    snapshot = await anyio.to_thread.run_sync(build)
    return snapshot.spans or None


def _results(record: EvaluationRecord, spans: list[SpanData]) -> ResultsDocument:
    """The record's evaluation as a results document, with the config its trace recorded (as ``report`` shows it)."""
    from coordbench.evals.replay import recorded_config, replay_config
    from coordbench.results import evaluation_results

    config = replay_config(spans, None) if spans and recorded_config(spans) is not None else None
    return evaluation_results(evaluation_of(record), spans, config=config)


def _pages(count: int) -> int:
    return max(1, math.ceil(count / WATERFALL_PAGE))


@router.get("/traces/{trace_id}")
async def trace_page(request: Request, trace_id: str, page: str = "1") -> Response:
    """One run: the lanes of its agents, and per scenario the graph, score, evidence, attribution and waterfall."""
    key = _trace_key(trace_id)
    if key is None:
        return _bad_id(trace_id)
    if not (page.isascii() and page.isdigit()) or len(page) > 9 or int(page) < 1:
        return _problem(400, f"page is a whole number from 1, not {page[:12]!r}")
    number = int(page)
    evaluator = evaluator_of(request.app)
    record = evaluator.log.get(key) if evaluator is not None else None
    try:
        spans = await _spans(request, key)
    except (CoordbenchError, ValueError) as exc:
        return _problem(503, f"the spans of trace {key} cannot be read now: {exc}")
    if record is None and spans is None:
        return _problem(404, f"trace {key} is not held and has no evaluation")
    pages = _pages(len(spans or []))
    if number > pages:
        return _problem(404, f"the waterfall of trace {key} has {pages} page(s), not {number}")
    html = await anyio.to_thread.run_sync(  # drawing 10,000 spans takes a while: never on the loop that ingests
        lambda: _trace_html(key, record, spans, number, pages, off=_OFF if evaluator is None else None)
    )
    return HTMLResponse(html, headers=SECURITY_HEADERS)


def _trace_html(
    key: str, record: EvaluationRecord | None, spans: list[SpanData] | None, number: int, pages: int, *, off: str | None
) -> str:
    """The run's page: lanes, and per scenario what the report shows, with page ``number`` of its waterfall."""
    from coordbench.evals.replay import scenario_spans
    from coordbench.report.html import scenario_view
    from coordbench.report.svg import lanes_svg, waterfall_svg

    offset = (number - 1) * WATERFALL_PAGE
    scenarios: list[dict[str, Any]] = []
    if record is not None:
        document = _results(record, spans or [])
        by_scenario = scenario_spans(spans) if spans else {}
        for row in document.results:
            for entry in row.detail.scenarios:
                own = by_scenario.get(entry.id, spans) or []
                view = scenario_view(entry, None)
                decisive = entry.attribution.span_id if entry.attribution else None
                view["waterfall_svg"] = (
                    waterfall_svg(own, limit=WATERFALL_PAGE, offset=offset, decisive=decisive) if own else None
                )
                scenarios.append(view)
    decisive_any = next((s["attribution"].span_id for s in scenarios if s["attribution"] is not None), None)
    return _html(
        f"coordbench: run {key}",
        "ui_trace.html.j2",
        trace_id=key,
        record=record,
        team=record.team if record is not None else None,
        evaluated=when(record.evaluated_unix_nano) if record is not None else None,
        span_count=len(spans) if spans is not None else None,
        lanes=lanes_svg(spans, decisive=decisive_any) if spans else None,
        waterfall=waterfall_svg(spans, limit=WATERFALL_PAGE, offset=offset) if spans and not scenarios else None,
        scenarios=scenarios,
        page=number,
        pages=pages,
        off=off,
    )


@router.get("/traces/{trace_id}/spans")
async def trace_spans(request: Request, trace_id: str) -> Response:
    """The run's raw spans and completeness: ``GET /v1/traces/{trace_id}``'s answer, behind the UI's session."""
    from coordbench.server.traces_api import get_trace

    if _trace_key(trace_id) is None:
        return _bad_id(trace_id)
    try:
        answer = await get_trace(request, trace_id, wait=0, quiet=2.0)
    except HTTPException as exc:
        return _problem(exc.status_code, str(exc.detail))
    answer.headers.update(SECURITY_HEADERS)
    return answer


@router.get("/teams/{team:path}")
async def team_page(request: Request, team: str, runs: str = str(TEAM_RUNS)) -> Response:
    """A team across its recent runs: one graph with call counts, latency, failures and serialisation; trends."""
    from coordbench.dashboards.grafana import Panel
    from coordbench.dashboards.page import PanelData, Series, chart_svg
    from coordbench.report.svg import agent_graph_svg

    if len(team) > 255:
        return _problem(400, f"a team name has at most 255 characters, not {len(team)}")
    if not (runs.isascii() and runs.isdigit()) or len(runs) > 6 or not 1 <= int(runs) <= TEAM_RUNS_MOST:
        return _problem(400, f"runs is a whole number from 1 to {TEAM_RUNS_MOST}, not {runs[:12]!r}")
    records = _records(request, team=team, limit=int(runs))
    if records is None:
        return _problem(404, _OFF)
    if not records:
        return _problem(404, f"no evaluated run of team {team[:255]!r} is held")
    view = await anyio.to_thread.run_sync(lambda: team_view(team, records))
    agents, edges = view.graph()
    names = sorted({n for p in view.points for n in p.parts})
    runs_in_order = list(enumerate(view.points, start=1))  # x: the run's place, oldest first (runs come in bursts)
    series = [
        Series("score", tuple((float(i), p.score) for i, p in runs_in_order)),
        Series(
            "answer quality",
            tuple((float(i), p.answer_quality) for i, p in runs_in_order if p.answer_quality is not None),
        ),
        Series(
            "coordination quality",
            tuple((float(i), p.coordination_quality) for i, p in runs_in_order if p.coordination_quality is not None),
        ),
    ]
    parts = [
        Series(name, tuple((float(i), p.parts[name]) for i, p in runs_in_order if name in p.parts)) for name in names
    ]
    end = float(max(2, len(runs_in_order)))

    def drawn(title: str, found: list[Series]) -> tuple[Markup, list[dict[str, Any]]]:
        panel = Panel(title=title, description="", exprs=(), labels=(), unit="short", bounded=True)
        return chart_svg(PanelData(panel, [s for s in found if s.points]), 1.0, end, lambda x: f"run {x:.0f}")

    scores_svg, scores_legend = drawn("score, run by run", series)
    parts_svg, parts_legend = drawn("coordination parts, run by run", parts)
    return _page(
        f"coordbench: team {team[:80]}",
        "ui_team.html.j2",
        view=view,
        graph_svg=agent_graph_svg(
            agents, edges, limited=[a.name for a in view.agents if a.held_up], title=f"team {team}"
        ),
        scores_svg=scores_svg,
        scores_legend=scores_legend,
        parts_svg=parts_svg,
        parts_legend=parts_legend,
        recent=run_rows(records),
    )


@router.get("/compare")
async def compare_page(request: Request, base: str = "", head: str = "") -> Response:
    """Two runs side by side: what ``coordbench compare BASE HEAD`` says of them."""
    from coordbench.compare import compare_rows
    from coordbench.compare.diff import trace_row
    from coordbench.compare.page import diff_body

    if not base or not head:
        return _problem(400, "pick two runs: /ui/compare?base=TRACE_ID&head=TRACE_ID (the runs page has a picker)")
    keys = (_trace_key(base), _trace_key(head))
    for given, key in zip((base, head), keys, strict=True):
        if key is None:
            return _bad_id(given)
    evaluator = evaluator_of(request.app)
    if evaluator is None:
        return _problem(404, _OFF)
    sides: list[tuple[str, list[ResultRow], dict[str, list[SpanData]]]] = []
    for key in keys:
        assert key is not None  # noqa: S101 - checked above
        record = evaluator.log.get(key)
        if record is None:
            return _problem(404, f"trace {key} has no evaluation (yet)")
        try:
            spans = await _spans(request, key) or []
        except (CoordbenchError, ValueError) as exc:
            return _problem(503, f"the spans of trace {key} cannot be read now: {exc}")
        document = await anyio.to_thread.run_sync(lambda record=record, spans=spans: _results(record, spans))
        sides.append((key, [trace_row(row, key) for row in document.results], {key: spans} if spans else {}))
    (base_key, base_rows, base_spans), (head_key, head_rows, head_spans) = sides

    def drawn() -> str:  # the bootstrap intervals and two waterfalls: off the loop
        comparison = compare_rows(base_rows, head_rows, base_label=base_key, head_label=head_key)
        body = diff_body(comparison, base_rows, head_rows, base_spans=base_spans, head_spans=head_spans)
        return _html("coordbench: runs compared", "ui_compare.html.j2", body=body, base=base_key, head=head_key)

    return HTMLResponse(await anyio.to_thread.run_sync(drawn), headers=SECURITY_HEADERS)


@router.get("/failures")
async def failures_page(request: Request, team: str = "") -> Response:
    """Failed runs grouped by the agent attribution blamed and the cause, the largest group first."""
    if len(team) > 255:
        return _problem(400, f"a team name has at most 255 characters, not {len(team)}")
    records = _records(request, team=team or None, limit=FAILURES_AMONG)
    groups = await anyio.to_thread.run_sync(lambda: failure_groups(records or []))
    return _page(
        "coordbench: failures",
        "ui_failures.html.j2",
        groups=groups,
        off=_OFF if records is None else None,
        team=team,
        among=FAILURES_AMONG,
    )


@router.get("/login")
async def login_form(request: Request) -> Response:
    """The token form (with no token configured, the UI is open: straight to the runs)."""
    if backend_of(request.app).settings.token is None:
        return RedirectResponse("/ui/", status_code=303, headers=SECURITY_HEADERS)
    return _page("coordbench: sign in", "ui_login.html.j2", status=200, wrong=False)


LOGIN_BODY_MOST = 8192


@router.post("/login")
async def login(request: Request) -> Response:
    """Check the posted token (``token=...``, form-encoded); right: a session cookie and the runs page."""
    configured = backend_of(request.app).settings.token
    if configured is None:
        return RedirectResponse("/ui/", status_code=303, headers=SECURITY_HEADERS)
    body = await request.body()
    if len(body) > LOGIN_BODY_MOST:
        return _problem(413, f"a sign-in form is at most {LOGIN_BODY_MOST} bytes")
    try:
        given = parse_qs(body.decode("utf-8"), max_num_fields=4).get("token", [""])[0]
    except (UnicodeDecodeError, ValueError):
        return _problem(400, "the sign-in form is form-encoded UTF-8 with one field, token")
    token = configured.get_secret_value()
    if not token_ok(given, token):
        return login_page(wrong=True)
    secure = request.url.scheme == "https"
    return RedirectResponse(
        "/ui/", status_code=303, headers={**SECURITY_HEADERS, "Set-Cookie": cookie_header(token, secure=secure)}
    )


def ui_allows(path: str, cookie: str | None, authorization: str | None, token: str) -> bool:
    """Whether a request for the UI path ``path`` may pass: the sign-in form, a session cookie, or the bearer token."""
    return path == "/ui/login" or session_ok(cookie, token) or bearer_ok(authorization, token)

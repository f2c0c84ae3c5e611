"""The UI's routes over HTTP: each bad input gets its status and a message saying what was wrong; a large run's
page stays bounded; the UI without online evaluation says so; the green serves the same UI."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from conftest import StartBackend
from coordbench.green.server import GreenSettings, create_green_app
from coordbench.testing import LoopbackServer
from evals.teams import Team, Worker
from online.traces import GOOD, evaluation, post, team_trace, trace_id
from ui.served import Runs, standard_runs

UNKNOWN = "0123456789abcdef0123456789abcdef"


@pytest.fixture(scope="module")
def runs() -> Iterator[Runs]:
    with standard_runs() as found:
        yield found


def _problem(response: httpx.Response) -> str:
    found = re.search(r'data-problem="(\d+)">(.*?)</p>', response.text, re.S)
    assert found is not None, response.text[:500]
    assert int(found.group(1)) == response.status_code
    return found.group(2)


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        ("/ui/traces/xyz", 400, "32 hex digits"),
        ("/ui/traces/" + "a" * 5000, 400, "32 hex digits"),
        (f"/ui/traces/{UNKNOWN}", 404, "not held and has no evaluation"),
        (f"/ui/traces/{trace_id(1)}?page=0", 400, "whole number from 1"),
        (f"/ui/traces/{trace_id(1)}?page=-1", 400, "whole number from 1"),
        (f"/ui/traces/{trace_id(1)}?page=9", 404, "has 1 page(s), not 9"),
        (f"/ui/traces/{trace_id(1)}?page=" + "9" * 400, 400, "whole number from 1"),
        (f"/ui/traces/{trace_id(1)}?page=%D9%A3", 400, "whole number from 1"),  # an Arabic-Indic digit
        (f"/ui/traces/{UNKNOWN}/spans", 404, None),
        ("/ui/traces/%00/spans", 400, "32 hex digits"),
        ("/ui/teams/" + "t" * 300, 400, "at most 255 characters"),
        ("/ui/teams/nobody", 404, "no evaluated run of team"),
        ("/ui/teams/alpha?runs=0", 400, "from 1 to 500"),
        ("/ui/teams/alpha?runs=lots", 400, "from 1 to 500"),
        ("/ui/teams/alpha?runs=" + "1" * 50, 400, "from 1 to 500"),
        ("/ui/?window=1y", 400, "window must be one of"),
        ("/ui/?team=" + "t" * 300, 400, "at most 255 characters"),
        ("/ui/runs?window=%3Cb%3E", 400, "window must be one of"),
        ("/ui/failures?team=" + "t" * 300, 400, "at most 255 characters"),
        ("/ui/compare", 400, "pick two runs"),
        (f"/ui/compare?base={trace_id(1)}", 400, "pick two runs"),
        (f"/ui/compare?base=nope&head={trace_id(1)}", 400, "32 hex digits"),
        (f"/ui/compare?base={trace_id(1)}&head={UNKNOWN}", 404, "has no evaluation"),
    ],
)
def test_a_bad_request_gets_its_status_and_says_why(runs: Runs, path: str, status: int, says: str | None) -> None:
    response = httpx.get(f"{runs.url}{path}", timeout=30)
    assert response.status_code == status, response.text[:300]
    if says is not None:
        assert says in _problem(response)
    assert "default-src 'none'" in response.headers["content-security-policy"]


def test_a_team_name_with_a_slash_has_its_page(start_backend: StartBackend) -> None:
    backend = start_backend(evaluate=True, evaluate_quiet=0.2, evaluate_settle=1.0)
    post(backend.url, team_trace(30, GOOD, namespace="org/team a"))
    evaluation(backend.url, trace_id(30))
    listing = httpx.get(f"{backend.url}/ui/", timeout=30).text
    assert 'href="/ui/teams/org%2Fteam%20a"' in listing
    page = httpx.get(f"{backend.url}/ui/teams/org%2Fteam%20a", timeout=30)
    assert page.status_code == 200 and 'data-team="org/team a"' in page.text


def test_without_online_evaluation_the_pages_say_how_to_turn_it_on(backend_url: str) -> None:
    runs_page = httpx.get(f"{backend_url}/ui/", timeout=30)
    assert runs_page.status_code == 200 and "--evaluate" in runs_page.text and "data-off" in runs_page.text
    events = httpx.get(f"{backend_url}/ui/events", timeout=30)
    assert events.status_code == 200 and "event: off" in events.text  # the page's script stops listening
    assert httpx.get(f"{backend_url}/ui/teams/alpha", timeout=30).status_code == 404
    post(backend_url, team_trace(31, GOOD))
    held = httpx.get(f"{backend_url}/ui/traces/{trace_id(31)}", timeout=30)  # spans held, never evaluated
    assert held.status_code == 200 and 'class="lanes"' in held.text and "data-off" in held.text


@pytest.fixture
def backend_url(start_backend: StartBackend) -> str:
    return start_backend().url


def test_a_large_run_renders_a_bounded_page(start_backend: StartBackend) -> None:
    # 60 agents, about 10,000 spans: the waterfall is paged, the lanes bounded
    workers = tuple(Worker(f"member{i:02d}", extra_failures=84) for i in range(59))
    backend = start_backend(evaluate=True, evaluate_quiet=0.2, evaluate_settle=1.0, max_body_bytes=64 << 20)
    spans = team_trace(32, Team(workers=workers, parallel=False))
    assert len(spans) >= 10_000
    for start in range(0, len(spans), 2000):
        post(backend.url, spans[start : start + 2000])
    evaluation(backend.url, trace_id(32), wait=600)
    first = httpx.get(f"{backend.url}/ui/traces/{trace_id(32)}", timeout=300)
    assert first.status_code == 200
    pages = int(re.search(r'data-pages="(\d+)"', first.text).group(1))  # type: ignore[union-attr]
    assert pages == -(-len(spans) // 400)
    waterfall = first.text[first.text.index('<svg class="waterfall"') :]
    assert waterfall.count("<g data-span=") <= 401  # a page (and the decisive span)
    lanes = first.text[
        first.text.index('<svg class="lanes"') : first.text.index("</svg>", first.text.index('<svg class="lanes"'))
    ]
    assert lanes.count('class="lane"') == 60 and lanes.count("<rect data-span=") <= 2000
    assert len(first.content) < 6_000_000
    last = httpx.get(f"{backend.url}/ui/traces/{trace_id(32)}", params={"page": pages}, timeout=300)
    assert last.status_code == 200 and f'data-page="{pages}"' in last.text


@pytest.fixture
def green(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = GreenSettings(
        grpc_port=None, evaluate=True, evaluate_quiet=0.2, evaluate_settle=1.0, trace_self=False,
        output_dir=tmp_path_factory.mktemp("green-ui"), token="green-ui-token",  # type: ignore[arg-type]
    )  # fmt: skip
    server = LoopbackServer(lambda _url: create_green_app(settings))
    try:
        yield server.start().rstrip("/")
    finally:
        server.stop()


def test_the_green_serves_the_same_ui(green: str) -> None:
    headers = {"Authorization": "Bearer green-ui-token"}
    post(green, team_trace(33, GOOD, namespace="alpha"), headers)
    record = httpx.get(
        f"{green}/v1/traces/{trace_id(33)}/evaluation", params={"wait": 120}, headers=headers, timeout=150
    )
    assert record.status_code == 200
    assert httpx.get(f"{green}/ui/", timeout=30).status_code == 401  # its token guards the UI too
    page = httpx.get(f"{green}/ui/", headers=headers, timeout=30)
    assert page.status_code == 200 and f'data-trace="{trace_id(33)}"' in page.text
    about = httpx.get(f"{green}/", headers=headers, timeout=30).json()
    assert about["ui"] == "/ui/"

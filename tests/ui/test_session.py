"""The live UI behind a token: asked once in a form, then a session cookie (HttpOnly, SameSite=Strict) that is not
the token; no token in any URL; without it, 401 on every UI path and the API unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from coordbench.server.ui.session import COOKIE, session_value
from ui.browser import Watched, browser
from ui.served import Runs, standard_runs

pytestmark = pytest.mark.slow

TOKEN = "ui-token-5b7e-very-secret"


@pytest.fixture(scope="module")
def runs() -> Iterator[Runs]:
    with standard_runs(token=TOKEN) as found:
        yield found


UI_PATHS = ["/ui/", "/ui/runs", "/ui/events", "/ui/failures", "/ui/teams/alpha", "/ui/static/ui.js",
            "/ui/traces/000000000000000000000000c0de0001", "/ui/traces/000000000000000000000000c0de0001/spans",
            "/ui/compare?base=000000000000000000000000c0de0001&head=000000000000000000000000c0de0002"]  # fmt: skip


@pytest.mark.parametrize("path", UI_PATHS)
def test_without_the_token_every_ui_path_answers_401_with_the_sign_in_form(runs: Runs, path: str) -> None:
    response = httpx.get(f"{runs.url}{path}", timeout=30)
    assert response.status_code == 401
    assert 'action="/ui/login"' in response.text and "000000000000000000000000c0de" not in response.text
    assert "default-src 'none'" in response.headers["content-security-policy"]
    forged = httpx.get(f"{runs.url}{path}", cookies={COOKIE: session_value("another token")}, timeout=30)
    assert forged.status_code == 401  # a cookie made with any other token opens nothing


def test_the_session_cookie_is_not_the_token_and_opens_the_ui_only(runs: Runs) -> None:
    wrong = httpx.post(f"{runs.url}/ui/login", data={"token": "not-it"}, timeout=30)
    assert wrong.status_code == 401 and 'data-login="wrong"' in wrong.text and "set-cookie" not in wrong.headers
    signed = httpx.post(f"{runs.url}/ui/login", data={"token": TOKEN}, timeout=30)
    assert signed.status_code == 303 and signed.headers["location"] == "/ui/"
    cookie = signed.headers["set-cookie"]
    flags = {part.strip().split("=")[0].lower() for part in cookie.split(";")[1:]}
    assert (
        {"httponly", "samesite", "path"} <= flags
        and "samesite=strict" in cookie.lower()
        and "path=/ui" in cookie.lower()
    )
    value = cookie.split(";")[0].split("=", 1)[1]
    assert TOKEN not in cookie and value == session_value(TOKEN)
    opened = httpx.get(f"{runs.url}/ui/", cookies={COOKIE: value}, timeout=30)
    assert opened.status_code == 200 and runs.ids["good"] in opened.text
    api = httpx.get(f"{runs.url}/v1/evaluations", cookies={COOKIE: value}, timeout=30)
    assert api.status_code == 401  # the cookie stands for the token in the UI only: the API still wants it
    bearer = httpx.get(f"{runs.url}/ui/", headers=runs.headers, timeout=30)
    assert bearer.status_code == 200  # a script with the token reads pages as the API


@pytest.mark.parametrize(
    ("body", "content_type", "status"),
    [
        (b"token=" + b"x" * 9000, "application/x-www-form-urlencoded", 413),  # larger than any sign-in form
        (b"token=\xff\xfe", "application/x-www-form-urlencoded", 422),  # not UTF-8: the body guard says where
        (b"&".join([b"a=1"] * 50), "application/x-www-form-urlencoded", 400),  # fields beyond the form's
        (b"", "application/x-www-form-urlencoded", 401),  # no token: the form again
        (b'{"token": "' + TOKEN.encode() + b'"}', "application/json", 401),  # JSON is not the form
    ],
)
def test_a_bad_sign_in_gets_a_clear_answer(runs: Runs, body: bytes, content_type: str, status: int) -> None:
    response = httpx.post(f"{runs.url}/ui/login", content=body, headers={"Content-Type": content_type}, timeout=30)
    assert response.status_code == status
    assert "set-cookie" not in response.headers


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with browser() as launched:
        yield launched


def test_a_browser_signs_in_once_and_never_puts_the_token_in_a_url(runs: Runs, chromium: Any) -> None:
    context = chromium.new_context()
    watched = Watched(context.new_page())
    page = watched.page
    first = page.goto(f"{runs.url}/ui/traces/{runs.ids['failing']}")
    assert first is not None and first.status == 401
    page.fill("input[name=token]", TOKEN)
    page.click("button[type=submit]")
    page.wait_for_selector("tbody[data-live-runs] tr", timeout=120_000)
    page.wait_for_selector("[data-live-status]:text-is('live')", timeout=120_000)  # the event stream is open too
    (cookie,) = [c for c in context.cookies() if c["name"] == COOKIE]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/ui"
    assert page.evaluate("document.cookie") == ""  # no script can read it
    again = page.goto(f"{runs.url}/ui/traces/{runs.ids['failing']}")  # asked once: now every page opens
    assert again is not None and again.status == 200
    assert not any(TOKEN in url for url in watched.requests)
    assert not watched.off_loopback() and not watched.dialogs
    context.close()

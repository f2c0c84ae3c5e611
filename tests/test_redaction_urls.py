"""URL redaction: what a URL may show in spans, logs, status messages and results."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordbench.redaction import REDACTED, find_urls, redact_url, redact_urls_in


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://127.0.0.1:9009/", "http://127.0.0.1:9009/"),
        ("127.0.0.1:50051", "127.0.0.1:50051"),  # a gRPC target
        ("dns:///agents.internal:50051", "dns:///agents.internal:50051"),
        ("https://bot:pw@h.example/a2a", "https://REDACTED:REDACTED@h.example/a2a"),
        ("https://token@h.example/", "https://REDACTED@h.example/"),
        ("https://bot:pw@[::1]:8443/", "https://REDACTED:REDACTED@[::1]:8443/"),
        ("https://h.example/?api_key=abc&v=2", "https://h.example/?api_key=REDACTED&v=REDACTED"),
        ("https://h.example/?flag&&x=1", "https://h.example/?flag=REDACTED&&x=REDACTED"),
        ("https://h.example/path#access_token=abc", "https://h.example/path"),
        ("https://u:p@h.example:99999/", REDACTED),  # a port out of range: not taken apart, not shown
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_redact_urls_in_text_keeps_the_rest() -> None:
    text = "GET https://u:p@h/x?k=v failed (see http://127.0.0.1:1/). Retry 'https://h/?t=1'"
    assert redact_urls_in(text) == (
        "GET https://REDACTED:REDACTED@h/x?k=REDACTED failed (see http://127.0.0.1:1/). Retry 'https://h/?t=REDACTED'"
    )


_REFERENCE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
"""The regular expression :func:`find_urls` replaced (quadratic in a run of letters): the reference it must equal."""


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet="ab1+.-:/ \t\"'<>@?=&#xé", max_size=60))
def test_find_urls_finds_what_the_reference_regex_finds(text: str) -> None:
    assert find_urls(text) == [m.span() for m in _REFERENCE_URL.finditer(text)]


@pytest.mark.parametrize("limit", [5, 12, 20, 27, 40])
def test_a_cut_through_a_url_never_shows_part_of_its_secret(limit: int) -> None:
    text = "see https://user:supersecret@host.example/path?key=k2 and more"
    shown = redact_urls_in(text, limit=limit)
    assert "supersecret"[:4] not in shown and "k2" not in shown
    assert len(shown) <= max(limit, len("see REDACTED"))

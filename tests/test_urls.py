"""URL redaction: what a URL may show in spans, logs, status messages and results."""

from __future__ import annotations

import pytest

from coordbench.urls import REDACTED, redact_url, redact_urls_in


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

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


def test_log_filter_redacts_messages_and_chained_tracebacks() -> None:
    import io
    import logging

    from coordbench.urls import RedactUrlsFilter

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactUrlsFilter())
    log = logging.getLogger("coordbench.test_urls")
    log.addHandler(handler)
    try:
        try:
            try:
                raise ConnectionError("Client error '401' for url 'https://bot:k3y@agent.example/?token=k3y'")
            except ConnectionError as exc:
                raise RuntimeError("call to https://bot:k3y@agent.example/ failed") from exc
        except RuntimeError:
            log.exception("assessment %s failed for %s", "a1", "https://bot:k3y@agent.example/")
    finally:
        log.removeHandler(handler)
    output = stream.getvalue()
    assert "k3y" not in output
    assert "assessment a1 failed for https://REDACTED:REDACTED@agent.example/" in output
    cause = "ConnectionError: Client error '401' for url 'https://REDACTED:REDACTED@agent.example/?token=REDACTED'"
    assert cause in output
    assert "The above exception was the direct cause" in output  # the traceback is still there

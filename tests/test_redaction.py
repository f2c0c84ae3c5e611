"""Redaction: no URL credential and no registered secret reaches a log, a result or a span."""

from __future__ import annotations

from coordbench.redaction import RedactFilter


def test_log_filter_redacts_messages_and_chained_tracebacks() -> None:
    import io
    import logging

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactFilter())
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

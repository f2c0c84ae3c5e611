"""URLs as they may be shown: credentials and query values removed.

An agent's URL can carry a secret: ``https://user:token@host/`` or ``https://host/?api_key=...``.
Spans, logs, status messages and results name agents by URL, so they show it through
:func:`redact_url`, which follows the OpenTelemetry convention for ``url.full``: user and
password become ``REDACTED``, and so does every query value (we cannot tell which query
parameters are secret; agent URLs seldom need any). The fragment, never sent to a server, is
dropped. The URL used to reach the agent is not changed.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["REDACTED", "RedactUrlsFilter", "redact_url", "redact_urls_in"]

REDACTED = "REDACTED"

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")


def redact_url(url: str) -> str:
    """``url`` without its credentials, query values or fragment.

    Example:
        >>> redact_url("https://bot:s3cret@agents.example.com:8443/a2a/?api_key=abc&v=2#top")
        'https://REDACTED:REDACTED@agents.example.com:8443/a2a/?api_key=REDACTED&v=REDACTED'
        >>> redact_url("http://127.0.0.1:9009/")
        'http://127.0.0.1:9009/'
        >>> redact_url("dns:///agents.internal:50051")
        'dns:///agents.internal:50051'
    """
    if "@" not in url and "?" not in url and "#" not in url:
        return url  # nothing to remove (the common case, and gRPC targets such as host:port)
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return REDACTED  # not a URL we can take apart: show nothing of it
    netloc = parts.netloc
    if "@" in netloc:
        userinfo = netloc.rpartition("@")[0]
        netloc = ("REDACTED:REDACTED@" if ":" in userinfo else "REDACTED@") + _host_port(host, port)
    query = (
        "&".join(f"{pair.partition('=')[0]}={REDACTED}" if pair else "" for pair in parts.query.split("&"))
        if parts.query
        else ""
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _host_port(host: str | None, port: int | None) -> str:
    if host is None:
        return ""
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{port}" if port is not None else shown


def redact_urls_in(text: str) -> str:
    """``text`` with every URL in it passed through :func:`redact_url` (for error messages).

    Example:
        >>> redact_urls_in("call to https://h/?key=k failed: 401 for url 'https://u:p@h/x'")
        "call to https://h/?key=REDACTED failed: 401 for url 'https://REDACTED:REDACTED@h/x'"
    """
    return _URL.sub(lambda m: redact_url(m.group(0)), text)


class RedactUrlsFilter(logging.Filter):
    """A logging filter that redacts URLs in a record's message and in its traceback.

    Attach it to a handler: errors from HTTP clients name the URL they called (httpx says
    ``for url 'https://...'``), and a traceback shows every chained cause. The record's
    message is rendered and redacted, and its traceback is rendered into ``exc_text`` (which
    formatters use as is) and redacted, so no formatter sees the raw URL.

    Example:
        >>> import io
        >>> stream = io.StringIO()
        >>> handler = logging.StreamHandler(stream)
        >>> handler.addFilter(RedactUrlsFilter())
        >>> log = logging.getLogger("coordbench.example")
        >>> log.addHandler(handler)
        >>> log.warning("calling %s", "https://bot:key@host/")
        >>> log.removeHandler(handler)
        >>> stream.getvalue().strip()
        'calling https://REDACTED:REDACTED@host/'
    """

    _formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the record in place; never drops it."""
        record.msg = redact_urls_in(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_urls_in(record.exc_text)
        if record.stack_info:
            record.stack_info = redact_urls_in(record.stack_info)
        return True

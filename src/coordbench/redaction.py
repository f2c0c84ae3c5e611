"""Text as it may be shown: no credential reaches a result, a report, a log, a span or the console.

Two kinds of secret are removed from every text that leaves coordbench:

- credentials **in URLs** (user info and query values, :func:`redact_url`),
  wherever a URL appears in the text;
- **known secret values**: every bearer token, API key or password coordbench was given
  (:func:`register_secret`, called where a secret is read from settings), wherever it appears:
  a model provider may echo a key into an error message, with no URL around it.

Outputs pass their text through :func:`redact` (one string, linear in its length) or
:func:`redact_strings` (every string of a JSON document); logs through :class:`RedactFilter`.

URLs are shown through :func:`redact_url`, which follows the OpenTelemetry convention for ``url.full``: user and
password become ``REDACTED``, and so does every query value (we cannot tell which query
parameters are secret; agent URLs seldom need any). The fragment, never sent to a server, is
dropped. The URL used to reach the agent is not changed.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "RedactFilter",
    "find_urls",
    "redact",
    "redact_strings",
    "redact_url",
    "redact_urls_in",
    "register_secret",
]

logger = logging.getLogger(__name__)

REDACTED = "REDACTED"
"""What a credential is replaced with."""

MIN_SECRET_LENGTH = 6
"""Shorter values are not searched for (they would blank ordinary words); a warning says so once."""

_secrets: frozenset[str] = frozenset()
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Remember ``value`` as a secret: from now on :func:`redact` replaces it wherever it appears.

    Called with every token and key coordbench reads from its settings. ``None`` and empty
    values are ignored; values shorter than :data:`MIN_SECRET_LENGTH` are refused with a warning.
    """
    global _secrets
    if not value:
        return
    value = value.strip()
    if len(value) < MIN_SECRET_LENGTH:
        logger.warning(
            "a configured secret is shorter than %d characters: it cannot be removed from outputs reliably "
            "(use a longer one)",
            MIN_SECRET_LENGTH,
        )
        return
    with _lock:
        if value not in _secrets:
            _secrets = _secrets | {value}


def redact(text: str, *, limit: int | None = None) -> str:
    """``text`` without URL credentials and without any registered secret.

    Linear in ``len(text)`` (or in ``limit`` when given: the text is cut first).

    Args:
        text: The text.
        limit: Most characters kept (``None``: all).

    Example:
        >>> register_secret("sk-example-123456")
        >>> redact("401: key sk-example-123456 refused by https://u:p@api.example/v1?key=x")
        '401: key REDACTED refused by https://REDACTED:REDACTED@api.example/v1?key=REDACTED'
    """
    text = redact_urls_in(text, limit=limit)
    for secret in _secrets:  # a handful of values; each replace is one linear pass
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_strings(document: Any) -> Any:
    """A copy of a JSON-like document with :func:`redact` applied to every string, keys included."""
    if isinstance(document, str):
        return redact(document)
    if isinstance(document, Mapping):
        items = cast("Mapping[Any, Any]", document).items()
        return {redact(k) if isinstance(k, str) else k: redact_strings(v) for k, v in items}
    if isinstance(document, list | tuple):
        return [redact_strings(v) for v in cast("list[Any]", document)]
    return document


class RedactFilter(logging.Filter):
    """A logging filter that redacts (:func:`redact`) a record's message and its traceback.

    Attach it to a handler: errors from HTTP clients name the URL they called (httpx says
    ``for url 'https://...'``), a provider may echo a key, and a traceback shows every chained
    cause. The record's message is rendered and redacted, and its traceback is rendered into
    ``exc_text`` (which formatters use as is) and redacted, so no formatter sees the secret.

    Example:
        >>> import io
        >>> stream = io.StringIO()
        >>> handler = logging.StreamHandler(stream)
        >>> handler.addFilter(RedactFilter())
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
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


# --- URLs ----------------------------------------------------------------------------------------

_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_URL_REST = re.compile(r"://[^\s'\"<>]+")
"""What follows a URL's scheme. Linear: it can only start at ``://`` and its one loop never backtracks
into anything else, so a search over text of length n costs O(n) whatever the text holds."""


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


def find_urls(text: str) -> list[tuple[int, int]]:
    """Where URLs are in ``text``: ``(start, end)`` of each ``scheme://rest``, left to right.

    A URL is a scheme (a letter, then letters, digits, ``+``, ``.`` or ``-``), ``://``, and at
    least one character up to the next space, quote or angle bracket. The time is linear in
    ``len(text)`` whatever the text holds: the separator is found by :data:`_URL_REST` (which
    can only start at ``://``), and the scheme is read backwards from it, over characters no
    other URL's scheme reads (a scheme ends at the ``:`` of its own separator). The regular
    expression this replaces, ``[A-Za-z][A-Za-z0-9+.-]*://...``, took time quadratic in a run
    of letters (40,000 letters: 3 to 7 s), since it tried every letter as a scheme's start.

    Example:
        >>> text = "see https://h/x, or ftp://f; not ://bare nor 1://x"
        >>> [text[a:b] for a, b in find_urls(text)]
        ['https://h/x,', 'ftp://f;']
    """
    found: list[tuple[int, int]] = []
    done = 0  # text before this is inside a URL already found
    for match in _URL_REST.finditer(text):
        separator = match.start()
        if separator < done:
            continue
        start = separator
        while start > done and text[start - 1] in _SCHEME_CHARS:
            start -= 1
        while start < separator and text[start] not in _LETTERS:  # a scheme starts with a letter
            start += 1
        if start == separator:
            continue
        found.append((start, match.end()))
        done = match.end()
    return found


def redact_urls_in(text: str, *, limit: int | None = None) -> str:
    """``text`` with every URL in it passed through :func:`redact_url` (for error messages).

    Linear in ``len(text)`` (:func:`find_urls`), and with ``limit`` in ``limit`` alone: the text
    is cut first (to ``limit`` characters), and only what is kept is read. A URL the cut runs
    through is shown as ``REDACTED`` whole, since the part that would tell where its secret
    ends was cut off.

    Args:
        text: The text.
        limit: Most characters kept (``None``: all).

    Example:
        >>> redact_urls_in("call to https://h/?key=k failed: 401 for url 'https://u:p@h/x'")
        "call to https://h/?key=REDACTED failed: 401 for url 'https://REDACTED:REDACTED@h/x'"
        >>> redact_urls_in("see https://u:secret@host/", limit=16)
        'see REDACTED'
    """
    cut = limit is not None and len(text) > limit
    if cut:
        text = text[:limit]
    spans = find_urls(text)
    if not spans:
        return text
    out: list[str] = []
    last = 0
    for start, end in spans:
        out.append(text[last:start])
        out.append(REDACTED if cut and end == len(text) else redact_url(text[start:end]))
        last = end
    out.append(text[last:])
    return "".join(out)

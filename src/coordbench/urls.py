"""URLs as they may be shown: credentials and query values removed.

An agent's URL can carry a secret: ``https://user:token@host/`` or ``https://host/?api_key=...``.
Spans, logs, status messages and results name agents by URL, so they show it through
:func:`redact_url`, which follows the OpenTelemetry convention for ``url.full``: user and
password become ``REDACTED``, and so does every query value (we cannot tell which query
parameters are secret; agent URLs seldom need any). The fragment, never sent to a server, is
dropped. The URL used to reach the agent is not changed.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["REDACTED", "find_urls", "redact_url", "redact_urls_in"]

REDACTED = "REDACTED"

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

"""Text as it may be shown: no credential reaches a result, a report, a log, a span or the console.

Two kinds of secret are removed from every text that leaves coordbench:

- credentials **in URLs** (user info and query values, :func:`coordbench.urls.redact_url`),
  wherever a URL appears in the text;
- **known secret values**: every bearer token, API key or password coordbench was given
  (:func:`register_secret`, called where a secret is read from settings), wherever it appears:
  a model provider may echo a key into an error message, with no URL around it.

Outputs pass their text through :func:`redact` (one string, linear in its length) or
:func:`redact_strings` (every string of a JSON document); logs through :class:`RedactFilter`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any, cast

from coordbench.urls import REDACTED, redact_urls_in

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "RedactFilter", "redact", "redact_strings", "register_secret"]

logger = logging.getLogger(__name__)

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

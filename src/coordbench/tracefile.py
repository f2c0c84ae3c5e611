"""Trace files: spans read from a file as the receiver would read them, for re-evaluation and reports.

Accepted: an OTLP export (protobuf or JSON), the read API's ``{"spans": [...]}``
(``GET /v1/traces/{id}``) or a plain list of spans in that form.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from coordbench import jsontext
from coordbench.errors import CoordbenchError
from coordbench.otlp import DecodeResult, OtlpDecodeError, decode_json, decode_protobuf
from coordbench.spans import SpanData, span_from_dict

__all__ = ["TraceFileError", "load_spans"]


class TraceFileError(CoordbenchError, ValueError):
    """A trace file cannot be read (the message says why)."""

    default_message = "cannot read the trace file"


def load_spans(path: Path) -> list[SpanData]:
    """Spans from a file: OTLP protobuf, OTLP JSON, the read API's ``{"spans": [...]}``, or a list of spans.

    Raises:
        TraceFileError: If the file is unreadable or none of these.
    """
    try:
        body = path.read_bytes()
    except OSError as exc:
        raise TraceFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    stripped = body.lstrip()
    if not stripped.startswith((b"{", b"[")):
        try:
            return _all_or_error(path, decode_protobuf(body))
        except OtlpDecodeError as exc:
            raise TraceFileError(f"{path}: not JSON, and not OTLP protobuf either ({exc})") from exc
    try:
        document: Any = jsontext.loads(body)
    except ValueError as exc:
        raise TraceFileError(f"{path}: invalid JSON: {exc}") from exc
    if isinstance(document, dict) and "resourceSpans" in document:
        try:
            return _all_or_error(path, decode_json(body))
        except OtlpDecodeError as exc:
            raise TraceFileError(f"{path}: {exc}") from exc
    items: Any = cast("dict[str, Any]", document).get("spans") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise TraceFileError(
            f"{path}: expected an OTLP export, {{'spans': [...]}} (GET /v1/traces/{{id}}) or a list of spans"
        )
    try:
        return [span_from_dict(cast("dict[str, Any]", item)) for item in cast("list[Any]", items)]
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise TraceFileError(f"{path}: a span is malformed: {exc!r}") from exc


def _all_or_error(path: Path, result: DecodeResult) -> list[SpanData]:
    """Every span of an OTLP export; evaluating only part of a file would mislead, so rejects are an error."""
    if result.rejected:
        raise TraceFileError(f"{path}: {result.rejection_message()}")
    return [s.decode() for s in result.spans]

"""Trace files: spans read from a file as the receiver would read them, for re-evaluation and reports.

Accepted, each holding any number of traces:

- an OTLP export, protobuf or JSON;
- OTLP JSON Lines: one export per line, as the OpenTelemetry Collector's ``file`` exporter writes;
- a Jaeger JSON export (``{"data": [{"traceID", "spans", "processes"}]}``, the Jaeger UI's
  *Download JSON* and its ``/api/traces`` answer);
- the read API's ``{"spans": [...]}`` (``GET /v1/traces/{id}``), or a plain list of spans in that form.

:func:`load_traces` groups the spans by trace; :func:`load_spans` gives them all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from coordbench import jsontext
from coordbench.errors import CoordbenchError
from coordbench.otlp import DecodeResult, OtlpDecodeError, decode_json, decode_protobuf
from coordbench.semconv import SERVICE_NAME
from coordbench.spans import AttributeValue, SpanData, SpanKind, StatusCode, span_from_dict

__all__ = ["TraceFileError", "by_trace", "load_spans", "load_traces", "spans_in"]


class TraceFileError(CoordbenchError, ValueError):
    """A trace file cannot be read (the message says why)."""

    default_message = "cannot read the trace file"


def load_traces(path: Path) -> dict[str, list[SpanData]]:
    """The spans of a file (see the module docstring), grouped by trace id, in trace id order.

    Raises:
        TraceFileError: If the file is unreadable, holds none of these forms, or a span in it
            is malformed (partly evaluating a file would mislead).
    """
    return by_trace(load_spans(path))


def by_trace(spans: list[SpanData]) -> dict[str, list[SpanData]]:
    """Spans grouped by trace id, in trace id order (each trace's in the order given)."""
    traces: dict[str, list[SpanData]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    return dict(sorted(traces.items()))


def load_spans(path: Path) -> list[SpanData]:
    """Every span of a file (see the module docstring), in file order.

    Raises:
        TraceFileError: If the file is unreadable or none of these forms.
    """
    try:
        body = path.read_bytes()
    except OSError as exc:
        raise TraceFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return spans_in(path, body)


def spans_in(path: Path, body: bytes, document: Any = None) -> list[SpanData]:
    """:func:`load_spans` of a file already read (``body``) and, when it is JSON, maybe parsed.

    Args:
        path: The file (named in errors).
        body: Its bytes.
        document: ``body`` parsed as JSON, when the caller already did (``None``: not parsed).

    Raises:
        TraceFileError: If it holds none of the forms of the module docstring.
    """
    stripped = body.lstrip()
    if not stripped.startswith((b"{", b"[")):
        try:
            return _all_or_error(path, decode_protobuf(body))
        except OtlpDecodeError as exc:
            raise TraceFileError(f"{path}: not JSON, and not OTLP protobuf either ({exc})") from exc
    try:
        document = jsontext.loads(body) if document is None else document
    except ValueError as exc:
        lines = [line for line in body.splitlines() if line.strip()]
        if len(lines) > 1 and "Extra data" in str(exc):
            return _json_lines(path, lines)
        raise TraceFileError(f"{path}: invalid JSON: {exc}") from exc
    if isinstance(document, dict) and "resourceSpans" in document:
        try:
            return _all_or_error(path, decode_json(body))
        except OtlpDecodeError as exc:
            raise TraceFileError(f"{path}: {exc}") from exc
    if isinstance(document, dict) and isinstance(cast("dict[str, Any]", document).get("data"), list):
        return _jaeger(path, cast("list[Any]", document["data"]))
    items: Any = cast("dict[str, Any]", document).get("spans") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise TraceFileError(
            f"{path}: expected an OTLP export (or JSON Lines of them), a Jaeger export, "
            "{'spans': [...]} (GET /v1/traces/{id}) or a list of spans"
        )
    try:
        return [span_from_dict(cast("dict[str, Any]", item)) for item in cast("list[Any]", items)]
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise TraceFileError(f"{path}: a span is malformed: {exc!r}") from exc


def _json_lines(path: Path, lines: list[bytes]) -> list[SpanData]:
    """OTLP JSON Lines: one export per line (the Collector's file exporter)."""
    spans: list[SpanData] = []
    for number, line in enumerate(lines, start=1):
        try:
            spans.extend(_all_or_error(path, decode_json(line)))
        except OtlpDecodeError as exc:
            raise TraceFileError(f"{path}, line {number}: {exc}") from exc
    return spans


_JAEGER_KINDS = {
    "client": SpanKind.CLIENT,
    "server": SpanKind.SERVER,
    "producer": SpanKind.PRODUCER,
    "consumer": SpanKind.CONSUMER,
    "internal": SpanKind.INTERNAL,
}


def _jaeger_id(value: object, width: int) -> str:
    text = str(value).lower()
    if not text or len(text) > width or any(c not in "0123456789abcdef" for c in text):
        raise ValueError(f"not a hex id: {value!r}")
    return text.rjust(width, "0")


def _jaeger_tags(tags: object) -> dict[str, AttributeValue]:
    out: dict[str, AttributeValue] = {}
    for tag in cast("list[dict[str, Any]]", tags or []):
        value = tag.get("value")
        if isinstance(value, str | bool | int | float):
            out[str(tag["key"])] = value
    return out


def _jaeger_span(item: dict[str, Any], processes: dict[str, dict[str, Any]]) -> SpanData:
    process = processes.get(str(item.get("processID")), {})
    resource = _jaeger_tags(process.get("tags"))
    resource[SERVICE_NAME] = str(process.get("serviceName", "unknown"))
    tags = _jaeger_tags(item.get("tags"))
    kind = _JAEGER_KINDS.get(str(tags.pop("span.kind", "internal")), SpanKind.INTERNAL)
    errored = tags.pop("otel.status_code", None) == "ERROR" or tags.get("error") is True
    message = str(tags.pop("otel.status_description", ""))
    scope = str(tags.pop("otel.scope.name", "") or tags.pop("otel.library.name", ""))
    references = cast("list[dict[str, Any]]", item.get("references") or [])
    parent = next((_jaeger_id(r["spanID"], 16) for r in references if r.get("refType") == "CHILD_OF"), None)
    start = int(item["startTime"]) * 1000
    return SpanData(
        trace_id=_jaeger_id(item["traceID"], 32),
        span_id=_jaeger_id(item["spanID"], 16),
        parent_span_id=parent,
        name=str(item.get("operationName", "")),
        kind=kind,
        start_time_unix_nano=start,
        end_time_unix_nano=start + int(item.get("duration", 0)) * 1000,
        attributes=tags,
        status_code=StatusCode.ERROR if errored else StatusCode.UNSET,
        status_message=message,
        resource=resource,
        scope_name=scope,
    )


def _jaeger(path: Path, traces: list[Any]) -> list[SpanData]:
    """A Jaeger JSON export: microsecond times, tags, process tags as the resource, CHILD_OF references."""
    try:
        return [
            _jaeger_span(item, cast("dict[str, dict[str, Any]]", trace.get("processes") or {}))
            for trace in cast("list[dict[str, Any]]", traces)
            for item in cast("list[dict[str, Any]]", trace["spans"])
        ]
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise TraceFileError(f"{path}: not a Jaeger export this reads: {exc!r}") from exc


def _all_or_error(path: Path, result: DecodeResult) -> list[SpanData]:
    """Every span of an OTLP export; evaluating only part of a file would mislead, so rejects are an error."""
    if result.rejected:
        raise TraceFileError(f"{path}: {result.rejection_message()}")
    return [s.decode() for s in result.spans]

"""Where each span's bytes sit in an encoded ``ExportTraceServiceRequest`` (protobuf framing only).

The store keeps every span as its own protobuf bytes. Re-serialising each parsed span costs
more than parsing the whole request, while the sender already wrote those exact bytes: this
module walks the request's framing (tags and lengths, never the span contents) and slices them
out, a fraction of that cost (``docs/benchmarks.md``, receiver ingest).

Only the three levels above a span are walked::

    ExportTraceServiceRequest.resource_spans = 1  (ResourceSpans)
        ResourceSpans.scope_spans = 2             (ScopeSpans)
            ScopeSpans.spans = 2                  (Span: sliced, not parsed)

Other fields are skipped by wire type. Callers parse the request with protobuf first (which
validates it) and use the slices only when they line up with the parsed spans scope by scope.
"""

from __future__ import annotations

from coordbench.errors import CoordbenchError

__all__ = ["WireError", "span_slices"]

_LEN = 2  # wire type of length-delimited fields
_SPAN_TAG = 0x12  # field 2, wire type 2: ScopeSpans.spans


class WireError(CoordbenchError, ValueError):
    """The framing is not what this walker handles (malformed, or a deprecated group field)."""

    default_message = "malformed protobuf framing"


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise WireError("varint longer than 10 bytes")


def _skip(buf: bytes, pos: int, wire_type: int) -> int:
    if wire_type == 0:
        return _varint(buf, pos)[1]
    if wire_type == 1:
        return pos + 8
    if wire_type == 5:
        return pos + 4
    if wire_type == _LEN:
        size, pos = _varint(buf, pos)
        return pos + size
    raise WireError(f"unsupported wire type {wire_type}")


def _messages(buf: bytes, pos: int, end: int, field: int) -> list[tuple[int, int]]:
    """``(start, end)`` of every occurrence of length-delimited ``field`` in ``buf[pos:end]``."""
    out: list[tuple[int, int]] = []
    while pos < end:
        tag, pos = _varint(buf, pos)
        if tag & 7 != _LEN:
            pos = _skip(buf, pos, tag & 7)
            continue
        size, pos = _varint(buf, pos)
        if tag >> 3 == field:
            out.append((pos, pos + size))
        pos += size
    if pos != end:
        raise WireError("a field runs past the end of its message")
    return out


def _spans(buf: bytes, pos: int, end: int) -> list[bytes]:
    """The encoded spans of one ``ScopeSpans`` (the hot loop: one- and two-byte lengths inline)."""
    out: list[bytes] = []
    append = out.append
    while pos < end:
        tag = buf[pos]
        pos += 1
        if tag == _SPAN_TAG:
            size = buf[pos]
            if size < 0x80:
                pos += 1
            else:
                high = buf[pos + 1]
                if high < 0x80:
                    size = (size & 0x7F) | (high << 7)
                    pos += 2
                else:
                    size, pos = _varint(buf, pos)
            stop = pos + size
            append(buf[pos:stop])
            pos = stop
        else:
            if tag >= 0x80:
                tag, pos = _varint(buf, pos - 1)
            pos = _skip(buf, pos, tag & 7)
    if pos != end:
        raise WireError("a span runs past the end of its scope")
    return out


def span_slices(body: bytes) -> list[list[bytes]]:
    r"""The encoded spans of an export request, one list per ``ScopeSpans`` in wire order.

    Example:
        >>> from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
        >>> request = ExportTraceServiceRequest()
        >>> spans = request.resource_spans.add().scope_spans.add().spans
        >>> _ = spans.add(name="a"), spans.add(name="bb")
        >>> span_slices(request.SerializeToString())
        [[b'*\x01a', b'*\x02bb']]

    Raises:
        WireError: If the framing is malformed or uses group fields.
    """
    try:
        return [
            _spans(body, s_start, s_end)
            for r_start, r_end in _messages(body, 0, len(body), 1)
            for s_start, s_end in _messages(body, r_start, r_end, 2)
        ]
    except IndexError:
        raise WireError("truncated message") from None

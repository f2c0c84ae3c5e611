"""The native fast paths of OTLP ingest (the optional C extensions ``_scan`` and ``_jsonscan``).

The protobuf path parses a request with protobuf, then walks the parsed spans in Python for
their ids and slices each span's bytes out of the body: in-process, about three times the
parse alone. ``_scan`` does all of it in one pass in C, in about 0.6 of the parse: it validates
every field against a schema derived here from the installed protobuf descriptors (wire type,
lengths, UTF-8 of string fields, nested messages) and builds the stored spans directly
(``docs/benchmarks.md`` has what that does to the receiver).

It is strict rather than complete: it returns ``None`` for whatever it is not sure protobuf
would parse identically (a wire type that does not match its field, groups, nesting deeper
than ``_scan.MAX_DEPTH``, a singular resource or scope sent twice, malformed data), and the
caller then takes the protobuf path, which parses the request or reports the exact error. So
the fast path accepts a subset of what protobuf accepts and yields the same spans; the tests
check that on valid, mutated and truncated requests.

``_jsonscan`` (:func:`scan_json`) does the same for OTLP/JSON: one pass checks the JSON syntax
of the whole body and the OTLP fields of every span, and keeps each span's JSON text as sent,
which :mod:`coordbench.otlp.jsondecode` reads when someone reads the span. Where Python's json
module might read the body differently it returns ``None`` and the whole body goes to the
Python decoder; where the Python decoder might not take a span as it stands (a field of an
unexpected form, all-zero ids, a lone surrogate escape...) it marks that span, and the Python
decoder stores or rejects that one span. So a span it takes is one the Python decoder takes
too, read back identically; the tests check that on valid, mutated and truncated bodies.

The extensions are compiled when the package is built (``hatch_build.py``); without a C
compiler the build goes on without them and :data:`AVAILABLE` and :data:`JSON_AVAILABLE` are
``False``. Set ``COORDBENCH_NATIVE=0`` to turn both off.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import ModuleType

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from coordbench.extensions import native_extension
from coordbench.store.encoded import EncodedSpan, Envelope, SpanCodec
from coordbench.store.sizes import Grouped

__all__ = ["AVAILABLE", "JSON_AVAILABLE", "REJECTION_REASONS", "group", "scan", "scan_json"]

logger = logging.getLogger(__name__)

REJECTION_REASONS = (
    "invalid trace_id (must be 16 non-zero bytes)",
    "invalid span_id (must be 8 non-zero bytes)",
    "invalid parent_span_id (must be empty or 8 bytes)",
)
"""Why a span was rejected, in the order of the counts :func:`scan` returns."""


def _load() -> ModuleType | None:
    _scan = native_extension("coordbench.otlp._scan")
    if _scan is None:
        return None
    messages, roles = _schema(_scan)
    try:
        _scan.configure(messages, roles)
    except (TypeError, ValueError) as exc:  # an opentelemetry-proto schema the scanner cannot describe
        logger.warning("OTLP native scanner disabled: %s", exc)
        return None
    return _scan


def _kind(field: FieldDescriptor, native: ModuleType) -> int:
    t = FieldDescriptor
    if field.type == t.TYPE_MESSAGE:
        return native.MESSAGE
    if field.type == t.TYPE_STRING:
        return native.STRING
    if field.type == t.TYPE_BYTES:
        return native.BYTES
    if field.is_repeated:  # a repeated number may come packed: not handled, protobuf decides
        return native.UNSUPPORTED
    if field.type in (t.TYPE_DOUBLE, t.TYPE_FIXED64, t.TYPE_SFIXED64):
        return native.FIXED64
    if field.type in (t.TYPE_FLOAT, t.TYPE_FIXED32, t.TYPE_SFIXED32):
        return native.FIXED32
    if field.type in (
        t.TYPE_INT32,
        t.TYPE_INT64,
        t.TYPE_UINT32,
        t.TYPE_UINT64,
        t.TYPE_SINT32,
        t.TYPE_SINT64,
        t.TYPE_BOOL,
        t.TYPE_ENUM,
    ):
        return native.VARINT
    return native.UNSUPPORTED  # groups


def _schema(native: ModuleType) -> tuple[list[list[tuple[int, int, int]]], tuple[int, int, int, int, int, int]]:
    """Every message reachable from ``ExportTraceServiceRequest``: fields as (number, kind, message index)."""
    order: list[Descriptor] = []
    index: dict[str, int] = {}

    def visit(message: Descriptor) -> int:
        if message.full_name not in index:
            index[message.full_name] = len(order)
            order.append(message)
            for field in message.fields:
                if field.message_type is not None:
                    visit(field.message_type)
        return index[message.full_name]

    visit(ExportTraceServiceRequest.DESCRIPTOR)
    messages = [
        [
            (field.number, _kind(field, native), index[field.message_type.full_name] if field.message_type else 0)
            for field in message.fields
        ]
        for message in order
    ]
    prefix = "opentelemetry.proto."
    roles = (
        index[prefix + "collector.trace.v1.ExportTraceServiceRequest"],
        index[prefix + "trace.v1.ResourceSpans"],
        index[prefix + "trace.v1.ScopeSpans"],
        index[prefix + "trace.v1.Span"],
        index[prefix + "resource.v1.Resource"],
        index[prefix + "common.v1.InstrumentationScope"],
    )
    return messages, roles


_native = _load()

AVAILABLE = _native is not None
"""Whether the extension is built and enabled."""


def scan(
    body: bytes, codec: SpanCodec, envelope_of: Callable[[bytes | None, bytes | None], Envelope]
) -> tuple[list[EncodedSpan], tuple[int, int, int]] | None:
    """The spans of an encoded export request, or ``None`` when the protobuf path must decide.

    Args:
        body: The (decompressed) request body.
        codec: The codec each span carries (:data:`coordbench.otlp.decode.OTLP_PROTOBUF`).
        envelope_of: Called once per ``ScopeSpans`` with the encoded ``Resource`` (``None``
            when absent) and ``InstrumentationScope`` (``None`` when absent), both already
            validated.

    Returns:
        The valid spans, in wire order, and the number of spans rejected for an invalid trace
        id, span id and parent span id (:data:`REJECTION_REASONS`); ``None`` if the extension
        is not available or the request is one the protobuf path must parse.
    """
    if _native is None:
        return None
    return _native.scan(body, EncodedSpan, codec, envelope_of)


def group(spans: list[EncodedSpan], overhead: int) -> Grouped | None:
    """:func:`coordbench.store.sizes.group_by_trace` in C, for a batch whose ids and payloads are bytes.

    Args:
        spans: The batch.
        overhead: Bytes counted per span besides its payload (``ENCODED_SPAN_OVERHEAD``).

    Returns:
        ``(groups, sizes)`` as :func:`~coordbench.store.sizes.group_by_trace` returns them, or ``None``
        when the extension is not available or an id or payload is not ``bytes`` (spans decoded
        from OTLP/JSON): the Python code groups those.
    """
    if _native is None:
        return None
    return _native.group(spans, overhead)


_native_json = native_extension("coordbench.otlp._jsonscan")

JSON_AVAILABLE = _native_json is not None
"""Whether the OTLP/JSON extension is built and enabled."""


def scan_json(
    body: bytes, codec: SpanCodec, envelope_of: Callable[[bytes | None, bytes | None], Envelope]
) -> tuple[list[EncodedSpan], int] | None:
    """The spans of an OTLP/JSON export request, or ``None`` when the Python decoder must read it.

    Args:
        body: The (decompressed) request body.
        codec: The codec each span carries (its payload is the span's JSON text).
        envelope_of: Called once per ``scopeSpans`` with the JSON text of its ``resource`` and
            ``scope`` objects (``None`` when absent or null), and once for a ``resource`` with no
            scope; it may raise, and the error propagates.

    Returns:
        The spans in document order and how many of them are marked: a marked span has ``None``
        ids and must be decoded from its payload by the Python decoder, which stores it or
        rejects it. ``None`` if the extension is not available or the whole body must go to
        the Python decoder.
    """
    if _native_json is None:
        return None
    return _native_json.scan(body, EncodedSpan, codec, envelope_of)

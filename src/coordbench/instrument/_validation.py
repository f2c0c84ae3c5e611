"""a2a-sdk's required-field check of an incoming message, without its walk through metadata.

Before serving a request, a2a-sdk's request handler checks that every field the A2A protobuf
marks REQUIRED is set (``validate_proto_required_fields``). It does so by walking the whole
request in Python, field by field, including every entry of the message's ``metadata``
(a ``google.protobuf.Struct``): each entry is a ``Value`` of six fields, and costs about 15 µs.
The trace context a traced caller carries in the metadata is such an entry, so carrying it
(as the protocol's traceability practice asks) would cost the callee more than recording
its span does.

No field of ``Struct``, ``Value`` or ``ListValue`` is REQUIRED, so that walk can never find a
missing field: while instrumented, the check runs on the request with its ``Struct``
metadata set aside, then puts it back. It raises exactly what a2a-sdk's check raises. This
is checked once, from the descriptors, before the check is replaced; if a2a-sdk ever marks
a metadata field (or anything inside a ``Struct``) REQUIRED, a2a-sdk's check stays as it is.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from typing import Any

from a2a.types import SendMessageRequest
from google.api.field_behavior_pb2 import FieldBehavior, field_behavior
from google.protobuf import struct_pb2
from google.protobuf.descriptor import FieldDescriptor

__all__ = [
    "METADATA_PATHS",
    "has_required_fields",
    "metadata_walk_finds_nothing",
    "restore_metadata_walk",
    "skip_metadata_walk",
]

_logger = logging.getLogger(__name__)

_MODULE = "a2a.server.request_handlers.request_handler"
_NAME = "validate_proto_required_fields"

METADATA_PATHS: tuple[tuple[str, ...], ...] = (("message", "metadata"), ("metadata",))
"""Where a ``SendMessageRequest`` holds ``Struct`` metadata: the message's, and the request's own."""

_original: Callable[[Any], None] | None = None


def _required(field: FieldDescriptor) -> bool:
    options: Any = field.GetOptions()
    return FieldBehavior.REQUIRED in options.Extensions[field_behavior]


def _is_repeated(field: FieldDescriptor) -> bool:
    return bool(field.is_repeated)


def has_required_fields(descriptor: Any, seen: set[str] | None = None) -> bool:
    """Whether any field of ``descriptor``, or of a message type inside it, is REQUIRED."""
    seen = set() if seen is None else seen
    if descriptor.full_name in seen:
        return False
    seen.add(descriptor.full_name)
    for field in descriptor.fields:
        if _required(field):
            return True
        if field.message_type is not None and has_required_fields(field.message_type, seen):
            return True
    return False


def metadata_walk_finds_nothing() -> bool:
    """Whether a2a-sdk's check can never report anything inside, or about, the metadata we set aside."""
    if has_required_fields(struct_pb2.Struct.DESCRIPTOR):
        return False
    for path in METADATA_PATHS:
        descriptor: Any = SendMessageRequest.DESCRIPTOR
        field: FieldDescriptor | None = None
        for name in path:  # singular message fields down to the metadata (their presence is not touched)
            field = descriptor.fields_by_name.get(name)
            if field is None or field.message_type is None or _is_repeated(field):
                return False
            descriptor = field.message_type
        if field is None or _required(field) or descriptor.full_name != struct_pb2.Struct.DESCRIPTOR.full_name:
            return False
    return True


def _holders(request: SendMessageRequest) -> list[tuple[Any, str]]:
    """The (message, field name) pairs of ``request`` whose metadata is set and not empty."""
    holders: list[tuple[Any, str]] = []
    for *parents, name in METADATA_PATHS:
        holder: Any = request
        for parent in parents:
            if not holder.HasField(parent):
                break
            holder = getattr(holder, parent)
        else:
            if holder.HasField(name) and getattr(holder, name).fields:
                holders.append((holder, name))
    return holders


def _make_check(original: Callable[[Any], None]) -> Callable[[Any], None]:
    def validate_proto_required_fields(msg: Any) -> None:
        """a2a-sdk's check, run with the request's ``Struct`` metadata set aside (see the module)."""
        if type(msg) is not SendMessageRequest:
            original(msg)
            return
        holders = _holders(msg)
        if not holders:
            original(msg)
            return
        aside: list[tuple[Any, str, struct_pb2.Struct]] = []
        for holder, name in holders:
            kept = struct_pb2.Struct()
            kept.CopyFrom(getattr(holder, name))
            holder.ClearField(name)
            aside.append((holder, name, kept))
        try:
            original(msg)
        finally:
            for holder, name, kept in aside:
                getattr(holder, name).CopyFrom(kept)

    validate_proto_required_fields.__wrapped__ = original  # type: ignore[attr-defined]
    return validate_proto_required_fields


def skip_metadata_walk() -> None:
    """Replace a2a-sdk's request check with one that skips the metadata walk (idempotent)."""
    global _original
    if _original is not None:
        return
    try:
        module = importlib.import_module(_MODULE)
        original = getattr(module, _NAME)
    except (ImportError, AttributeError):
        _logger.debug("a2a-sdk has no %s.%s: nothing to replace", _MODULE, _NAME)
        return
    if not metadata_walk_finds_nothing():
        _logger.info("a2a-sdk marks a metadata field REQUIRED: its request check stays as it is")
        return
    _original = original
    setattr(module, _NAME, _make_check(original))


def restore_metadata_walk() -> None:
    """Put a2a-sdk's own request check back."""
    global _original
    if _original is None:
        return
    setattr(importlib.import_module(_MODULE), _NAME, _original)
    _original = None

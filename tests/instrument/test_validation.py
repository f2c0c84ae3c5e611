"""a2a-sdk's required-field check, run without walking message metadata while instrumented.

The replacement must raise exactly what a2a-sdk's own check raises, for every request, and
leave the request exactly as it found it. Each case below is run through both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest
from a2a.utils.errors import InvalidParamsError
from a2a.utils.proto_utils import validate_proto_required_fields
from google.protobuf import struct_pb2

from conftest import StartAgent
from coordbench.instrument import A2AInstrumentor, _validation

_REQUEST_HANDLER = "a2a.server.request_handlers.request_handler"


def _traceparent() -> str:
    return "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def _message(**fields: Any) -> Message:
    message = Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="hi")])
    for name, value in fields.items():
        if value is None:
            message.ClearField(name)
        else:
            setattr(message, name, value)
    return message


def _with_metadata(request: SendMessageRequest, **entries: Any) -> SendMessageRequest:
    request.message.metadata.update(entries)
    return request


def _cases() -> dict[str, SendMessageRequest | GetTaskRequest]:
    nested = struct_pb2.Struct()
    nested.update({"list": [1, "two", {"three": None}], "deep": {"a": {"b": True}}})
    request_level = SendMessageRequest(message=_message())
    request_level.metadata.update({"caller": "x", "n": 1.5})
    only_metadata = SendMessageRequest()
    only_metadata.message.metadata.update({"traceparent": _traceparent()})
    empty_metadata = SendMessageRequest(message=_message())
    empty_metadata.message.metadata.SetInParent()
    part_metadata = SendMessageRequest(message=_message())
    part_metadata.message.parts[0].metadata.update({"k": "v"})
    return {
        "valid": SendMessageRequest(message=_message()),
        "valid, trace context": _with_metadata(SendMessageRequest(message=_message()), traceparent=_traceparent()),
        "valid, nested metadata": _with_metadata(
            SendMessageRequest(message=_message()), traceparent=_traceparent(), tree=dict(nested)
        ),
        "valid, request metadata": request_level,
        "valid, both metadata": _with_metadata(request_level.__deepcopy__(), traceparent=_traceparent()),
        "valid, empty metadata": empty_metadata,
        "valid, part metadata": part_metadata,
        "no message": SendMessageRequest(),
        "message of metadata only": only_metadata,
        "no role, trace context": _with_metadata(
            SendMessageRequest(message=_message(role=None)), traceparent=_traceparent()
        ),
        "no parts, trace context": _with_metadata(
            SendMessageRequest(message=_message(parts=None)), traceparent=_traceparent()
        ),
        "no message id, request metadata": SendMessageRequest(
            message=_message(message_id=None), metadata=request_level.metadata
        ),
        "valid, empty part, trace context": _with_metadata(
            SendMessageRequest(message=Message(message_id="m", role=Role.ROLE_USER, parts=[Part()])),
            traceparent=_traceparent(),
        ),
        "get task without id": GetTaskRequest(),
        "get task": GetTaskRequest(id="t1"),
    }


def _outcome(check: Callable[[Any], None], request: Any) -> Any:
    try:
        check(request)
    except InvalidParamsError as exc:
        return ("InvalidParamsError", exc.message, exc.data)
    return "valid"


@pytest.fixture
def replaced() -> Iterator[Callable[[Any], None]]:
    """The check a2a-sdk's request handler calls while the metadata walk is skipped."""
    import importlib

    module = importlib.import_module(_REQUEST_HANDLER)
    _validation.skip_metadata_walk()
    try:
        check = module.validate_proto_required_fields
        assert check is not validate_proto_required_fields
        yield check
    finally:
        _validation.restore_metadata_walk()
    assert module.validate_proto_required_fields is validate_proto_required_fields


@pytest.mark.parametrize("case", list(_cases()))
def test_the_check_raises_what_a2a_sdk_raises_and_leaves_the_request_as_it_was(
    replaced: Callable[[Any], None], case: str
) -> None:
    request = _cases()[case]
    before = request.SerializeToString(deterministic=True)
    presence = [request.HasField(f.name) for f in request.DESCRIPTOR.fields if f.message_type and not f.is_repeated]
    expected = _outcome(validate_proto_required_fields, request)
    assert _outcome(replaced, request) == expected
    assert request.SerializeToString(deterministic=True) == before
    assert [request.HasField(f.name) for f in request.DESCRIPTOR.fields if f.message_type and not f.is_repeated] == (
        presence
    )


def test_the_cases_cover_errors_and_metadata() -> None:
    """The comparison above means something only if a2a-sdk finds errors in some cases and metadata in others."""
    outcomes = {name: _outcome(validate_proto_required_fields, r) for name, r in _cases().items()}
    assert outcomes["valid, trace context"] == "valid"
    assert outcomes["no role, trace context"] == (
        "InvalidParamsError",
        "Validation failed",
        {"errors": [{"field": "message.role", "message": "Field is required."}]},
    )
    assert outcomes["message of metadata only"][2]["errors"] == [
        {"field": "message.message_id", "message": "Field is required."},
        {"field": "message.role", "message": "Field is required."},
        {"field": "message.parts", "message": "Field must contain at least one element."},
    ]
    assert sum(o != "valid" for o in outcomes.values()) == 6


def test_struct_metadata_holds_nothing_required_and_the_guard_sees_what_does() -> None:
    """The skip is exact because Struct has no REQUIRED field; a path that is REQUIRED turns it off."""
    assert not _validation.has_required_fields(struct_pb2.Struct.DESCRIPTOR)
    assert _validation.has_required_fields(Message.DESCRIPTOR)  # message_id, role and parts are REQUIRED
    assert _validation.metadata_walk_finds_nothing()


@pytest.mark.parametrize("path", [("message",), ("message", "parts"), ("message", "message_id"), ("nope",)])
def test_a_path_that_is_not_optional_struct_metadata_keeps_a2a_sdks_check(
    monkeypatch: pytest.MonkeyPatch, path: tuple[str, ...]
) -> None:
    import importlib

    monkeypatch.setattr(_validation, "METADATA_PATHS", (("message", "metadata"), path))
    assert not _validation.metadata_walk_finds_nothing()
    _validation.skip_metadata_walk()
    try:
        assert importlib.import_module(_REQUEST_HANDLER).validate_proto_required_fields is (
            validate_proto_required_fields
        )
    finally:
        _validation.restore_metadata_walk()


def test_instrument_replaces_the_check_and_uninstrument_restores_it() -> None:
    import importlib

    module = importlib.import_module(_REQUEST_HANDLER)
    instrumentor = A2AInstrumentor()
    instrumentor.instrument()
    try:
        assert module.validate_proto_required_fields is not validate_proto_required_fields
        assert module.validate_proto_required_fields.__wrapped__ is validate_proto_required_fields
    finally:
        instrumentor.uninstrument()
    assert module.validate_proto_required_fields is validate_proto_required_fields


def _rpc(message: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": message}}


_BAD_BODIES = {
    "no role": _rpc({"messageId": "m", "parts": [{"text": "x"}], "metadata": {"traceparent": _traceparent()}}),
    "no parts": _rpc({"messageId": "m", "role": "ROLE_USER", "metadata": {"traceparent": _traceparent()}}),
    "metadata only": _rpc({"metadata": {"traceparent": _traceparent(), "k": [1, {"a": None}]}}),
}


async def test_an_instrumented_agent_answers_bad_requests_as_a2a_sdk_does(start_agent: StartAgent) -> None:
    """Over the wire: each bad request gets the same JSON-RPC error instrumented or not; metadata stays."""
    url = start_agent("V")
    headers = {"A2A-Version": "1.0"}
    good = _rpc({"messageId": "g", "role": "ROLE_USER", "parts": [{"text": "x"}], "metadata": {"k": "v", "n": 2}})
    async with httpx.AsyncClient(timeout=10) as http:

        async def answers() -> dict[str, Any]:
            out = {name: (await http.post(url, json=b, headers=headers)).json() for name, b in _BAD_BODIES.items()}
            task = (await http.post(url, json=good, headers=headers)).json()["result"]["task"]
            out["good: metadata in history"] = [m.get("metadata") for m in task["history"] if m["messageId"] == "g"]
            return out

        plain = await answers()
        instrumentor = A2AInstrumentor()
        instrumentor.instrument()
        try:
            traced = await answers()
        finally:
            instrumentor.uninstrument()
    assert traced == plain
    for name in _BAD_BODIES:
        assert plain[name]["error"]["code"] == -32602, plain[name]
    assert plain["good: metadata in history"] == [{"k": "v", "n": 2}]

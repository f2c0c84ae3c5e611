"""Steps: span → Step, Step ⇄ extension JSON, Step → span, and bad documents."""

from __future__ import annotations

import json

import pytest

from coordbench import semconv
from coordbench.errors import StepFormatError
from coordbench.spans import SpanData, SpanKind, StatusCode
from coordbench.steps import (
    MAX_TRACE_NESTING,
    AgentInvocation,
    CallType,
    ResponseTrace,
    Step,
    ToolInvocation,
    format_timestamp,
    parse_timestamp,
    response_trace_from_dict,
    response_trace_from_metadata,
    response_trace_to_dict,
    span_from_step,
    step_from_dict,
    step_from_span,
    step_to_dict,
)
from coordbench.steps.document import ResponseTraceDocument, StepDocument

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
T0 = 1_700_000_000_123_456_789  # 2023-11-14T22:13:20.123456789Z


def client_span(**overrides: object) -> SpanData:
    fields: dict[str, object] = {
        "trace_id": TRACE,
        "span_id": "00f067aa0ba902b7",
        "parent_span_id": "a3ce929d0e0e4736",
        "name": "invoke_agent B",
        "kind": SpanKind.CLIENT,
        "start_time_unix_nano": T0,
        "end_time_unix_nano": T0 + 12_500_000,
        "attributes": {
            semconv.GEN_AI_OPERATION_NAME: "invoke_agent",
            semconv.GEN_AI_AGENT_NAME: "B",
            semconv.A2A_AGENT_URL: "http://127.0.0.1:9/",
            semconv.GEN_AI_USAGE_INPUT_TOKENS: 10,
            semconv.GEN_AI_USAGE_OUTPUT_TOKENS: 32,
            semconv.A2A_STEP_COST: 0.25,
            semconv.A2A_TASK_STATE: "completed",
            "custom.list": ("a", "b"),
        },
        "resource": {semconv.SERVICE_NAME: "agent-a", "service.instance.id": "x"},
    }
    fields.update(overrides)
    return SpanData(**fields)  # type: ignore[arg-type]


def test_client_span_becomes_an_agent_step_with_every_field() -> None:
    step = step_from_span(client_span())
    assert step.step_id == "00f067aa0ba902b7"
    assert step.trace_id == TRACE
    assert step.parent_step_id == "a3ce929d0e0e4736"
    assert step.call_type is CallType.AGENT
    assert step.name == "invoke_agent B"
    assert step.start_time_unix_nano == T0
    assert step.end_time_unix_nano == T0 + 12_500_000
    assert step.latency == pytest.approx(12.5)  # 12.5 ms, worked out from the nanoseconds above
    assert step.error is None
    assert step.cost == 0.25
    assert step.total_tokens == 42  # 10 in + 32 out
    assert step.step_action == AgentInvocation(agent_url="http://127.0.0.1:9/", agent_name="B")
    assert step.additional_attributes["a2a.task.state"] == "completed"
    assert step.additional_attributes["span.kind"] == "CLIENT"
    assert step.additional_attributes["service.name"] == "agent-a"
    assert semconv.A2A_STEP_COST not in step.additional_attributes


def test_error_status_becomes_step_error() -> None:
    span = client_span(status_code=StatusCode.ERROR, status_message="ConnectError: refused")
    assert step_from_span(span).error == "ConnectError: refused"
    no_message = client_span(
        status_code=StatusCode.ERROR, attributes={semconv.ERROR_TYPE: "task_failed", semconv.A2A_METHOD: "SendMessage"}
    )
    assert step_from_span(no_message).error == "task_failed"


@pytest.mark.parametrize(
    ("attributes", "kind", "expected"),
    [
        (
            {semconv.A2A_CALL_TYPE: "HOST", semconv.GEN_AI_OPERATION_NAME: "invoke_agent"},
            SpanKind.CLIENT,
            CallType.HOST,
        ),
        (
            {semconv.GEN_AI_OPERATION_NAME: "execute_tool", semconv.GEN_AI_TOOL_NAME: "t"},
            SpanKind.INTERNAL,
            CallType.TOOL,
        ),
        ({semconv.GEN_AI_OPERATION_NAME: "chat"}, SpanKind.CLIENT, CallType.TOOL),
        ({semconv.GEN_AI_OPERATION_NAME: "invoke_workflow"}, SpanKind.INTERNAL, CallType.HOST),
        ({semconv.A2A_METHOD: "GetTask"}, SpanKind.CLIENT, CallType.AGENT),
        ({"http.method": "GET"}, SpanKind.CLIENT, CallType.HOST),
    ],
)
def test_call_type_rules(attributes: dict[str, object], kind: SpanKind, expected: CallType) -> None:
    assert step_from_span(client_span(attributes=attributes, kind=kind)).call_type is expected


def test_tool_span_keeps_tool_name_and_parameters() -> None:
    span = client_span(
        name="execute_tool search",
        kind=SpanKind.INTERNAL,
        attributes={
            semconv.GEN_AI_OPERATION_NAME: "execute_tool",
            semconv.GEN_AI_TOOL_NAME: "search",
            semconv.A2A_TOOL_PARAMETERS: json.dumps({"q": "otel", "k": 3}),
        },
    )
    step = step_from_span(span)
    assert step.step_action == ToolInvocation(tool_name="search", parameters={"q": "otel", "k": 3})
    assert step.total_tokens is None


def test_span_step_span_round_trip_is_lossless() -> None:
    span = client_span(status_code=StatusCode.ERROR, status_message="boom")
    back = span_from_step(step_from_span(span))
    assert back.trace_id == span.trace_id
    assert back.span_id == span.span_id
    assert back.parent_span_id == span.parent_span_id
    assert back.name == span.name
    assert back.kind == span.kind
    assert (back.start_time_unix_nano, back.end_time_unix_nano) == (T0, T0 + 12_500_000)
    assert back.status_code == StatusCode.ERROR
    assert back.status_message == "boom"
    assert back.service_name == "agent-a"
    # every original attribute survives (the call type is made explicit on the way back)
    assert {k: back.attributes[k] for k in span.attributes} == dict(span.attributes)
    assert step_from_span(back) == step_from_span(span)


def test_step_json_round_trip_is_lossless() -> None:
    inner = ResponseTrace(
        trace_id=TRACE,
        steps=(
            Step(
                step_id="1111111111111111",
                trace_id=TRACE,
                call_type=CallType.TOOL,
                parent_step_id="00f067aa0ba902b7",
                step_action=ToolInvocation("search", {"q": "x"}),
                start_time_unix_nano=T0 + 1,
                end_time_unix_nano=T0 + 2_000_001,
            ),
        ),
    )
    step = Step(
        step_id="00f067aa0ba902b7",
        trace_id=TRACE,
        call_type=CallType.AGENT,
        name="invoke_agent B",
        start_time_unix_nano=T0,
        end_time_unix_nano=T0 + 12_500_000,
        error="boom",
        cost=0.25,
        total_tokens=42,
        step_action=AgentInvocation("http://b/", "B", {"text": "hi"}, inner),
        additional_attributes={"k": "v", "n": 3, "f": 0.5, "b": True, "l": ("a", "b")},
    )
    document = json.loads(json.dumps(step_to_dict(step)))
    assert step_from_dict(document) == step
    assert document["start_time"] == "2023-11-14T22:13:20.123456789Z"
    assert document["latency"] == 12.5
    assert "parent_step_id" not in document  # a root step has none


def test_response_trace_round_trip_and_metadata() -> None:
    trace = ResponseTrace(trace_id=TRACE, steps=(step_from_span(client_span()),))
    metadata = {semconv.TRACEABILITY_METADATA_KEY: json.loads(json.dumps(response_trace_to_dict(trace)))}
    assert response_trace_from_metadata(metadata) == trace
    assert response_trace_from_metadata({"other": 1}) is None


def test_reads_the_python_sample_shape() -> None:
    """The shape of the extension's Python sample (TraceRecord.as_dict): flattened, ISO times, int latency."""
    sample = {
        "trace_id": "trace-8c6f",
        "steps": [
            {
                "step_id": "step-1",
                "trace_id": "trace-8c6f",
                "parent_step_id": None,
                "call_type": "TOOL",
                "name": "get_exchange_rate",
                "parameters": {"currency_from": "USD"},
                "step_type": "tool_call",
                "cost": 0.0,
                "total_tokens": 0,
                "additional_attributes": {},
                "latency": 152,
                "start_time": "2025-08-20T10:00:00.000000+00:00",
                "end_time": "2025-08-20T10:00:00.152000+00:00",
                "error": None,
            },
            {
                "step_id": "step-2",
                "trace_id": "trace-8c6f",
                "call_type": "AGENT",
                "name": "currency",
                "requests": {"q": 1},
            },
        ],
    }
    trace = response_trace_from_dict(sample)
    tool, agent = trace.steps
    assert tool.step_action == ToolInvocation("get_exchange_rate", {"currency_from": "USD"})
    assert tool.latency == 152
    assert tool.end_time_unix_nano - tool.start_time_unix_nano == 152_000_000  # type: ignore[operator]
    assert tool.additional_attributes == {"step_type": "tool_call"}
    assert agent.step_action == AgentInvocation(agent_name="currency", requests={"q": 1})


def test_reads_proto3_json_spelling() -> None:
    doc = {
        "stepId": "s1",
        "traceId": "t1",
        "parentStepId": "",
        "callType": 2,
        "stepAction": {"toolInvocation": {"toolName": "calc", "parameters": {"x": 1}}},
        "totalTokens": "7",
        "startTime": "2025-01-01T00:00:00Z",
        "endTime": "2025-01-01T00:00:00.5Z",
    }
    step = step_from_dict(doc)
    assert step.parent_step_id is None
    assert step.call_type is CallType.TOOL
    assert step.total_tokens == 7
    assert step.latency == 500.0
    assert step.step_action == ToolInvocation("calc", {"x": 1})


def test_non_w3c_step_ids_map_to_stable_span_ids_and_back() -> None:
    step = Step(step_id="step-abc", trace_id="trace-xyz", call_type=CallType.HOST, parent_step_id="step-root")
    span = span_from_step(step)
    assert len(span.span_id) == 16 and len(span.trace_id) == 32 and len(span.parent_span_id or "") == 16
    assert span_from_step(step).span_id == span.span_id  # stable
    back = step_from_span(span)
    assert (back.step_id, back.parent_step_id, back.trace_id) == ("step-abc", "step-root", span.trace_id)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "step: expected an object, got list"),
        ({"trace_id": "t", "call_type": "AGENT"}, "step.step_id: required"),
        ({"step_id": "s", "call_type": "AGENT"}, "step.trace_id: required"),
        ({"step_id": "s", "trace_id": "t", "call_type": "ROBOT"}, "step.call_type: expected one of AGENT, TOOL, HOST"),
        ({"step_id": "s", "trace_id": "t", "call_type": "TOOL", "latency": "fast"}, "step.latency: expected a number"),
        ({"step_id": "s", "trace_id": "t", "call_type": "TOOL", "total_tokens": 1.5}, "step.total_tokens: expected an"),
        (
            {"step_id": "s", "trace_id": "t", "call_type": "TOOL", "latency": float("-inf")},
            "step.latency: expected a finite number, got -inf",
        ),
        ({"step_id": "s", "trace_id": "t", "call_type": "TOOL", "latency": "NaN"}, "step.latency: expected a finite"),
        ({"step_id": "s", "trace_id": "t", "call_type": "TOOL", "cost": float("nan")}, "step.cost: expected a finite"),
        ({"step_id": "s", "trace_id": "t", "call_type": "TOOL", "latency": -1}, "step.latency: expected a number >= 0"),
        (
            {"step_id": "s", "trace_id": "t", "call_type": "TOOL", "latency": 1e303},
            "step.latency: expected a number <=",
        ),
        (
            {"step_id": "s", "trace_id": "t", "call_type": "TOOL", "total_tokens": -5},
            "step.total_tokens: expected an integer >= 0, got -5",
        ),
        (
            {"step_id": "s", "trace_id": "t", "call_type": "TOOL", "total_tokens": 10**30},
            "step.total_tokens: out of the 64-bit integer range",
        ),
        (
            {"step_id": "s", "trace_id": "t", "call_type": "TOOL", "start_time": "yesterday"},
            "step.start_time: not an RFC",
        ),
        ({"step_id": 5, "trace_id": "t", "call_type": "TOOL"}, "step.step_id: expected a string, got int"),
        (
            {"step_id": "s", "trace_id": "t", "call_type": "AGENT", "step_action": {"tool_invocation": {}}},
            "step.step_action.tool_invocation.tool_name: required",
        ),
    ],
)
def test_bad_step_documents_name_the_field(document: object, message: str) -> None:
    with pytest.raises(StepFormatError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        step_from_dict(document)


def test_response_traces_nested_too_deep_are_refused_not_a_stack_overflow() -> None:
    def nested(levels: int) -> dict[str, object]:
        step: dict[str, object] = {"step_id": "leaf", "trace_id": "t", "call_type": "TOOL"}
        for _ in range(levels):
            trace = {"trace_id": "t", "steps": [step]}
            step = {"step_id": "s", "trace_id": "t", "call_type": "AGENT", "step_action": {"agent_invocation": {}}}
            step["step_action"]["agent_invocation"]["response_trace"] = trace  # type: ignore[index]
        return step

    assert step_from_dict(nested(MAX_TRACE_NESTING)).call_type is CallType.AGENT
    with pytest.raises(StepFormatError, match=f"traces nested more than {MAX_TRACE_NESTING} deep"):
        step_from_dict(nested(MAX_TRACE_NESTING + 1))
    with pytest.raises(StepFormatError, match="nested more than"):
        step_from_dict(nested(900))  # deeper than the interpreter's recursion limit would allow


def test_large_integers_keep_every_digit() -> None:
    base = {"step_id": "s", "trace_id": "t", "call_type": "TOOL"}
    for written in (2**62 + 1, str(2**62 + 1)):  # proto3 JSON writes 64-bit integers as strings
        assert step_from_dict({**base, "total_tokens": written}).total_tokens == 2**62 + 1


def test_bad_response_trace_names_the_step() -> None:
    with pytest.raises(StepFormatError, match=r"response_trace\.steps\[1\]\.call_type"):
        response_trace_from_dict(
            {"trace_id": "t", "steps": [{"step_id": "a", "trace_id": "t", "call_type": "AGENT"}, {"step_id": "b"}]}
        )
    with pytest.raises(StepFormatError, match=r"response_trace\.steps: expected a list"):
        response_trace_from_dict({"trace_id": "t", "steps": {}})


def test_timestamps_keep_nanoseconds() -> None:
    assert format_timestamp(T0) == "2023-11-14T22:13:20.123456789Z"
    assert parse_timestamp("2023-11-14T22:13:20.123456789Z") == T0
    assert parse_timestamp("2023-11-14T23:13:20.123456789+01:00") == T0
    assert parse_timestamp("2023-11-14T22:13:20Z") == T0 - 123_456_789
    with pytest.raises(StepFormatError):
        parse_timestamp("2023-13-45T99:00:00Z")


def full_step() -> Step:
    """A Step with every field set, an agent invocation and a nested trace with a tool step."""
    inner = Step(
        step_id="1111111111111111",
        trace_id=TRACE,
        call_type=CallType.TOOL,
        parent_step_id="00f067aa0ba902b7",
        step_action=ToolInvocation("search", {"q": "x", "n": [1, 2]}),
        start_time_unix_nano=T0 + 1,
        end_time_unix_nano=T0 + 2_000_001,
        additional_attributes={"raw": b"\x00\xff", "nested": {"a": ("x", 1)}},
    )
    return Step(
        step_id="00f067aa0ba902b7",
        trace_id=TRACE,
        call_type=CallType.AGENT,
        parent_step_id="a3ce929d0e0e4736",
        name="invoke_agent B",
        start_time_unix_nano=T0,
        end_time_unix_nano=T0 + 12_500_000,
        error="boom",
        cost=0.25,
        total_tokens=42,
        step_action=AgentInvocation("http://b/", "B", {"text": "hi"}, ResponseTrace(TRACE, (inner,))),
        additional_attributes={"k": "v", "n": 3, "f": 0.5, "b": True, "l": ("a", "b")},
    )


def test_what_is_written_is_what_the_document_model_serialises() -> None:
    """step_to_dict is written by hand for speed; it must say exactly what StepDocument says."""
    written = step_to_dict(full_step())
    assert StepDocument.model_validate(written).model_dump(mode="json", exclude_none=True) == written
    assert written["additional_attributes"] == {"k": "v", "n": 3, "f": 0.5, "b": True, "l": ["a", "b"]}
    inner = written["step_action"]["agent_invocation"]["response_trace"]["steps"][0]
    assert inner["additional_attributes"] == {"raw": "00ff", "nested": {"a": ["x", 1]}}  # bytes as hex
    trace = response_trace_to_dict(ResponseTrace(TRACE, (full_step(),)))
    assert ResponseTraceDocument.model_validate(trace).model_dump(mode="json", exclude_none=True) == trace


def test_every_bad_field_is_named_in_one_message() -> None:
    with pytest.raises(StepFormatError) as caught:
        step_from_dict({"step_id": 5, "call_type": "ROBOT", "latency": "slow", "cost": True})
    assert caught.value.message.split("; ") == [
        "step.step_id: expected a string, got int",
        "step.trace_id: required",
        "step.call_type: expected one of AGENT, TOOL, HOST, got 'ROBOT'",
        "step.cost: expected a number, got True",
        "step.latency: expected a number, got 'slow'",
    ]


def test_camel_case_documents_are_faulted_by_their_snake_case_path() -> None:
    document = {"stepId": "s", "traceId": "t", "callType": "TOOL", "totalTokens": -1, "startTime": 5}
    with pytest.raises(StepFormatError) as caught:
        step_from_dict(document, path="steps[3]")
    assert caught.value.message == (
        "steps[3].total_tokens: expected an integer >= 0, got -1; "
        "steps[3].start_time: expected an RFC 3339 string, got 5"
    )


def test_a_response_trace_takes_its_first_steps_trace_id_or_needs_one() -> None:
    step = {"step_id": "a", "traceId": "t-9", "call_type": "HOST"}
    assert response_trace_from_dict({"steps": [step]}).trace_id == "t-9"
    assert response_trace_from_dict({"traceId": "t-1", "steps": [step]}).trace_id == "t-1"
    assert response_trace_from_dict({"trace_id": "t-1"}) == ResponseTrace("t-1")
    with pytest.raises(StepFormatError, match=r"^response_trace\.trace_id: required$"):
        response_trace_from_dict({"steps": []})
    with pytest.raises(StepFormatError, match=r"^response_trace: expected an object, got str$"):
        response_trace_from_dict("t-1")


def test_nesting_is_counted_in_the_proto3_spelling_too() -> None:
    step: dict[str, object] = {"stepId": "leaf", "traceId": "t", "callType": 2}
    for _ in range(MAX_TRACE_NESTING + 1):
        trace = {"traceId": "t", "steps": [step]}
        step = {
            "stepId": "s",
            "traceId": "t",
            "callType": 1,
            "stepAction": {"agentInvocation": {"responseTrace": trace}},
        }
    with pytest.raises(StepFormatError, match=f"traces nested more than {MAX_TRACE_NESTING} deep"):
        step_from_dict(step)

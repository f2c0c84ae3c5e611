"""Every span attribute name, attribute value and extension URI coordbench emits or reads.

Names follow the OpenTelemetry GenAI semantic conventions where a name exists
(``gen_ai.*``, ``server.*``, ``error.type``) and use an ``a2a.*`` namespace otherwise, close
to the draft A2A conventions discussed in open-telemetry/semantic-conventions-genai.
The strings are defined here rather than imported from ``opentelemetry.semconv`` because
the GenAI constants there are deprecated (moved to their own repository) and carry no
Python package of their own.
"""

from __future__ import annotations

from typing import Final

# --- OpenTelemetry GenAI and general conventions -------------------------------------------
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_AGENT_DESCRIPTION: Final = "gen_ai.agent.description"
GEN_AI_AGENT_VERSION: Final = "gen_ai.agent.version"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_WORKFLOW_NAME: Final = "gen_ai.workflow.name"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
"""JSON of the messages sent (``[{"role", "parts": [{"type": "text", "content"}]}]``); opt-in content capture."""
GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
"""JSON of the messages and artifacts received, in the same shape; opt-in content capture."""
CAPTURE_CONTENT_ENV: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI instrumentations' switch for recording message content (``true``/``false``, default off)."""
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"
ERROR_TYPE: Final = "error.type"
EXCEPTION_MESSAGE: Final = "exception.message"
EXCEPTION_STACKTRACE: Final = "exception.stacktrace"
SERVICE_NAME: Final = "service.name"
RPC_SYSTEM_NAME: Final = "rpc.system.name"
RPC_RESPONSE_STATUS_CODE: Final = "rpc.response.status_code"
JSONRPC_PROTOCOL_VERSION: Final = "jsonrpc.protocol.version"

# gen_ai.operation.name values
OPERATION_INVOKE_AGENT: Final = "invoke_agent"
OPERATION_EXECUTE_TOOL: Final = "execute_tool"
OPERATION_INVOKE_WORKFLOW: Final = "invoke_workflow"
OPERATION_CHAT: Final = "chat"
#: Operation names that denote a model or tool call inside an agent (call type TOOL).
TOOL_OPERATIONS: Final = frozenset(
    {OPERATION_EXECUTE_TOOL, OPERATION_CHAT, "generate_content", "text_completion", "embeddings", "retrieval"}
)

# --- a2a.* namespace -------------------------------------------------------------------
A2A_METHOD: Final = "a2a.method.name"
"""The A2A method as sent on the wire: ``SendMessage``, ``message/send``, ``GetTask``..."""
A2A_PROTOCOL_VERSION: Final = "a2a.protocol.version"
"""A2A protocol version of the call: ``1.0``, or ``0.3`` through the compatibility layer."""
A2A_PROTOCOL_BINDING: Final = "a2a.protocol.binding"
"""Transport binding: ``JSONRPC``, ``HTTP+JSON`` or ``GRPC``."""
A2A_TASK_ID: Final = "a2a.task.id"
A2A_TASK_STATE: Final = "a2a.task.state"
"""Final task state, lower case as in A2A 0.3 (``completed``, ``failed``, ``input-required``...)."""
A2A_MESSAGE_ID: Final = "a2a.message.id"
A2A_STEP_ID: Final = "a2a.step.id"
"""Step id, set only when it differs from the span id (Steps reported through the extension)."""
A2A_STEP_PARENT_ID: Final = "a2a.step.parent_id"
A2A_CALL_TYPE: Final = "a2a.step.call_type"
"""``AGENT``, ``TOOL`` or ``HOST`` (see :class:`coordbench.steps.CallType`)."""
A2A_STEP_COST: Final = "a2a.step.cost"
"""Cost of the step in the caller's currency unit, when an agent reports one."""
A2A_AGENT_URL: Final = "a2a.agent.url"
"""URL of the called agent's A2A endpoint (client spans)."""
A2A_CALLER_NAME: Final = "a2a.caller.name"
"""Name of the calling agent on a client span, when the call is made while serving a request."""
A2A_STREAMING: Final = "a2a.streaming"
A2A_REQUEST_SIZE: Final = "a2a.request.size"
"""Size in bytes of the protobuf-encoded request (transport-independent)."""
A2A_RESPONSE_SIZE: Final = "a2a.response.size"
"""Size in bytes of the protobuf-encoded response events, summed over a stream."""
A2A_RESPONSE_EVENTS: Final = "a2a.response.events"
"""Number of response events (1 for a non-streaming call)."""
A2A_USAGE_ESTIMATED: Final = "a2a.usage.estimated"
"""True when ``gen_ai.usage.*`` were estimated from text length rather than reported."""
A2A_REQUESTED_EXTENSIONS: Final = "a2a.protocol.requested_extensions"
A2A_REQUEST_FINGERPRINT: Final = "a2a.request.fingerprint"
"""The sent message's text fingerprint (:mod:`coordbench.sketch`: the smallest CRC-32 hashes of its word trigrams)."""
A2A_RESPONSE_FINGERPRINT: Final = "a2a.response.fingerprint"
"""The answer's text fingerprint (its artifacts and messages), as :data:`A2A_REQUEST_FINGERPRINT`."""
A2A_STEP_INPUT_FINGERPRINT: Final = "a2a.step.input.fingerprint"
"""A model or tool step's input text fingerprint (as :data:`A2A_REQUEST_FINGERPRINT`), when its text is not captured."""
A2A_STEP_OUTPUT_FINGERPRINT: Final = "a2a.step.output.fingerprint"
"""A model or tool step's output text fingerprint, as :data:`A2A_STEP_INPUT_FINGERPRINT`."""
A2A_REQUEST_TEXT_CHARS: Final = "a2a.request.text_chars"
"""Characters of text the sent message holds (its parts, not the request's envelope)."""
A2A_RESPONSE_TEXT_CHARS: Final = "a2a.response.text_chars"
"""Characters of text the answer holds (artifacts and messages, not the task envelope and history)."""
FINGERPRINTS_ENV: Final = "COORDBENCH_FINGERPRINTS"
"""``false`` turns message fingerprints off (they are on by default)."""
A2A_MESSAGE_DIGEST: Final = "a2a.message.digest"
"""BLAKE2b-64 (hex) of a message's text parts: equal digests mean the same request was sent again."""
A2A_RESPONSE_TRACE: Final = "a2a.response_trace"
"""JSON of the traceability ResponseTrace a callee returned (client spans; capped at 64 KiB)."""
A2A_TOOL_PARAMETERS: Final = "a2a.tool.parameters"
"""JSON of a TOOL step's parameters, when the agent author records them."""

# error.type values that are not exception class names
ERROR_TASK_FAILED: Final = "task_failed"

# --- A2A extensions ----------------------------------------------------------------------
TRACEABILITY_EXTENSION_URI: Final = "https://github.com/a2aproject/a2a-samples/extensions/traceability/v1"
TRACEABILITY_METADATA_KEY: Final = "github.com/a2aproject/a2a-samples/extensions/traceability/v1/traceability"
TIMESTAMP_EXTENSION_URI: Final = "https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1"
"""The timestamp extension URI used by the Python, Go and JS samples (what we emit)."""
TIMESTAMP_EXTENSION_URI_SPEC: Final = "https://github.com/a2aproject/a2a-samples/samples/extensions/timestamp/v1"
"""The spelling in the extension's spec text (accepted as well)."""
TIMESTAMP_EXTENSION_URIS: Final = frozenset({TIMESTAMP_EXTENSION_URI, TIMESTAMP_EXTENSION_URI_SPEC})
TIMESTAMP_METADATA_KEY: Final = "github.com/a2aproject/a2a-samples/extensions/timestamp/v1/timestamp"
TIMESTAMP_METADATA_KEYS: Final = (
    TIMESTAMP_METADATA_KEY,
    "github.com/a2aproject/a2a-samples/samples/extensions/timestamp/v1/timestamp",
)
EXTENSIONS_HEADER: Final = "A2A-Extensions"
LEGACY_EXTENSIONS_HEADER: Final = "X-A2A-Extensions"

# --- W3C trace context carried in message metadata ----------------------------------------
TRACEPARENT: Final = "traceparent"
TRACESTATE: Final = "tracestate"

# --- coordbench's own HOST spans (the assessor's assessment and scenario steps) ----------------
COORDBENCH_ASSESSMENT_ID: Final = "coordbench.assessment.id"
"""On an assessment's root HOST span: the assessment id (the A2A context id of the request)."""
COORDBENCH_ASSESSMENT_CONFIG: Final = "coordbench.assessment.config"
"""On an assessment's root HOST span: the evaluation config the assessor used (JSON; its scenarios apart), so
``coordbench evaluate`` re-evaluates a stored trace as the assessor did."""
COORDBENCH_SCENARIO_ID: Final = "coordbench.scenario.id"
"""On a scenario's HOST span: the scenario id."""
COORDBENCH_SCENARIO_ENTRY: Final = "coordbench.scenario.entry"
"""On a scenario's HOST span: the role the task went to."""
COORDBENCH_SCENARIO_PARTICIPANTS: Final = "coordbench.scenario.participants"
"""On a scenario's HOST span: the agent names of the team's members (the evaluation's participants)."""
COORDBENCH_SCENARIO_TASK: Final = "coordbench.scenario.task"
"""On a scenario's HOST span: the task the team was given."""
COORDBENCH_SCENARIO_REFERENCES: Final = "coordbench.scenario.references"
"""On a scenario's HOST span: the reference texts the answer is compared with (a list of strings)."""
COORDBENCH_SCENARIO_EXPECTED: Final = "coordbench.scenario.expected"
"""On a scenario's HOST span: the correct answer, when the scenario gives one (failure attribution reads it)."""
COORDBENCH_SCENARIO_UNREACHABLE: Final = "coordbench.scenario.unreachable"
"""On a scenario's HOST span: members the assessor could not reach, as ``name: why`` (a list of strings)."""
COORDBENCH_OUTCOME_STATE: Final = "coordbench.outcome.state"
"""On a scenario's HOST span: how the team's task ended (``completed``, ``failed``, ``message``, ``error``...)."""
COORDBENCH_OUTCOME_OUTPUT: Final = "coordbench.outcome.output"
"""On a scenario's HOST span: the team's answer (capped), so a stored trace can be re-evaluated alone."""
COORDBENCH_OUTCOME_ERROR: Final = "coordbench.outcome.error"
"""On a scenario's HOST span: why the team's call failed, when it did."""
COORDBENCH_OUTCOME_DURATION_MS: Final = "coordbench.outcome.duration_ms"
"""On a scenario's HOST span: how long the assessor waited for the answer."""

# --- instrumentation identity ---------------------------------------------------------------
INSTRUMENTATION_NAME: Final = "coordbench.instrument"

# tau2-bench runs through a2a_agent (coordbench.tau2): on the driver's root span
TAU2_DOMAIN: Final = "tau2.domain"
"""The tau2 domain of the run (``mock``, ``airline``...)."""
TAU2_SAVE_TO: Final = "tau2.save_to"
"""The run's results file name (tau2's ``--save-to``)."""
TAU2_AGENT_NAME: Final = "tau2.agent.name"
"""The name on the card of the A2A agent under test."""

# --- attribute types, for stores that keep every value as a string -------------------------------
ATTRIBUTE_TYPES: Final[dict[str, str]] = {
    GEN_AI_USAGE_INPUT_TOKENS: "int",
    GEN_AI_USAGE_OUTPUT_TOKENS: "int",
    SERVER_PORT: "int",
    A2A_REQUEST_SIZE: "int",
    A2A_RESPONSE_SIZE: "int",
    A2A_RESPONSE_EVENTS: "int",
    A2A_REQUEST_TEXT_CHARS: "int",
    A2A_RESPONSE_TEXT_CHARS: "int",
    A2A_STEP_COST: "double",
    COORDBENCH_OUTCOME_DURATION_MS: "double",
    A2A_STREAMING: "boolean",
    A2A_USAGE_ESTIMATED: "boolean",
    A2A_REQUESTED_EXTENSIONS: "string[]",
    COORDBENCH_SCENARIO_PARTICIPANTS: "string[]",
    COORDBENCH_SCENARIO_REFERENCES: "string[]",
    COORDBENCH_SCENARIO_UNREACHABLE: "string[]",
    A2A_REQUEST_FINGERPRINT: "int[]",
    A2A_RESPONSE_FINGERPRINT: "int[]",
    A2A_STEP_INPUT_FINGERPRINT: "int[]",
    A2A_STEP_OUTPUT_FINGERPRINT: "int[]",
}
"""The type (OTel's names) of every attribute coordbench writes as something other than a string.

The Collector's ClickHouse exporter stores every attribute value as a string
(:mod:`coordbench.clickhouse.rows`); reading a span back, these attributes get their type
again. Every other attribute stays a string, as evaluation reads it. A test instruments real
agents and fails on any non-string attribute missing here.
"""

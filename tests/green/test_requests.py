"""Assessment requests: what each bad request gets, in process and over A2A."""

from __future__ import annotations

import json

import pytest
from a2a.helpers import new_data_part, new_text_message
from a2a.types import Message, Part, Role

from coordbench import semconv
from coordbench.a2a import Messenger
from coordbench.green import RequestError, parse_request
from green.conftest import StartGreen


def text(body: str) -> Message:
    return new_text_message(body, role=Role.ROLE_USER)


GOOD = {"participants": {"agent": "http://127.0.0.1:9019/"}, "config": {"timeout": 30}}


def test_text_and_data_part_requests() -> None:
    from_text = parse_request(text(json.dumps(GOOD)))
    from_data = parse_request(Message(role=Role.ROLE_USER, message_id="m", parts=[new_data_part(GOOD)]))
    assert from_text == from_data
    assert from_text.entry_role == "agent"
    assert from_text.url_of("agent") == "http://127.0.0.1:9019/"
    assert from_text.config.timeout == 30
    assert [s.id for s in from_text.shard()] == ["paper-review", "incident-triage"]  # the bundled scenarios


BAD = [
    ("Hello", "the message is not an assessment request: expected a JSON object"),
    ("", "the message has no text or data part"),
    ("[1, 2]", "the request must be a JSON object, got list"),
    ("{}", "invalid assessment request: participants: Field required"),
    ('{"participants": {}}', "participants: Dictionary should have at least 1 item"),
    ('{"participants": {"agent": "not a url"}}', "participants.agent: Input should be a valid URL"),
    ('{"participants": {"agent": "http://a/"}, "extra": 1}', "extra: Extra inputs are not permitted"),
    ('{"participants": {"agent": "http://a/"}, "config": {"timeout": -1}}',
     "config.timeout: Input should be greater than 0"),
    ('{"participants": {"agent": "http://a/"}, "config": {"entry": "boss"}}',
     "config.entry names role 'boss', which is not a participant (agent)"),
    ('{"participants": {"agent": "http://a/"}, "config": {"shard_index": 2, "num_shards": 2}}',
     "shard_index 2 must be below num_shards 2"),
    ('{"participants": {"agent": "http://a/"}, "config": {"scenarios": []}}',
     "no scenarios to run: 'scenarios' is empty and 'ground_truth' is false"),
    ('{"participants": {"agent": "http://a/"}, "config": {"scenarios": [{"id": "x"}]}}',
     "scenario 'x' needs a 'task' (live mode) or an 'interaction_pattern'"),
    ('{"participants": {"agent": "http://a/"}, "config": {"scenarios": '
     '[{"id": "x", "task": "t"}, {"id": "x", "task": "u"}]}}',
     "scenario ids must be unique; repeated: x"),
    # weights used to pass here and fail the assessment once it had started (or make the score NaN)
    ('{"participants": {"agent": "http://a/"}, "config": {"weights": {"graph": -1}}}',
     "config.weights: weight of 'graph' must be a finite number >= 0, got -1.0"),
    ('{"participants": {"agent": "http://a/"}, "config": {"weights": {"graph": Infinity}}}',
     "config.weights: weight of 'graph' must be a finite number >= 0, got inf"),
    ('{"participants": {"agent": "http://a/"}, "config": {"weights": {"text": NaN}}}',
     "config.weights: weight of 'text' must be a finite number >= 0, got nan"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "reason"), BAD)
def test_bad_requests_say_what_is_wrong(body: str, reason: str) -> None:
    with pytest.raises(RequestError) as caught:
        parse_request(text(body) if body else Message(role=Role.ROLE_USER, message_id="m", parts=[Part(text="")]))
    assert reason in caught.value.message


def test_unknown_config_keys_are_reported_not_used() -> None:
    request = parse_request(text(json.dumps({**GOOD, "config": {"num_instances": 3, "mystery": True}})))
    assert request.config.ignored_keys == ["mystery"]
    assert request.config.num_instances == 3


@pytest.mark.slow
async def test_bad_requests_are_rejected_over_a2a(start_green: StartGreen) -> None:
    green = start_green()
    async with Messenger(timeout=30) as messenger:
        hello = await messenger.send(green.url, "Hello", new_conversation=True)
        assert hello.state == "rejected"
        assert hello.text.startswith("the message is not an assessment request")
        unknown = json.dumps({**GOOD, "config": {"evaluators": ["graph", "vibes"]}})
        reply = await messenger.send(green.url, unknown, new_conversation=True)
        assert reply.state == "rejected"
        assert (
            reply.text
            == "unknown evaluator(s): vibes; available: coordination, graph, latency, llm_judge, protocol, text"
        )
        card = green.app.state.card
        assert card.capabilities.streaming
        declared = {e.uri for e in card.capabilities.extensions}
        assert {semconv.TRACEABILITY_EXTENSION_URI, semconv.TIMESTAMP_EXTENSION_URI} <= declared
        assert {(i.protocol_binding, i.protocol_version) for i in card.supported_interfaces} >= {
            ("JSONRPC", "0.3"),
            ("JSONRPC", "1.0"),
        }
        example = json.loads(card.skills[0].examples[0])  # the card shows a full sample request
        assert parse_request(text(json.dumps(example))).participants

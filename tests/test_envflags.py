"""Boolean environment variables: one reading for every flag coordbench has."""

from __future__ import annotations

import logging

import pytest

from coordbench.envflags import content_capture, env_flag


@pytest.mark.parametrize("raw", ["1", "true", "TRUE", " yes ", "on"])
def test_words_that_turn_a_flag_on(raw: str) -> None:
    assert env_flag("F", False, {"F": raw}) is True


@pytest.mark.parametrize("raw", ["0", "false", "No", "off "])
def test_words_that_turn_a_flag_off(raw: str) -> None:
    assert env_flag("F", True, {"F": raw}) is False


def test_unset_or_empty_keeps_the_default_and_anything_else_is_said(caplog: pytest.LogCaptureFixture) -> None:
    assert env_flag("F", True, {}) is True and env_flag("F", False, {"F": "  "}) is False
    with caplog.at_level(logging.WARNING, logger="coordbench.envflags"):
        assert env_flag("COORDBENCH_FINGERPRINTS", True, {"COORDBENCH_FINGERPRINTS": "nope"}) is True
    assert "COORDBENCH_FINGERPRINTS='nope' is not a boolean" in caplog.text and "using True" in caplog.text


@pytest.mark.parametrize(
    ("raw", "on"),
    [("SPAN_ONLY", True), ("span_and_event", True), ("EVENT_ONLY", False), ("NO_CONTENT", False), ("true", True),
     ("off", False), ("", False)],
)  # fmt: skip
def test_content_capture_reads_the_genai_instrumentations_modes_as_well_as_booleans(raw: str, on: bool) -> None:
    # ADK documents OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY: coordbench's capture must follow it
    assert content_capture("C", {"C": raw}) is on

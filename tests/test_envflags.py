"""Boolean environment variables: one reading for every flag coordbench has."""

from __future__ import annotations

import logging

import pytest

from coordbench.envflags import env_flag


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

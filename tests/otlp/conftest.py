"""Decoding tests run twice: through the native scanner and through the protobuf path."""

from __future__ import annotations

import pytest

from coordbench.otlp import native


@pytest.fixture(params=["native", "protobuf"])
def decode_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which OTLP/protobuf decoding path ``decode_protobuf`` takes for this test."""
    if request.param == "native" and not native.AVAILABLE:
        pytest.skip("coordbench.otlp._scan is not built (test_native.py::test_the_extension_is_built says why)")
    if request.param == "protobuf":
        monkeypatch.setattr(native, "AVAILABLE", False)
    return str(request.param)

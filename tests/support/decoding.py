"""Watching the real OTLP decoder: which thread ran it."""

from __future__ import annotations

import threading
from types import ModuleType

import pytest

from coordbench.otlp.decode import decode_protobuf
from coordbench.otlp.model import DecodeResult


def note_decode_threads(monkeypatch: pytest.MonkeyPatch, receiver: ModuleType) -> list[str]:
    """Make ``receiver`` (an OTLP receiver module) decode through a wrapper of the real decoder.

    Returns:
        A list that gets the name of the thread each decode ran on.
    """
    threads: list[str] = []

    def decode(body: bytes) -> DecodeResult:
        threads.append(threading.current_thread().name)
        return decode_protobuf(body)

    monkeypatch.setattr(receiver, "decode_protobuf", decode)
    return threads

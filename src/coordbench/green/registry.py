"""Peer discovery: agents register their name and A2A URL with the assessor and read the others back."""

from __future__ import annotations

import time

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field

__all__ = ["Peer", "PeerRegistry", "Registration"]


class Registration(BaseModel):
    """``POST /register`` body."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    url: AnyHttpUrl
    role: str | None = Field(default=None, min_length=1, max_length=200)
    description: str = Field(default="", max_length=2_000)


class Peer(Registration):
    """A registered agent."""

    registered_unix: float


class PeerRegistry:
    """Registered agents by name (a re-registration replaces the entry); bounded in size.

    Args:
        max_peers: Most agents kept; registering more is refused.
    """

    def __init__(self, max_peers: int = 1_000) -> None:
        self.max_peers = max_peers
        self._peers: dict[str, Peer] = {}

    def register(self, registration: Registration) -> tuple[Peer, bool]:
        """Add or replace an agent; returns it and whether it is new.

        Raises:
            OverflowError: If the registry is full and ``registration`` is a new name.
        """
        new = registration.name not in self._peers
        if new and len(self._peers) >= self.max_peers:
            raise OverflowError(f"the registry holds {self.max_peers} agents already")
        peer = Peer(**registration.model_dump(), registered_unix=time.time())
        self._peers[registration.name] = peer
        return peer, new

    def peers(self, role: str | None = None) -> list[Peer]:
        """Registered agents, by name; only those with ``role`` when given."""
        return [p for _, p in sorted(self._peers.items()) if role is None or p.role == role]

    def clear(self) -> None:
        """Forget everyone."""
        self._peers.clear()

"""Who a client is talking to: callee name, URL, protocol version and binding."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from coordbench import semconv
from coordbench.instrument import _sdk
from coordbench.redaction import redact_url

__all__ = ["Peer", "peer_of"]

_BINDINGS = {
    "JsonRpcTransport": "JSONRPC",
    "CompatJsonRpcTransport": "JSONRPC",
    "RestTransport": "HTTP+JSON",
    "CompatRestTransport": "HTTP+JSON",
    "GrpcTransport": "GRPC",
    "CompatGrpcTransport": "GRPC",
}


@dataclass(frozen=True, slots=True)
class Peer:
    """The agent on the other end of a client."""

    name: str
    url: str | None
    address: str | None
    port: int | None
    protocol_version: str
    binding: str | None
    attributes: dict[str, Any]
    """The span attributes that describe the peer (shared, do not mutate)."""


def _url_of(transport: Any, card: Any) -> str | None:
    url = getattr(transport, "url", None)
    if isinstance(url, str) and url:
        return url
    for interface in getattr(card, "supported_interfaces", ()):
        if interface.url:
            return str(interface.url)
    return None


_CACHE_ATTR = "_coordbench_peer"


def peer_of(client: Any) -> Peer:
    """Describe the callee of an a2a-sdk ``BaseClient`` from its card and transport.

    The answer is cached on the client until its card or transport object changes (the
    card does after ``get_extended_agent_card``).

    Args:
        client: The client (its card and transport are read through :mod:`._sdk`).

    Returns:
        The peer; unknown parts are ``None``.
    """
    card = _sdk.client_card(client)
    transport = _sdk.client_transport(client)
    cached = getattr(client, _CACHE_ATTR, None)
    if cached is not None and cached[0] is card and cached[1] is transport:
        return cached[2]
    peer = _describe(card, transport)
    with contextlib.suppress(AttributeError):  # a client class with __slots__: describe it every time
        setattr(client, _CACHE_ATTR, (card, transport, peer))
    return peer


def _describe(card: Any, transport: Any) -> Peer:
    transport = _sdk.unwrap_transport(transport)
    cls_name = type(transport).__name__
    url = _url_of(transport, card)
    address: str | None = None
    port: int | None = None
    if url:
        try:
            # a gRPC target is host:port or dns:///host:port rather than a URL
            parts = urlsplit(url if "://" in url else "//" + url)
            if parts.hostname is None and parts.path:
                parts = urlsplit("//" + parts.path.lstrip("/"))
            address = parts.hostname
            port = parts.port or (443 if parts.scheme == "https" else 80 if parts.scheme == "http" else None)
        except ValueError:
            address = port = None
    name = (getattr(card, "name", "") or "") or (address or "unknown-agent")
    version = "0.3" if cls_name.startswith("Compat") else "1.0"
    binding = _BINDINGS.get(cls_name)
    attributes: dict[str, Any] = {
        semconv.A2A_PROTOCOL_VERSION: version,
        semconv.A2A_CALL_TYPE: "AGENT",
        semconv.GEN_AI_AGENT_NAME: name,
    }
    if binding:
        attributes[semconv.A2A_PROTOCOL_BINDING] = binding
        if binding == "JSONRPC":
            attributes[semconv.RPC_SYSTEM_NAME] = "jsonrpc"
        elif binding == "GRPC":
            attributes[semconv.RPC_SYSTEM_NAME] = "grpc"
    if url:
        attributes[semconv.A2A_AGENT_URL] = redact_url(url)  # a URL may carry a token
    if address:
        attributes[semconv.SERVER_ADDRESS] = address
    if port is not None:
        attributes[semconv.SERVER_PORT] = port
    return Peer(name, url, address, port, version, binding, attributes)

"""Receivers behind one load balancer answer for each other: a trace one does not hold is asked of its peers.

The Collector's load-balancing exporter sends each trace to one receiver. With ``--peer URL`` (once
per other receiver) a receiver that does not hold a trace asks its peers, all at once, and answers
with the first that does; a forwarded request is marked so that it is never forwarded again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from fastapi import Request, Response

__all__ = ["FORWARDED", "from_peers"]

logger = logging.getLogger(__name__)

FORWARDED = "X-Coordbench-Forwarded"
"""Set on a request one receiver asks of another: the peer answers from what it holds, never asks further."""

_PASSED = ("authorization",)


async def from_peers(request: Request, peers: Sequence[str], wait: float = 0.0) -> Response | None:
    """The first 200 answer of a peer to this same request, or ``None`` (no peers, forwarded, or none holds it).

    Args:
        request: The request this receiver cannot answer from what it holds.
        peers: The other receivers behind the same load balancer (the settings' ``peers``).
        wait: Seconds the request may wait on the peer (its own ``wait``), on top of a 30-second allowance.
    """
    if not peers or request.headers.get(FORWARDED):
        return None
    import httpx

    headers = {FORWARDED: "1", **{k: v for k, v in request.headers.items() if k.lower() in _PASSED}}
    path = request.url.path
    async with httpx.AsyncClient(timeout=wait + 30.0) as client:

        async def ask(peer: str) -> httpx.Response | None:
            try:
                return await client.get(f"{peer.rstrip('/')}{path}", params=request.query_params, headers=headers)
            except httpx.HTTPError as exc:
                logger.warning("peer %s did not answer %s: %s", peer, path, exc)
                return None

        pending = {asyncio.ensure_future(ask(peer)): peer for peer in peers}
        try:
            while pending:
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    peer = pending.pop(task)
                    answer = task.result()
                    if answer is not None and answer.status_code == 200:
                        return Response(
                            answer.content,
                            media_type=answer.headers.get("content-type", "application/json"),
                            headers={"X-Coordbench-Peer": peer},
                        )
        finally:
            for task in pending:
                task.cancel()
    return None

"""Optional bearer-token check, shared by the HTTP and gRPC receivers and the read API."""

from __future__ import annotations

import hmac

__all__ = ["bearer_ok"]


def bearer_ok(authorization: str | None, token: str | None) -> bool:
    """Whether an ``Authorization`` header value satisfies the configured token.

    No token configured means no check. The comparison takes constant time.

    Args:
        authorization: The header value (``"Bearer <token>"``), if any.
        token: The configured token, if any.
    """
    if not token:
        return True
    if not authorization:
        return False
    scheme, _, given = authorization.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())

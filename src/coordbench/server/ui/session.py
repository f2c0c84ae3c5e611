"""The live UI's session: the token asked once, then a cookie that is not the token.

With a token configured, ``/ui/`` answers a login form (401) until the token is posted to
``/ui/login`` (in the body, never in a URL), which sets :data:`COOKIE`: an HMAC of a fixed
label keyed by the token, so the cookie proves the token was known without holding it, and a
new token ends every session. The cookie is ``HttpOnly`` (no script reads it),
``SameSite=Strict`` (no other site's page sends it) and scoped to ``/ui``.
"""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["COOKIE", "cookie_header", "session_ok", "session_value", "token_ok"]

COOKIE = "coordbench_ui"
"""The session cookie's name."""
_LABEL = b"coordbench live UI session v1"


def session_value(token: str) -> str:
    """The cookie's value for ``token`` (hex HMAC-SHA256; the token cannot be read back from it)."""
    return hmac.new(token.encode(), _LABEL, hashlib.sha256).hexdigest()


def session_ok(cookie: str | None, token: str | None) -> bool:
    """Whether the cookie ``cookie`` opens the UI under ``token`` (no token: always; constant time)."""
    if not token:
        return True
    if not cookie:
        return False
    return hmac.compare_digest(cookie.encode(), session_value(token).encode())


def token_ok(given: str, token: str) -> bool:
    """Whether ``given`` (posted to the sign-in form) is the token (constant time; empty never is)."""
    return bool(given) and hmac.compare_digest(given.encode(), token.encode())


def cookie_header(token: str, *, secure: bool) -> str:
    """The ``Set-Cookie`` value of a new session (``Secure`` too when served over HTTPS)."""
    flags = "; Secure" if secure else ""
    return f"{COOKIE}={session_value(token)}; Path=/ui; HttpOnly; SameSite=Strict{flags}"

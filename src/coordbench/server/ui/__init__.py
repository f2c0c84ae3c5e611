"""The live UI under ``/ui/``: runs, one run, a team across runs, compare and failures, updated as runs are evaluated.

Served by the receiver and the green alike (:func:`coordbench.server.app.mount_backend` adds
:data:`router`), from the same store and online evaluations as ``/v1/evaluations``. With a
token, the token is asked once and a session cookie stands for it (:mod:`coordbench.server.ui.session`).
"""

from coordbench.server.ui.routes import SECURITY_HEADERS, login_page, router, ui_allows
from coordbench.server.ui.session import COOKIE

__all__ = ["COOKIE", "SECURITY_HEADERS", "login_page", "router", "ui_allows"]

"""Debian's chromium driven by Playwright (``executable_path``: no browser is ever downloaded), offline."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest

OFFLINE = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--proxy-server=127.0.0.1:9",  # anything not on loopback goes to a closed port
]


def chromium() -> str:
    """The system chromium, or the test is skipped (``make test`` installs it)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    return found


@contextmanager
def browser() -> Iterator[Any]:
    """A headless chromium (a Playwright ``Browser``)."""
    from playwright.sync_api import sync_playwright

    path = chromium()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, args=OFFLINE, headless=True)
        try:
            yield launched
        finally:
            launched.close()


class Watched:
    """A page with every request it made, every dialog it opened and every console error recorded."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("dialog", self._dialog)
        page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def off_loopback(self) -> list[str]:
        """Requests to anywhere but 127.0.0.1 (``data:`` URLs are not requests)."""
        return [u for u in self.requests if urlsplit(u).hostname != "127.0.0.1" and not u.startswith("data:")]

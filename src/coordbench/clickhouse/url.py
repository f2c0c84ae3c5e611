"""Store URLs: where ClickHouse is, and which part of the traces this process evaluates.

Store URLs:

- ``clickhouse://[user@]host[:port][/database][?secure=true&table=otel_traces&create=true&shard=I/N]``: a
  server's HTTP interface (port 8123, 8443 with ``secure``). The password comes from
  ``CLICKHOUSE_PASSWORD``, or the URL (which is then redacted wherever it is shown).
- ``chdb:///path/to/dir[?database=otel&table=otel_traces&create=true&shard=I/N]``: the ClickHouse engine
  inside this process, its data in that directory. One process at a time may open a directory.

``table`` names the exporter's spans table (default ``otel_traces``, so the index table is
``otel_traces_trace_id_ts``); ``create`` makes the exporter's tables if missing (the exporter
makes them itself in production); coordbench's evaluations table is always made if missing;
``shard`` gives this process its part of the traces to evaluate online (:class:`Shard`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

from coordbench.clickhouse.schema import identifier
from coordbench.redaction import redact_url, register_secret

__all__ = ["SCHEMES", "Shard", "StoreUrl", "parse_store_url"]

SCHEMES = ("clickhouse", "chdb")


@dataclass(frozen=True)
class Shard:
    """The part of the traces one of several evaluators takes: ``cityHash64(TraceId) % count == index``."""

    index: int = 0
    count: int = 1

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/3"`` → the third of three shards.

        Raises:
            ValueError: If it is not ``I/N`` with ``0 <= I < N <= 1024``.
        """
        index, slash, count = text.partition("/")
        if not slash or not index.isdigit() or not count.isdigit() or not 0 <= int(index) < int(count) <= 1024:
            raise ValueError(f"shard is I/N with 0 <= I < N <= 1024 (shard=2/3: the third of three), got {text[:40]!r}")
        return cls(int(index), int(count))

    def __str__(self) -> str:
        """``I/N``."""
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class StoreUrl:
    """A parsed store URL (see the module's docs).

    Attributes:
        scheme: ``clickhouse`` or ``chdb``.
        host: The server (``clickhouse``).
        port: Its HTTP port.
        secure: HTTPS.
        user: User name (``default`` when absent).
        password: From ``CLICKHOUSE_PASSWORD``, else the URL.
        database: Database of the tables.
        table: The exporter's spans table.
        path: The embedded engine's directory (``chdb``).
        create: Create the exporter's tables when missing.
        shown: The URL with any password redacted, for messages and logs.
        shard: The part of the traces this process evaluates online.
    """

    scheme: str
    host: str
    port: int
    secure: bool
    user: str
    password: str
    database: str
    table: str
    path: str
    create: bool
    shown: str
    shard: Shard = Shard()


def _shown(url: str, password: str | None) -> str:
    """The URL as messages show it: its password (if any) replaced."""
    if not password:
        return url
    return url.replace(f":{password}@", ":REDACTED@", 1)


def _flag(value: str, name: str) -> bool:
    lowered = value.lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"{name} must be true or false, got {value!r}")


def parse_store_url(url: str) -> StoreUrl:
    """Read a store URL.

    Raises:
        ValueError: If it is not one, or holds an unknown option or a bad name, port or flag.
    """
    if len(url) > 4096:
        raise ValueError(f"the store URL is {len(url)} characters long; 4096 at most")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise ValueError(f"a store URL starts clickhouse:// or chdb://, got {redact_url(url)[:200]!r}")
    options = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
    unknown = sorted(set(options) - {"secure", "table", "create", "database", "shard"})
    if unknown:
        raise ValueError(f"unknown store URL option {unknown[0]!r} (known: create, database, secure, shard, table)")
    shard = Shard.parse(options.get("shard", "0/1"))
    table = identifier(options.get("table", "otel_traces"), "table")
    create = _flag(options.get("create", "false"), "create")
    shown = _shown(url, parts.password)
    if scheme == "chdb":
        if parts.netloc:
            raise ValueError(f"a chdb URL names a directory: chdb:///path/to/dir, got {shown!r}")
        path = unquote(parts.path)
        if not path or path == "/":
            raise ValueError(f"a chdb URL names a directory: chdb:///path/to/dir, got {shown!r}")
        database = identifier(options.get("database", "otel"), "database")
        return StoreUrl("chdb", "", 0, False, "", "", database, table, path, create, shown, shard)
    if not parts.hostname:
        raise ValueError(f"a clickhouse URL names its server: clickhouse://host:8123/otel, got {shown!r}")
    secure = _flag(options.get("secure", "false"), "secure")
    try:
        port = parts.port or (8443 if secure else 8123)
    except ValueError as exc:
        raise ValueError(f"bad port in {shown!r}") from exc
    database = identifier(unquote(parts.path.strip("/")) or options.get("database", "otel"), "database")
    password = os.environ.get("CLICKHOUSE_PASSWORD") or unquote(parts.password or "")
    register_secret(password or None)
    return StoreUrl(
        "clickhouse",
        parts.hostname,
        port,
        secure,
        unquote(parts.username or "") or "default",
        password,
        database,
        table,
        "",
        create,
        shown,
        shard,
    )

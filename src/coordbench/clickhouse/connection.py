"""A connection to ClickHouse: a server over HTTP (clickhouse-connect), or the engine embedded (chdb).

Both speak the same SQL and the same formats, so everything above this module is written once:
queries bind their values server-side (``{name:Type}``) and answer ``JSONCompactEachRow``;
inserts send ``JSONEachRow``.

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

import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast
from urllib.parse import parse_qs, unquote, urlsplit

from coordbench.clickhouse.schema import identifier
from coordbench.errors import CoordbenchError
from coordbench.redaction import redact_url, register_secret

__all__ = ["ClickHouse", "ClickHouseError", "JsonNumber", "Shard", "StoreUrl", "connect", "parse_store_url"]

SCHEMES = ("clickhouse", "chdb")


class ClickHouseError(CoordbenchError):
    """ClickHouse cannot be reached, or refused a statement."""

    default_message = "ClickHouse failed"


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


class ClickHouse(Protocol):
    """What coordbench asks of ClickHouse."""

    url: StoreUrl

    def rows(self, sql: str, parameters: Mapping[str, object] | None = None) -> list[list[Any]]:
        """The result of a query, row by row (values as JSON gives them)."""
        ...

    def command(self, sql: str) -> None:
        """Run a statement that answers nothing (DDL)."""
        ...

    def insert(self, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
        """Insert rows (column name to value) into ``database.table``."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


def _parse(body: bytes) -> list[list[Any]]:
    """JSONCompactEachRow's rows: one ``json.loads`` of them all (four times faster than one per line)."""
    lines = [line for line in body.splitlines() if line.strip()]
    return cast("list[list[Any]]", json.loads(b"[" + b",".join(lines) + b"]")) if lines else []


class JsonNumber(str):
    """A number written into JSONEachRow as its exact digits (``1795000000.123456789``), not as a string.

    A ``DateTime64(9)`` reads an unquoted ``seconds.nanoseconds`` exactly; quoted, ClickHouse
    takes a short one (``"0.000000000"``) for a date and refuses it.
    """

    __slots__ = ()


def _json(value: Any, dumps: Any) -> str:
    if isinstance(value, JsonNumber):
        return str(value)
    if isinstance(value, list) and value and isinstance(value[0], JsonNumber):
        return "[" + ",".join(str(v) for v in cast("list[str]", value)) + "]"
    return str(dumps(value))


def _lines(rows: Iterable[Mapping[str, Any]]) -> bytes:
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    out: list[str] = []
    for row in rows:
        out.append("{" + ",".join(f"{dumps(k)}:{_json(v, dumps)}" for k, v in row.items()) + "}\n")
    return "".join(out).encode()


_SETTINGS = {"output_format_json_validate_utf8": 1, "output_format_json_quote_64bit_integers": 0}


def _literal(values: Sequence[object]) -> str:
    """An array parameter as ClickHouse's text form (chdb binds parameters as text): ``['a','b']``."""
    quoted = (str(v).replace("\\", "\\\\").replace("'", "\\'") for v in values)
    return "[" + ",".join(f"'{v}'" for v in quoted) + "]"


class _Embedded:
    """The ClickHouse engine in this process (chdb): one session, one statement at a time."""

    def __init__(self, url: StoreUrl) -> None:
        try:
            from chdb import session
        except ImportError as exc:  # pragma: no cover - the extra is installed with the tests
            raise ClickHouseError("chdb:// stores need chdb: pip install 'coordbench[chdb]'") from exc
        self.url = url
        try:
            self._session: Any = session.Session(url.path)
        except Exception as exc:
            raise ClickHouseError(f"cannot open the embedded ClickHouse at {url.path}: {exc}") from exc
        self._lock = threading.Lock()
        settings = ", ".join(f"{k} = {v}" for k, v in _SETTINGS.items())
        self._suffix = f" SETTINGS {settings}"

    def _query(self, sql: str, fmt: str, parameters: Mapping[str, object] | None = None) -> bytes:
        params = {
            k: _literal(cast("Sequence[object]", v)) if isinstance(v, list | tuple) else v
            for k, v in (parameters or {}).items()
        }
        with self._lock:
            try:
                result: Any = self._session.query(sql, fmt, params=params)
            except Exception as exc:
                raise ClickHouseError(f"the embedded ClickHouse refused a statement: {exc}") from exc
        return bytes(result.bytes()) if result is not None else b""

    def rows(self, sql: str, parameters: Mapping[str, object] | None = None) -> list[list[Any]]:
        return _parse(self._query(sql + self._suffix, "JSONCompactEachRow", parameters))

    def command(self, sql: str) -> None:
        self._query(sql, "TSV")

    def insert(self, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
        body = _lines(rows)
        if body:
            target = f"`{self.url.database}`.`{identifier(table, 'the table')}`"
            self._query(f"INSERT INTO {target} FORMAT JSONEachRow\n" + body.decode(), "TSV")

    def close(self) -> None:
        with self._lock:
            self._session.close()


class _Server:
    """A ClickHouse server's HTTP interface, through clickhouse-connect."""

    def __init__(self, url: StoreUrl) -> None:
        try:
            import clickhouse_connect
        except ImportError as exc:  # pragma: no cover - the extra is installed with the tests
            raise ClickHouseError(
                "clickhouse:// stores need clickhouse-connect: pip install 'coordbench[clickhouse]'"
            ) from exc
        self.url = url
        try:
            self._client: Any = clickhouse_connect.get_client(  # pyright: ignore[reportUnknownMemberType]
                host=url.host,
                port=url.port,
                username=url.user,
                password=url.password,
                secure=url.secure,
                settings=_SETTINGS,
                connect_timeout=10,
                send_receive_timeout=120,
                autogenerate_session_id=False,
            )
        except Exception as exc:
            raise ClickHouseError(f"cannot reach ClickHouse at {url.shown}: {exc}") from exc

    def rows(self, sql: str, parameters: Mapping[str, object] | None = None) -> list[list[Any]]:
        try:
            body: Any = self._client.raw_query(sql, parameters=dict(parameters or {}), fmt="JSONCompactEachRow")
        except Exception as exc:
            raise ClickHouseError(f"ClickHouse at {self.url.shown} refused a query: {exc}") from exc
        return _parse(bytes(body))

    def command(self, sql: str) -> None:
        try:
            self._client.command(sql)
        except Exception as exc:
            raise ClickHouseError(f"ClickHouse at {self.url.shown} refused a statement: {exc}") from exc

    def insert(self, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
        body = _lines(rows)
        if not body:
            return
        try:
            self._client.raw_insert(
                identifier(table, "the table"), database=self.url.database, insert_block=body, fmt="JSONEachRow"
            )
        except Exception as exc:
            raise ClickHouseError(f"ClickHouse at {self.url.shown} refused an insert: {exc}") from exc

    def close(self) -> None:
        self._client.close()


def connect(url: str | StoreUrl) -> ClickHouse:
    """Connect to the store ``url`` names (see the module's docs).

    Raises:
        ValueError: If the URL is bad.
        ClickHouseError: If the server cannot be reached or the directory opened.
    """
    parsed = parse_store_url(url) if isinstance(url, str) else url
    return _Embedded(parsed) if parsed.scheme == "chdb" else _Server(parsed)

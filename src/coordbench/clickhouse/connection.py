"""A connection to ClickHouse: a server over HTTP (clickhouse-connect), or the engine embedded (chdb).

Both speak the same SQL and the same formats, so everything above this module is written once:
queries bind their values server-side (``{name:Type}``) and answer ``JSONCompactEachRow``;
inserts send ``JSONEachRow``.

Store URLs are read by :mod:`coordbench.clickhouse.url`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, cast

from coordbench.clickhouse.schema import identifier
from coordbench.clickhouse.url import StoreUrl, parse_store_url
from coordbench.errors import CoordbenchError

__all__ = ["ClickHouse", "ClickHouseError", "JsonNumber", "connect"]


class ClickHouseError(CoordbenchError):
    """ClickHouse cannot be reached, or refused a statement."""

    default_message = "ClickHouse failed"


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

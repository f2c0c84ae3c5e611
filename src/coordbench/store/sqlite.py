"""Durable trace storage in SQLite: accepted spans survive a crash of the process.

Why SQLite: it ships with Python (no new dependency, no server), its WAL mode makes a
committed transaction survive the death of the writing process, and it is queryable by hand
when something goes wrong. Spans go to an append-only rowid table (sequential inserts: about
370k rows/s here, against 27k/s for a table keyed by random trace ids); the store keeps each
trace's row ids in memory to delete finished traces. The resource and scope a batch shares
are stored once in their own table.

``synchronous=NORMAL`` (the default here) is durable against process crashes, which is what
the receiver promises; set ``fsync=True`` (``synchronous=FULL``) to also survive power loss,
at the cost of an fsync per batch.

Faults (a full disk, a file size limit, a file system turned read-only) are expected: a batch
whose write fails leaves nothing of itself, on disk (its transaction is rolled back, or SQLite
rolled it back already) or here (the envelope rows it added are forgotten, the connection is
opened afresh for the next write), and the store answers 503. A delete that fails is retried
before the next write. Loading never fails on a span whose envelope row is missing (a database
written by an earlier version could hold one): the span is kept, with an empty resource.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from coordbench.errors import ConfigurationError
from coordbench.spans import AttributeValue
from coordbench.store.base import StoredSpan
from coordbench.store.encoded import EncodedSpan, Envelope, SpanCodec

__all__ = ["SqlitePersistence"]

logger = logging.getLogger(__name__)

_MISSING_ENVELOPE = Envelope({}, "")
"""What a span whose envelope row is missing is loaded with (never written since writes are atomic)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS envelopes (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    resource TEXT NOT NULL,
    scope TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS spans (
    id INTEGER PRIMARY KEY,
    trace_id BLOB NOT NULL,
    span_id BLOB NOT NULL,
    parent_span_id BLOB NOT NULL,
    envelope INTEGER NOT NULL REFERENCES envelopes(id),
    fmt TEXT NOT NULL,
    payload BLOB NOT NULL,
    received_ns INTEGER NOT NULL
);
"""


def _to_json(value: Any) -> Any:
    """Attribute values as JSON, keeping bytes apart from strings."""
    if isinstance(value, bytes):
        return {"$bytes": value.hex()}
    if isinstance(value, tuple):
        return [_to_json(v) for v in cast("tuple[Any, ...]", value)]
    if isinstance(value, Mapping):
        return {str(k): _to_json(v) for k, v in cast("Mapping[Any, Any]", value).items()}
    return value


def _from_json(value: Any) -> AttributeValue:
    if isinstance(value, list):
        return tuple(_from_json(v) for v in cast("list[Any]", value))
    if isinstance(value, dict):
        mapping = cast("dict[str, Any]", value)
        if set(mapping) == {"$bytes"}:
            return bytes.fromhex(str(mapping["$bytes"]))
        return {k: _from_json(v) for k, v in mapping.items()}
    return cast("AttributeValue", value)


class SqlitePersistence:
    """Spans in ``<data_dir>/traces.sqlite3``.

    Args:
        data_dir: Directory for the database (created if missing).
        codecs: The codecs that read stored payloads back, by the name each stored span's
            :meth:`~coordbench.store.encoded.EncodedSpan.dump` gave (:data:`coordbench.otlp.CODECS`).
        fsync: Also survive power loss (``synchronous=FULL``).
    """

    def __init__(self, data_dir: str | Path, *, codecs: Mapping[str, SpanCodec], fsync: bool = False) -> None:
        """Open (or create) the database.

        Raises:
            ConfigurationError: If the directory cannot be created or written, or holds a file
                of that name that is not a SQLite database.
        """
        directory = Path(data_dir)
        self.codecs = codecs
        self.path = directory / "traces.sqlite3"
        self._fsync = fsync
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            reason = "it is not a directory" if directory.exists() and not directory.is_dir() else str(exc)
            raise ConfigurationError(f"cannot keep spans in data directory {str(directory)!r}: {reason}") from exc
        self._db: sqlite3.Connection | None = None
        self._db = self._connect(create=True)
        self._envelope_ids: dict[int, tuple[Envelope, int]] = {}
        self._envelope_keys: dict[str, int] = {}
        self._envelopes: dict[int, Envelope] = {}
        self._pending_deletes: list[int] = []

    def _connect(self, *, create: bool = False) -> sqlite3.Connection:
        """A new connection to the database (creating its tables when ``create``).

        Raises:
            ConfigurationError: If the file cannot be opened as the span database.
        """
        try:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise ConfigurationError(f"cannot keep spans in {str(self.path)!r}: {exc}") from exc
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={'FULL' if self._fsync else 'NORMAL'}")
            if create:
                db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            db.close()
            raise ConfigurationError(f"cannot use {str(self.path)!r} as the span database: {exc}") from exc
        return db

    def _connection(self) -> sqlite3.Connection:
        """The open connection, reopened if a failed write closed it."""
        if self._db is None:
            self._db = self._connect()
            self._reload_envelope_keys(self._db)
        return self._db

    def _discard_connection(self) -> None:
        """After a failed write: roll back whatever is left open, and close; the next write reconnects.

        SQLite rolls a transaction back by itself on some errors (a full disk among them); on
        others it stays open. Either way nothing of the failed write is committed, and a fresh
        connection starts from what is on disk.
        """
        db, self._db = self._db, None
        if db is None:
            return
        try:
            if db.in_transaction:
                db.execute("ROLLBACK")
        except sqlite3.Error as exc:
            logger.warning("rolling back a failed write of %s: %s", self.path, exc)
        try:
            db.close()
        except sqlite3.Error as exc:
            logger.warning("closing %s after a failed write: %s", self.path, exc)

    def load(self) -> Iterator[StoredSpan]:
        """Every span stored so far, in arrival order.

        Raises:
            ConfigurationError: If a span is stored in an encoding none of the codecs reads.
        """
        db = self._connection()
        for row_id, key, resource, scope in db.execute("SELECT id, key, resource, scope FROM envelopes"):
            envelope = Envelope(_from_json(json.loads(resource)), scope)  # type: ignore[arg-type]
            self._envelopes[row_id] = envelope
            self._envelope_keys[key] = row_id
        query = (
            "SELECT id, trace_id, span_id, parent_span_id, envelope, fmt, payload, received_ns FROM spans ORDER BY id"
        )
        missing = 0
        for row_id, trace_id, span_id, parent, envelope_id, fmt, payload, received in db.execute(query):
            codec = self.codecs.get(fmt)
            if codec is None:
                known = ", ".join(sorted(self.codecs)) or "none"
                raise ConfigurationError(
                    f"{str(self.path)!r} holds a span stored as {fmt!r}, which this coordbench cannot read "
                    f"(it reads {known})"
                )
            envelope = self._envelopes.get(envelope_id)
            if envelope is None:
                missing += 1
                envelope = _MISSING_ENVELOPE
            span = EncodedSpan(trace_id, span_id, parent, codec, payload, envelope)
            yield StoredSpan(key=row_id, span=span, received_unix_nano=received)
        if missing:
            logger.warning(
                "%s: %d span(s) refer to a resource that was never stored; they are loaded with an empty resource",
                self.path,
                missing,
            )

    def _envelope_id(self, db: sqlite3.Connection, envelope: Envelope, added: list[str]) -> int:
        cached = self._envelope_ids.get(id(envelope))
        if cached is not None and cached[0] is envelope:
            return cached[1]
        resource = json.dumps(_to_json(dict(envelope.resource)), sort_keys=True, separators=(",", ":"))
        key = f"{resource}\x00{envelope.scope_name}"
        row_id = self._envelope_keys.get(key)
        if row_id is None:
            cursor = db.execute(
                "INSERT INTO envelopes(key, resource, scope) VALUES (?, ?, ?)", (key, resource, envelope.scope_name)
            )
            row_id = int(cursor.lastrowid or 0)
            self._envelope_keys[key] = row_id
            added.append(key)
        if len(self._envelope_ids) > 10_000:
            self._envelope_ids.clear()
        self._envelope_ids[id(envelope)] = (envelope, row_id)
        return row_id

    def append(self, spans: Sequence[EncodedSpan], received_unix_nano: int) -> list[int]:
        """Write ``spans`` in one transaction; their row ids.

        Raises:
            sqlite3.Error: The write failed (a full disk, say); nothing of it was kept, here or on disk.
            ConfigurationError: The database could not be reopened after an earlier failure.
        """
        self._retry_deletes()
        db = self._connection()
        added: list[str] = []  # envelope rows this transaction inserts: forgotten if it fails
        try:
            db.execute("BEGIN")
            rows: list[tuple[bytes, bytes, bytes, int, str, bytes, int]] = []
            for span in spans:
                fmt, payload = span.dump()
                rows.append(
                    (
                        span.trace_id,
                        span.span_id,
                        span.parent_span_id,
                        self._envelope_id(db, span.envelope, added),
                        fmt,
                        payload,
                        received_unix_nano,
                    )
                )
            first = db.execute("SELECT COALESCE(MAX(id), 0) FROM spans").fetchone()[0]
            db.executemany(
                "INSERT INTO spans(trace_id, span_id, parent_span_id, envelope, fmt, payload, received_ns) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            db.execute("COMMIT")
        except BaseException:
            for key in added:
                self._envelope_keys.pop(key, None)
            self._envelope_ids.clear()
            self._discard_connection()
            raise
        return list(range(first + 1, first + 1 + len(rows)))

    def _reload_envelope_keys(self, db: sqlite3.Connection) -> None:
        self._envelope_ids.clear()
        self._envelope_keys = {key: row_id for row_id, key in db.execute("SELECT id, key FROM envelopes")}

    def delete(self, keys: Sequence[int]) -> None:
        """Delete spans by row id; if it fails, the rows stay and the delete is retried before the next write."""
        self._pending_deletes.extend(keys)
        self._retry_deletes()

    def _retry_deletes(self) -> None:
        if not self._pending_deletes:
            return
        keys, self._pending_deletes = self._pending_deletes, []
        try:
            db = self._connection()
            db.execute("BEGIN")
            db.executemany("DELETE FROM spans WHERE id = ?", [(k,) for k in keys])
            db.execute("COMMIT")
        except (sqlite3.Error, ConfigurationError) as exc:
            logger.warning("cannot delete %d span(s) from %s yet (retried later): %s", len(keys), self.path, exc)
            self._pending_deletes = keys + self._pending_deletes
            self._discard_connection()

    def close(self) -> None:
        """Checkpoint and close (a checkpoint that fails, on a full disk say, leaves the WAL for the next start)."""
        self._retry_deletes()
        db, self._db = self._db, None
        if db is None:
            return
        try:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            logger.warning("cannot checkpoint %s at shutdown (the next start reads the WAL): %s", self.path, exc)
        db.close()

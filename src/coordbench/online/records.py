"""Online evaluations kept for reading: bounded in memory, durable in SQLite with ``--data-dir``.

Each :class:`EvaluationRecord` holds one trace's latest evaluation: ``coordbench evaluate``'s
line for it, verbatim, and what the listing shows of it. A failed durable write (a full disk)
is logged and counted; the evaluation stays readable in memory, and a restart simply
re-evaluates the trace if its spans were kept.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from coordbench.graph.metrics.result import canonical_json

__all__ = ["EvaluationLog", "EvaluationRecord", "EvaluationWriter", "ScenarioSummary"]

logger = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS evaluations (
    trace_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    team TEXT NOT NULL,
    evaluated_unix_nano INTEGER NOT NULL,
    head TEXT NOT NULL,
    line TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS evaluations_seq ON evaluations (seq);
"""


@dataclass(frozen=True)
class ScenarioSummary:
    """One scenario of an evaluation as the listing shows it."""

    scenario: str
    score: float
    passed: bool
    answer_quality: float | None
    coordination_quality: float | None
    fired: tuple[str, ...]
    blamed: str | None = None
    """The agent failure attribution named (``none`` when it could name none; ``None``: not attributed)."""
    cause: str | None = None
    """The rule that found the decisive step (``none`` when none did; ``None``: not attributed)."""


@dataclass(frozen=True)
class EvaluationRecord:
    """A trace's latest online evaluation.

    Attributes:
        trace_id: The trace.
        team: Its team (root resource's ``service.namespace``, else root service name).
        evaluated_unix_nano: When it was evaluated (wall clock).
        span_count: Spans it had then.
        complete: Whether it was complete (else it was evaluated once it settled, incomplete).
        revision: 1 for the first evaluation, 2 after late spans changed it.
        late_spans: Spans that arrived after its first evaluation.
        judge: Whether the LLM judge took part (else the rule-based judge answered).
        scenarios: What the listing shows of each evaluated scenario.
        line: The evaluation: ``coordbench evaluate``'s line for the trace, byte for byte.
    """

    trace_id: str
    team: str
    evaluated_unix_nano: int
    span_count: int
    complete: bool
    revision: int
    late_spans: int
    judge: bool
    scenarios: tuple[ScenarioSummary, ...]
    line: str

    def head(self) -> dict[str, Any]:
        """Everything but the evaluation, as JSON data (the listing's entry)."""
        return {
            "trace_id": self.trace_id,
            "team": self.team,
            "evaluated_unix_nano": self.evaluated_unix_nano,
            "span_count": self.span_count,
            "complete": self.complete,
            "revision": self.revision,
            "late_spans": self.late_spans,
            "judge": self.judge,
            "scenarios": [
                {
                    "scenario": s.scenario,
                    "score": s.score,
                    "passed": s.passed,
                    "answer_quality": s.answer_quality,
                    "coordination_quality": s.coordination_quality,
                    "fired": list(s.fired),
                    "blamed": s.blamed,
                    "cause": s.cause,
                }
                for s in self.scenarios
            ],
        }

    def to_json(self) -> str:
        """The record as one JSON object: :meth:`head`'s keys, sorted, then ``evaluation`` (the line, verbatim)."""
        return canonical_json(self.head())[:-1] + ',"evaluation":' + self.line + "}"

    @classmethod
    def from_head(cls, head: dict[str, Any], line: str) -> EvaluationRecord:
        """Rebuild a record from :meth:`head` and its line (durable storage)."""
        scenarios = tuple(
            ScenarioSummary(
                scenario=str(s["scenario"]),
                score=float(s["score"]),
                passed=bool(s["passed"]),
                answer_quality=s["answer_quality"],
                coordination_quality=s["coordination_quality"],
                fired=tuple(s["fired"]),
                blamed=s.get("blamed"),  # records kept before attribution was listed have neither
                cause=s.get("cause"),
            )
            for s in head["scenarios"]
        )
        return cls(
            trace_id=str(head["trace_id"]),
            team=str(head["team"]),
            evaluated_unix_nano=int(head["evaluated_unix_nano"]),
            span_count=int(head["span_count"]),
            complete=bool(head["complete"]),
            revision=int(head["revision"]),
            late_spans=int(head["late_spans"]),
            judge=bool(head["judge"]),
            scenarios=scenarios,
            line=line,
        )


@runtime_checkable
class EvaluationWriter(Protocol):
    """A store that keeps online evaluations beside its spans (ClickHouse's ``coordbench_evaluations``)."""

    def write_evaluation(self, record: EvaluationRecord) -> None:
        """Keep ``record`` (blocking; raises when it cannot)."""
        ...


class EvaluationLog:
    """The latest evaluation of each trace, newest last, at most ``max_records`` of them.

    Args:
        max_records: Most records kept (the oldest go first).
        data_dir: Keep them durably in ``data_dir/evaluations.sqlite`` (default: memory only).

    Writes to SQLite happen on the caller's thread: the online evaluator calls :meth:`put`
    from a worker thread, never from the event loop.
    """

    def __init__(self, max_records: int = 100_000, data_dir: Path | None = None) -> None:
        """Create the log, loading what ``data_dir`` holds."""
        if max_records < 1:
            raise ValueError("max_records must be at least 1")
        self.max_records = max_records
        self._records: OrderedDict[str, EvaluationRecord] = OrderedDict()
        self._lock = threading.Lock()
        self._seq = 0
        self.changes = 0
        """Records put since the log was opened: a reader that saw it change knows the listing did."""
        self.unsaved = 0
        """Records whose durable write failed (kept in memory only)."""
        self.unexported = 0
        """Records a sink given to :meth:`also` refused (ClickHouse down, say)."""
        self._sinks: list[Callable[[EvaluationRecord], None]] = []
        self._db: sqlite3.Connection | None = None
        if data_dir is not None:
            path = data_dir / "evaluations.sqlite"
            try:
                data_dir.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
                self._db.executescript(_SCHEMA)
                self._load()
            except (OSError, sqlite3.Error) as exc:  # a full or read-only disk: evaluate on, in memory
                logger.warning("cannot keep evaluations in %s (%s): they are kept in memory only", path, exc)
                if self._db is not None:
                    self._db.close()
                self._db = None

    def also(self, sink: Callable[[EvaluationRecord], None]) -> None:
        """Give every record :meth:`put` keeps to ``sink`` too (on the same thread).

        A sink that raises is logged and counted in :attr:`unexported`; the record is kept all the same.
        """
        self._sinks.append(sink)

    def _load(self) -> None:
        import json

        if self._db is None:
            return
        rows = self._db.execute("SELECT seq, head, line FROM evaluations ORDER BY seq").fetchall()
        for seq, head, line in rows[-self.max_records :]:
            record = EvaluationRecord.from_head(json.loads(head), line)
            self._records[record.trace_id] = record
            self._seq = max(self._seq, int(seq))

    def __len__(self) -> int:
        """Records held."""
        return len(self._records)

    def get(self, trace_id: str) -> EvaluationRecord | None:
        """The trace's latest evaluation, if kept."""
        return self._records.get(trace_id.lower())

    def put(self, record: EvaluationRecord) -> None:
        """Keep ``record`` (replacing the trace's earlier one) and write it durably when durable."""
        with self._lock:
            self._seq += 1
            seq = self._seq
            self._records[record.trace_id] = record
            self._records.move_to_end(record.trace_id)
            self.changes += 1
            gone: list[str] = []
            while len(self._records) > self.max_records:
                gone.append(self._records.popitem(last=False)[0])
        for sink in self._sinks:
            try:
                sink(record)
            except Exception as exc:  # a sink that fails must not lose the record or stop evaluation
                self.unexported += 1
                logger.warning("could not export the evaluation of trace %s: %s", record.trace_id, exc)
        if self._db is None:
            return
        try:
            with self._lock:
                self._db.execute("BEGIN")
                self._db.execute(
                    "INSERT OR REPLACE INTO evaluations VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        record.trace_id,
                        seq,
                        record.team,
                        record.evaluated_unix_nano,
                        canonical_json(record.head()),
                        record.line,
                    ),
                )
                self._db.executemany("DELETE FROM evaluations WHERE trace_id = ?", [(t,) for t in gone])
                self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            self.unsaved += 1
            logger.warning("could not keep the evaluation of trace %s durably: %s", record.trace_id, exc)
            try:
                with self._lock:
                    self._db.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def newest(
        self, *, team: str | None = None, since_unix_nano: int | None = None, limit: int = 50
    ) -> list[EvaluationRecord]:
        """The newest records first, of ``team`` only and evaluated at or after ``since_unix_nano`` if given."""
        out: list[EvaluationRecord] = []
        with self._lock:
            records = list(reversed(self._records.values()))
        for record in records:
            if team is not None and record.team != team:
                continue
            if since_unix_nano is not None and record.evaluated_unix_nano < since_unix_nano:
                continue
            out.append(record)
            if len(out) == limit:
                break
        return out

    def close(self) -> None:
        """Close the durable storage."""
        if self._db is not None:
            with self._lock:
                self._db.close()
            self._db = None

"""Where a stored trace is read from: one or several receivers, or a ClickHouse store.

Behind the Collector's load balancer each receiver holds the traces routed to it; a trace is
asked of every receiver at once and taken from the one that holds it. A ClickHouse store
(``clickhouse://`` or ``chdb://``) holds them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast

from coordbench import jsontext
from coordbench.spans import SpanData, span_from_dict
from coordbench.traces.file import TraceFileError

__all__ = ["TraceSource", "response_detail"]


def response_detail(response: Any) -> str:
    """What an error response says: our API's ``detail``, else its text (cut), else the reason phrase."""
    if not response.content:
        return str(response.reason_phrase)
    try:
        document = jsontext.loads(response.content)
    except ValueError:
        document = None
    if isinstance(document, dict) and "detail" in document:
        return str(cast("dict[str, Any]", document)["detail"])
    text = str(response.text).strip()
    return text if len(text) <= 200 else text[:197] + "..."


@dataclass(frozen=True)
class TraceSource:
    """Receivers (asked together) or a ClickHouse store.

    Attributes:
        receivers: Receiver (or green) URLs.
        token: Bearer token for the receivers.
        store: A ClickHouse store URL instead of receivers.
    """

    receivers: Sequence[str] = ("http://127.0.0.1:4318",)
    token: str | None = None
    store: str | None = None

    def fetch(self, trace_id: str) -> list[SpanData]:
        """The trace's spans (by start time), wherever it is.

        Raises:
            TraceFileError: If no receiver holds it (each one's answer said), or the store cannot be read.
        """
        if self.store is not None:
            return self._from_store(trace_id)
        receivers = list(dict.fromkeys(r.rstrip("/") for r in self.receivers))
        if len(receivers) == 1:
            found, why = self._ask(receivers[0], trace_id)
            if found is None:
                raise TraceFileError(why)
            return found
        with ThreadPoolExecutor(max_workers=min(16, len(receivers))) as pool:
            answers = list(pool.map(self._ask, receivers, [trace_id] * len(receivers)))
        for found, _ in answers:
            if found is not None:
                return found
        reasons = "; ".join(why for _, why in answers)
        raise TraceFileError(f"trace {trace_id} is on none of the {len(receivers)} receivers: {reasons}")

    def _ask(self, receiver: str, trace_id: str) -> tuple[list[SpanData] | None, str]:
        import httpx

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        url = f"{receiver}/v1/traces/{trace_id}"
        try:
            response = httpx.get(url, headers=headers, timeout=60)
        except httpx.HTTPError as exc:
            return None, f"cannot reach {url}: {exc}"
        if response.status_code != 200:
            return None, f"{url} answered {response.status_code}: {response_detail(response)}"
        try:
            document = jsontext.loads(response.content)
            return [span_from_dict(s) for s in document["spans"]], ""
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return None, f"{url} did not answer a trace (GET /v1/traces/{{id}} output): {exc!r}"

    def _from_store(self, trace_id: str) -> list[SpanData]:
        from coordbench.clickhouse import ClickHouseError, ClickHouseTraces, connect, parse_store_url

        assert self.store is not None  # noqa: S101 - the caller checked
        try:
            url = parse_store_url(self.store)
        except ValueError as exc:
            raise TraceFileError(f"--store: {exc}") from exc
        try:
            connection = connect(url)
        except ClickHouseError as exc:
            raise TraceFileError(str(exc)) from exc
        try:
            spans = ClickHouseTraces(connection).trace(trace_id)
        except ValueError as exc:
            raise TraceFileError(str(exc)) from exc
        except ClickHouseError as exc:
            raise TraceFileError(f"cannot read trace {trace_id} from {url.shown}: {exc}") from exc
        finally:
            connection.close()
        if not spans:
            raise TraceFileError(f"trace {trace_id} is not in {url.shown} (table {url.database}.{url.table})")
        return spans

"""The evaluation corpus: traces whose evaluations must stay byte for byte what they were.

Evaluation is made cheaper without changing a single byte of what it says. This module writes a
corpus of traces and, beside it, the SHA-256 of every evaluation of them as the code of the
moment computes it. It was run once on the code *before* the cost work (commit c53150c), so the
digests are the old code's; ``test_unchanged.py`` evaluates the same traces with today's code and
compares.

The corpus (``tests/cost/data/corpus.jsonl.gz``, one item a line: a name, the OTLP/JSON of its
spans and, for generated teams, what the assessor knew: task, hosts, members, outcome) holds:

- ``team-*``: Hypothesis team shapes (:func:`tests.evals.teams.teams`: 1-5 workers, nested
  delegation, parallel or sequential, duplicates, failures, relays, idle members, references);
- ``run-*``: Hypothesis orchestrator runs (:func:`tests.evals.llm_teams.runs`: one member at a
  time, model steps between calls, cut text);
- ``synthetic-*``: the benchmark's 20-agent traces (:func:`benchmarks.evaluation.synthetic_trace`)
  of 30 to 3,000 spans, with and without captured text, some with failed calls, repeated
  requests, repeated text, missing servers and an unfinished trace;
- ``ground-*``: every ground-truth pattern (``data/ground_truth.json``);
- ``hostile-*``: small versions of the hostile shapes (one agent calling itself, every span a
  child of one root, every call the same text).

The digests also cover every trace of ``data/attribution/`` (generated LLM-team runs, and the live
runs of the demo's purple team shapes in ``recorded-traces.jsonl``), evaluated whole by
:func:`~coordbench.evals.replay.replay`. Every item is evaluated with failure attribution on
(``attribution="always"``), so attribution's output is held too.

Run ``python -m tests.cost.corpus write`` to write the corpus and digests (only to extend the
corpus: the digests must come from code whose output is known good), ``python -m tests.cost.corpus
check`` to compare today's code with the digests.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.evals import llm_teams, teams

from benchmarks.evaluation import synthetic_trace
from coordbench import semconv
from coordbench.evals import EvalConfig, EvalContext, EvalPipeline, EvalScenario, JudgeConfig, TeamOutcome
from coordbench.evals.groundtruth import load_ground_truth, pattern_spans
from coordbench.evals.replay import replay
from coordbench.otlp import decode_json, export_request_json
from coordbench.spans import SpanData, SpanKind, StatusCode
from coordbench.spantree import completeness_of
from coordbench.traces.file import load_traces

HERE = Path(__file__).parent / "data"
CORPUS = HERE / "corpus.jsonl.gz"
DIGESTS = HERE / "digests.json"
ROOT = Path(__file__).parents[2]
ATTRIBUTION_SETS = ("traces.jsonl", "held-out-traces.jsonl", "recorded-traces.jsonl")
CONFIG = EvalConfig(judge=JudgeConfig())  # no API key: the rule-based judge answers


@dataclass
class Item:
    """One trace of the corpus and, when the assessor knew more than its spans say, what it knew."""

    name: str
    spans: list[SpanData]
    context: dict[str, Any] | None = None


# --- generation ----------------------------------------------------------------------------------


def _examples(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    """``count`` examples of ``strategy``, the same ones every time (derandomized)."""
    out: list[Any] = []

    @settings(max_examples=count, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value: Any) -> None:
        out.append(value)

    collect()
    return out[:count]


def _team_items(count: int) -> Iterator[Item]:
    for k, team in enumerate(_examples(teams.teams(), count)):
        spans = teams.team_spans(team)
        task = f"{teams.TOPIC}. The team: {', '.join(team.members)}." if team.roster else teams.TOPIC
        outcome = teams.outcome(team)
        yield Item(
            f"team-{k:03d}",
            spans,
            {
                "task": task,
                "references": list(team.references),
                "hosts": [teams.HOST],
                "participants": list(team.members),
                "outcome": outcome.model_dump(),
                "quiet_s": 5.0,
            },
        )


def _run_items(count: int) -> Iterator[Item]:
    for k, run in enumerate(_examples(llm_teams.runs(), count)):
        team = run.as_team()
        yield Item(
            f"run-{k:03d}",
            llm_teams.run_spans(run),
            {
                "task": teams.TOPIC,
                "references": list(team.references),
                "hosts": [teams.HOST],
                "participants": list(team.members),
                "outcome": teams.outcome(team).model_dump(),
                "quiet_s": 5.0,
            },
        )


def _spoiled(spans: list[SpanData], rng: random.Random) -> list[SpanData]:
    """Failed calls, repeated requests and text, and servers that never reported."""
    out: list[SpanData] = []
    digests: list[str] = []
    texts: list[object] = []
    for span in spans:
        attrs = dict(span.attributes)
        if span.kind is SpanKind.CLIENT:
            digest = attrs.get(semconv.A2A_MESSAGE_DIGEST)
            if digests and rng.random() < 0.15:
                attrs[semconv.A2A_MESSAGE_DIGEST] = rng.choice(digests)  # the same request again
            elif isinstance(digest, str):
                digests.append(digest)
            text = attrs.get(semconv.GEN_AI_OUTPUT_MESSAGES)
            if texts and text is not None and rng.random() < 0.15:
                attrs[semconv.GEN_AI_OUTPUT_MESSAGES] = rng.choice(texts)  # an answer said again
            elif text is not None:
                texts.append(text)
            if rng.random() < 0.1:
                span = span._replace(status_code=StatusCode.ERROR, status_message="boom")
                attrs[semconv.ERROR_TYPE] = rng.choice(["TimeoutError", "task_failed", "500"])
        elif span.kind is SpanKind.SERVER and rng.random() < 0.05:
            continue  # this server's spans never arrived
        out.append(span._replace(attributes=attrs))
    return out


def _synthetic_items() -> Iterator[Item]:
    for size in (30, 80, 200, 600, 3_000):
        for content in (False, True):
            spans = synthetic_trace(size, seed=size + content, content=content)
            yield Item(f"synthetic-{size}{'-text' if content else ''}", spans)
    for seed in range(12):
        rng = random.Random(seed)
        size = rng.choice([40, 120, 200, 400])
        spans = _spoiled(synthetic_trace(size, agents=rng.randint(3, 20), seed=100 + seed, content=True), rng)
        yield Item(f"synthetic-spoiled-{seed:02d}", spans)


def _ground_items() -> Iterator[Item]:
    truth = load_ground_truth(ROOT / "data" / "ground_truth.json")
    for scenario in truth.scenarios:
        yield Item(f"ground-{scenario.id}", pattern_spans(scenario.interaction_pattern, scenario_id=scenario.id))


def _hostile_items() -> Iterator[Item]:
    from tests.cost.hostile import one_root, same_text, self_calls

    for shape in (self_calls, one_root, same_text):
        yield Item(f"hostile-{shape.__name__}", shape(300))


def generate() -> list[Item]:
    """Every generated item of the corpus, in a fixed order."""
    return [
        *_team_items(60),
        *_run_items(40),
        *_synthetic_items(),
        *_ground_items(),
        *_hostile_items(),
    ]


def write_corpus(items: list[Item], path: Path = CORPUS) -> None:
    """The items as gzipped JSON lines (fixed gzip header: the same items give the same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(
            {"name": i.name, "context": i.context, "otlp": export_request_json(i.spans)},
            sort_keys=True,
            separators=(",", ":"),
        )
        for i in items
    ]
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as out:
        out.write(("\n".join(lines) + "\n").encode())


def read_corpus(path: Path = CORPUS) -> list[Item]:
    """The corpus's items, in order."""
    items: list[Item] = []
    for line in gzip.decompress(path.read_bytes()).decode().splitlines():
        record = json.loads(line)
        decoded = decode_json(json.dumps(record["otlp"]).encode())
        assert not decoded.rejected, decoded.rejection_message()
        items.append(Item(record["name"], [s.decode() for s in decoded.spans], record["context"]))
    return items


def attribution_items() -> list[Item]:
    """Every trace of ``data/attribution/``, named by set and trace id."""
    out: list[Item] = []
    for name in ATTRIBUTION_SETS:
        for trace_id, spans in load_traces(ROOT / "data" / "attribution" / name).items():
            out.append(Item(f"{name.removesuffix('.jsonl')}-{trace_id}", spans))
    return out


# --- evaluation ----------------------------------------------------------------------------------


async def evaluate(item: Item) -> str:
    """The item's evaluation as JSON: the assessor's view when the item has one, else a replay of the trace."""
    if item.context is None:
        trace_id = item.spans[0].trace_id
        return (await replay(trace_id, item.spans, judge=JudgeConfig(), attribution="always")).to_json()
    known = item.context
    ctx = EvalContext.build(
        item.spans,
        scenario=EvalScenario(id="s1", task=known["task"], references=known["references"]),
        config=CONFIG,
        hosts=known["hosts"],
        participants=known["participants"],
        completeness=completeness_of(item.spans[0].trace_id, item.spans, known["quiet_s"]),
        outcome=TeamOutcome.model_validate(known["outcome"]),
    )
    return (await EvalPipeline(CONFIG).run(ctx, attribution="always")).to_json()


def digest(text: str) -> str:
    """SHA-256 of an evaluation's JSON."""
    return hashlib.sha256(text.encode()).hexdigest()


async def digests(items: list[Item]) -> dict[str, str]:
    """Every item's evaluation digest, by name."""
    return {item.name: digest(await evaluate(item)) for item in items}


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "check"
    if command == "write":
        generated = generate()
        write_corpus(generated)
        found = asyncio.run(digests(read_corpus() + attribution_items()))
        DIGESTS.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"{len(found)} digests written")
        return 0
    want = json.loads(DIGESTS.read_text(encoding="utf-8"))
    found = asyncio.run(digests(read_corpus() + attribution_items()))
    changed = sorted(name for name in want if found.get(name) != want[name])
    print(f"{len(want) - len(changed)} of {len(want)} unchanged" + (f"; changed: {changed}" if changed else ""))
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

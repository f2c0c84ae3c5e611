"""The labelled attribution sets in ``data/attribution``: reproducible, and their accuracy as docs/attribution.md says.

Two sets of 50 generated runs with a fault injected where the truth is known by construction
(:mod:`tests.attribution.faults`): ``dev`` (the rules were developed on it) and ``held-out``
(other topics, agent names and wording; never tuned on); and 18 runs of our own purple teams
recorded live with a worker broken (:mod:`tests.attribution.record`). Attribution is scored on each, with
and without the expected answers, beside the trivial baselines computed on the same traces.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.attribution.faults import FILES, files

from coordbench import jsontext, semconv
from coordbench.evals.attribution.accuracy import METHODS, AccuracyRow, LabelSet, accuracy, markdown
from coordbench.spans import SpanKind
from coordbench.traces.file import load_traces

ROOT = Path(__file__).parent.parent.parent
DATA = ROOT / "data" / "attribution"
DOC = ROOT / "docs" / "attribution.md"


SETS = {**FILES, "recorded": ("recorded-traces.jsonl", "recorded-labels.json")}
"""The generated sets and the one recorded from live teams (:mod:`tests.attribution.record`)."""


def _scored(variant: str, *, with_expected: bool) -> list[AccuracyRow]:
    traces_name, labels_name = SETS[variant]
    labels = LabelSet.model_validate(jsontext.loads((DATA / labels_name).read_text(encoding="utf-8")))
    return accuracy(load_traces(DATA / traces_name), labels, with_expected=with_expected)


@pytest.mark.parametrize("variant", sorted(FILES))
def test_the_sets_are_what_the_generator_writes(variant: str) -> None:
    for name, text in files(variant).items():
        assert (DATA / name).read_text(encoding="utf-8") == text, f"run `python -m tests.attribution.faults`: {name}"
    labels = LabelSet.model_validate(jsontext.loads((DATA / FILES[variant][1]).read_text(encoding="utf-8")))
    assert len(labels.runs) >= 40
    assert len({label.model_extra["shape"] for label in labels.runs if label.model_extra}) == 5


def test_the_recorded_set_s_labels_name_the_broken_worker_at_a_span_of_its_own() -> None:
    """Each recorded run's truth, checked against its trace: the worker's SERVER span, or a call to it."""
    labels = LabelSet.model_validate(jsontext.loads((DATA / "recorded-labels.json").read_text(encoding="utf-8")))
    traces = load_traces(DATA / "recorded-traces.jsonl")
    assert len(labels.runs) == 18 and set(traces) == {label.trace_id for label in labels.runs}
    for label in labels.runs:
        spans = {s.span_id: s for s in traces[label.trace_id]}
        named = [s for s in spans.values() if s.attributes.get(semconv.GEN_AI_AGENT_NAME) == label.agent]
        if label.span_id is None:  # down: no agent called it, nothing of it is in the trace
            assert (label.model_extra or {})["fault"] == "down" and named == [], label
            continue
        span = spans[label.span_id]
        assert span.attributes.get(semconv.GEN_AI_AGENT_NAME) == label.agent, label
        assert span.kind is SpanKind.SERVER or (label.model_extra or {})["fault"] == "down", label


@pytest.mark.parametrize("variant", sorted(SETS))
@pytest.mark.parametrize("with_expected", [True, False])
def test_attribution_beats_every_trivial_baseline_and_the_docs_say_by_how_much(
    variant: str, with_expected: bool
) -> None:
    rows = _scored(variant, with_expected=with_expected)
    assert [r.method for r in rows] == list(METHODS)
    ours, baselines = rows[0], rows[1:]
    for baseline in baselines:
        assert ours.agent > baseline.agent, (variant, with_expected, baseline)
        assert ours.near >= baseline.near, (variant, with_expected, baseline)
        assert ours.span > baseline.span, (variant, with_expected, baseline)
    table = markdown(rows)
    heading = f"<!-- accuracy: {variant}, {'with' if with_expected else 'without'} the expected answers -->"
    doc = DOC.read_text(encoding="utf-8")
    assert heading in doc, heading
    shown = re.split(r"\n\n", doc.split(heading, 1)[1].lstrip("\n"), maxsplit=1)[0] + "\n"
    assert shown == table, f"docs/attribution.md is stale for {heading}:\n{table}"

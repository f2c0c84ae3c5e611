"""The labelled attribution sets in ``data/attribution``: reproducible, and their accuracy as docs/attribution.md says.

Two sets of 50 runs with a fault injected where the truth is known by construction
(:mod:`tests.attribution.faults`): ``dev`` (the rules were developed on it) and ``held-out``
(other topics, agent names and wording; never tuned on). Attribution is scored on each, with
and without the expected answers, beside the trivial baselines computed on the same traces.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.attribution.faults import FILES, files

from coordbench import jsontext
from coordbench.evals.attribution.accuracy import METHODS, AccuracyRow, LabelSet, accuracy, markdown
from coordbench.traces.file import load_traces

ROOT = Path(__file__).parent.parent.parent
DATA = ROOT / "data" / "attribution"
DOC = ROOT / "docs" / "attribution.md"


def _scored(variant: str, *, with_expected: bool) -> list[AccuracyRow]:
    traces_name, labels_name = FILES[variant]
    labels = LabelSet.model_validate(jsontext.loads((DATA / labels_name).read_text(encoding="utf-8")))
    return accuracy(load_traces(DATA / traces_name), labels, with_expected=with_expected)


@pytest.mark.parametrize("variant", sorted(FILES))
def test_the_sets_are_what_the_generator_writes(variant: str) -> None:
    for name, text in files(variant).items():
        assert (DATA / name).read_text(encoding="utf-8") == text, f"run `python -m tests.attribution.faults`: {name}"
    labels = LabelSet.model_validate(jsontext.loads((DATA / FILES[variant][1]).read_text(encoding="utf-8")))
    assert len(labels.runs) >= 40
    assert len({label.model_extra["shape"] for label in labels.runs if label.model_extra}) == 5


@pytest.mark.parametrize("variant", sorted(FILES))
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

"""Cheaper evaluation says exactly what it said: every corpus trace's evaluation, byte for byte.

The digests in ``data/digests.json`` were computed by the code before the cost work
(``python -m tests.cost.corpus write`` at commit c53150c); see :mod:`tests.cost.corpus`.
"""

from __future__ import annotations

import json

from tests.cost.corpus import DIGESTS, attribution_items, digest, evaluate, read_corpus


async def test_every_trace_of_the_corpus_evaluates_to_the_same_bytes_as_before() -> None:
    want: dict[str, str] = json.loads(DIGESTS.read_text(encoding="utf-8"))
    items = read_corpus() + attribution_items()
    assert sorted(i.name for i in items) == sorted(want)  # nothing left out, nothing new without a digest
    kinds = {i.name.split("-")[0] for i in items}
    assert {"team", "run", "synthetic", "ground", "hostile", "traces", "held", "recorded"} <= kinds
    changed = [i.name for i in items if digest(await evaluate(i)) != want[i.name]]
    assert not changed, f"{len(changed)} of {len(items)} evaluations changed: {changed[:10]}"


async def test_the_corpus_evaluations_differ_from_each_other() -> None:
    # a digest of nothing (an evaluation that said the same whatever it read) would hold any code
    want: dict[str, str] = json.loads(DIGESTS.read_text(encoding="utf-8"))
    assert len(set(want.values())) >= len(want) - 3

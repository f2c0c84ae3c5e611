"""Every function that reads text an agent wrote takes time linear in it, on the inputs that break naive code.

Each function meets hostile texts (long runs of letters, digits, spaces and URL-ish characters,
many URLs, the openings of our regular expressions repeated) at two sizes, 8x apart. Linear
code takes about 8x as long on the larger; the quadratic code these tests were written
against took 64x (and the backtracking regex 500x and more). The bound, 24x, sits between, and
CPU time of this process is compared, so a busy machine slows both sizes alike.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

import pytest

from coordbench.evals.calls import message_text
from coordbench.evals.judge_prompt import find_injection
from coordbench.evals.textsim import rouge_l, tfidf_vectors, tokens
from coordbench.instrument._payload import recorded_messages
from coordbench.purple.text import extract, numbers, risks, sentences, words
from coordbench.redaction import redact, redact_urls_in
from coordbench.server.jsonguard import json_problem

HOSTILE: dict[str, Callable[[int], str]] = {
    "letters": lambda n: "a" * n,
    "digits": lambda n: "7" * n,
    "spaces": lambda n: "give" + " " * n + "x",
    "score-spaces": lambda n: "score" + " " * n + "x",
    "ignore-all": lambda n: ("ignore " + "all " * (n // 4))[:n],
    "scheme-chars": lambda n: ("a+b.c-" * n)[:n] + ":/",
    "near-urls": lambda n: ("a:/" * n)[:n],
    "urls": lambda n: ("https://u:p@h/?k=v " * n)[:n],
    "underscores": lambda n: "overall" + "_" * n + "x",
    "zeros": lambda n: "score 1." + "0" * n,
    "digit-punctuation": lambda n: ("1," * n)[:n] + "-",
    "sentences": lambda n: ("risk. " * n)[:n],
    "colons": lambda n: "Findings" + "x" * n,
}

FUNCTIONS: dict[str, Callable[[str], object]] = {
    "redact_urls_in": redact_urls_in,
    "redact": redact,
    "find_injection": find_injection,
    "tokens": tokens,
    "tfidf_vectors": lambda text: tfidf_vectors([text, "a reference text"]),
    "rouge_l": lambda text: rouge_l(text, "a reference text of a few words " * 20),
    "message_text": lambda text: message_text('[{"parts":[{"content":' + repr_json(text) + "}]}]"),
    "recorded_messages": lambda text: recorded_messages("user", [text]),
    "json_problem": lambda text: json_problem(('{"a":' + repr_json(text) + "}").encode()),
    "sentences": sentences,
    "words": words,
    "extract": extract,
    "risks": risks,
    "numbers": numbers,
}

SMALL = 20_000
GROWTH = 8
BOUND = 24.0


def repr_json(text: str) -> str:
    import json

    return json.dumps(text)


def _cpu(function: Callable[[str], object], text: str) -> float:
    """The least CPU time of a few runs, with the garbage collector off.

    A collection walks every object the process holds (in a test worker, everything earlier tests
    loaded), and the larger text's allocations set off more of them: their cost is the worker's
    heap, not the function's work, and it pushed a linear function past the bound. For the same
    reason none is forced before: a full collection in a worker that has loaded the model
    frameworks takes about a third of a second, which, twice for each of these 182 cases, was
    most of this file's time in the suite.
    """
    best = float("inf")
    gc.disable()
    try:
        for _ in range(3):
            started = time.process_time()
            function(text)
            best = min(best, time.process_time() - started)
    finally:
        gc.enable()
    return best


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_time_grows_linearly(function: str, shape: str) -> None:
    run = FUNCTIONS[function]
    make = HOSTILE[shape]
    small, large = make(SMALL), make(SMALL * GROWTH)
    floor = 0.002  # below this CPU time the clock's resolution, not the code, decides the ratio
    ratio = max(_cpu(run, large), floor) / max(_cpu(run, small), floor)
    assert ratio < BOUND, f"{function} on {shape}: {GROWTH}x the text took {ratio:.0f}x the time"

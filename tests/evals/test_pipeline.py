"""The evaluator pipeline: discovery, order, failures as entries, scoring, determinism."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from coordbench import plugins
from coordbench.errors import ConfigurationError
from coordbench.evals import (
    DEFAULT_WEIGHTS,
    EvalConfig,
    EvalContext,
    EvalPipeline,
    Evaluator,
    JudgeConfig,
    available_evaluators,
    combine,
    select_evaluators,
)
from coordbench.evals.base import on_this_thread
from coordbench.spans import StatusCode
from evals.traces import context, team_trace

BUILT_INS = ["coordination", "graph", "latency", "llm_judge", "protocol", "text"]


class Seen(BaseModel):
    earlier: list[str]


class Recorder(Evaluator):
    name = "recorder"
    tier = 3

    async def evaluate(self, ctx: EvalContext) -> Seen:
        return Seen(earlier=sorted(ctx.results))


class Hangs(Evaluator):
    name = "hangs"
    tier = 2

    async def evaluate(self, ctx: EvalContext) -> Seen:
        await asyncio.sleep(30)
        return Seen(earlier=[])


class Where(BaseModel):
    thread: str


class Computes(Evaluator):
    """CPU only: marked blocking, so it runs on a worker thread."""

    name = "computes"
    tier = 3
    blocking = True

    async def evaluate(self, ctx: EvalContext) -> Where:
        return Where(thread=threading.current_thread().name)


class OnTheLoop(Evaluator):
    name = "on_the_loop"
    tier = 3

    async def evaluate(self, ctx: EvalContext) -> Where:
        await asyncio.sleep(0)
        return Where(thread=threading.current_thread().name)


class WronglyBlocking(Evaluator):
    name = "wrongly_blocking"
    tier = 3
    blocking = True

    async def evaluate(self, ctx: EvalContext) -> Where:
        await asyncio.sleep(0)  # it awaits, so it is not blocking
        return Where(thread="")


class Grinds(Evaluator):
    """Computes for longer than its timeout, without ever awaiting."""

    name = "grinds"
    tier = 3
    blocking = True

    async def evaluate(self, ctx: EvalContext) -> Where:
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:  # CPU work, never yielding to the loop
            pass
        return Where(thread="")


async def test_blocking_evaluators_run_off_the_event_loop_and_can_time_out() -> None:
    loop_thread = threading.current_thread().name
    pipeline = EvalPipeline(
        EvalConfig(evaluator_timeout=0.2), evaluators=[Computes(), OnTheLoop(), WronglyBlocking(), Grinds()]
    )
    evaluation = await pipeline.run(context())
    assert evaluation.results.extra["on_the_loop"] == {"thread": loop_thread}
    assert evaluation.results.extra["computes"]["thread"] != loop_thread
    failures = {f.evaluator: f.error for f in evaluation.failures}
    assert failures == {
        "wrongly_blocking": "RuntimeError: evaluator 'wrongly_blocking' is marked blocking but awaited something",
        "grinds": "timed out after 0.2 s",  # a CPU-bound evaluator on the loop could not have been interrupted
    }
    assert {e.name for e in select_evaluators() if e.blocking} == {
        "coordination",
        "graph",
        "latency",
        "protocol",
        "text",
    }


async def test_on_this_thread_blocking_evaluators_run_here_and_an_overrun_is_still_a_timeout() -> None:
    # a process evaluating one trace at a time (coordbench evaluate, the online worker): no hand-over to a thread
    loop_thread = threading.current_thread().name
    pipeline = EvalPipeline(
        EvalConfig(evaluator_timeout=0.2), evaluators=[Computes(), OnTheLoop(), WronglyBlocking(), Grinds()]
    )
    with on_this_thread():
        evaluation = await pipeline.run(context())
    assert evaluation.results.extra["computes"] == {"thread": loop_thread}
    assert evaluation.results.extra["on_the_loop"] == {"thread": loop_thread}
    failures = {f.evaluator: f.error for f in evaluation.failures}
    assert failures == {
        "wrongly_blocking": "RuntimeError: evaluator 'wrongly_blocking' is marked blocking but awaited something",
        "grinds": "timed out after 0.2 s",  # timed when it ended: the same failure as on a worker thread
    }


def test_a_replay_evaluates_on_its_own_thread_and_gives_the_same_evaluation() -> None:
    from coordbench.evals.replay import replay, replay_sync

    spans = team_trace(c_status=StatusCode.ERROR)  # a failed call: attribution runs too
    trace_id = spans[0].trace_id
    threaded = asyncio.run(replay(trace_id, spans, judge=JudgeConfig()))  # a loop that may serve others: threads
    assert replay_sync(trace_id, spans, judge=JudgeConfig()).to_json() == threaded.to_json()


def test_built_ins_register_through_the_entry_point_group() -> None:
    assert sorted(available_evaluators()) == BUILT_INS
    order = [e.name for e in select_evaluators()]
    # tier 1 graph and protocol, tier 2 latency, tier 3 text, tier 4 coordination then the judge
    assert order == ["graph", "protocol", "latency", "text", "coordination", "llm_judge"]
    assert [e.name for e in select_evaluators(["text", "graph"])] == ["graph", "text"]
    assert [e.name for e in select_evaluators(disabled=["llm_judge", "text"])] == [
        "graph", "protocol", "latency", "coordination"
    ]  # fmt: skip
    with pytest.raises(ConfigurationError, match=r"unknown evaluator\(s\): nope; available: coordination, graph"):
        select_evaluators(["graph", "nope"])


def test_an_unknown_metric_is_refused_when_the_pipeline_is_made_not_when_it_runs() -> None:
    """It used to surface as a failed graph evaluator in every scenario, after the assessment had run."""
    for config in (EvalConfig(metrics=["density", "nope"]), EvalConfig(disabled_metrics=["nope"])):
        with pytest.raises(ConfigurationError, match=r"unknown metric\(s\): nope; available: "):
            EvalPipeline(config)
    assert EvalPipeline(EvalConfig(metrics=["nope"], evaluators=["protocol"])).evaluators  # no graph: no metrics


async def test_later_tiers_see_earlier_results_and_failures_are_entries(caplog: pytest.LogCaptureFixture) -> None:
    # Warm up first: the first graph evaluation in a process imports networkx's algorithms, and
    # blocking evaluators run on a thread where the 0.2 s timeout (meant for Hangs) holds too.
    await EvalPipeline(EvalConfig(), evaluators=select_evaluators(["graph", "protocol"])).run(context())
    config = EvalConfig(evaluator_timeout=0.2)
    pipeline = EvalPipeline(config, evaluators=[Recorder(), Hangs(), *select_evaluators(["graph", "protocol"])])
    with caplog.at_level(logging.WARNING):
        evaluation = await pipeline.run(context(config=config))
    assert evaluation.results.extra["recorder"] == {"earlier": ["graph", "protocol"]}
    assert [f.model_dump() for f in evaluation.failures] == [
        {"evaluator": "hangs", "tier": 2, "error": "timed out after 0.2 s"}
    ]
    assert "evaluator 'hangs' on scenario 's1' timed out" in caplog.text
    # the graph describes and has no score; protocol has no weight by default: nothing counted
    assert evaluation.score.overall == 0.0 and evaluation.score.weights == {}
    assert not evaluation.passed
    weighted = EvalConfig(evaluator_timeout=0.2, weights={"protocol": 0.5, "coordination": 0.5})
    pipeline = EvalPipeline(weighted, evaluators=[Hangs(), *select_evaluators(["protocol", "coordination"])])
    evaluation = await pipeline.run(context(config=weighted))
    # protocol 1.0 (every message succeeded) and coordination 1 - 0.14 * 9/19 (see test_judge), halved
    assert evaluation.score.overall == pytest.approx((1.0 + 1 - 0.14 * 9 / 19) / 2)
    assert evaluation.score.weights == {"coordination": 0.5, "protocol": 0.5}
    assert evaluation.passed


def test_combine_renormalises_over_evaluators_with_a_score() -> None:
    score = combine({"coordination": 1.0, "llm_judge": 0.5, "text": None, "latency": 0.1}, DEFAULT_WEIGHTS)
    # latency has no weight, text no score: (0.7 * 1 + 0.3 * 0.5) / 1.0
    assert score.overall == pytest.approx(0.85)
    assert sorted(score.components) == ["coordination", "llm_judge"]
    partial = combine({"coordination": None, "llm_judge": 0.5, "graph": 1.0}, DEFAULT_WEIGHTS)
    assert (partial.overall, partial.weights) == (0.5, {"llm_judge": 1.0})  # renormalised; graph has no weight
    assert sum(score.weights.values()) == pytest.approx(1.0)
    assert combine({}, DEFAULT_WEIGHTS).overall == 0.0
    with pytest.raises(ValueError, match="weight of 'graph' must be a finite number >= 0"):
        EvalConfig(weights={"graph": -1})
    with pytest.raises(ValueError, match="weight of 'graph' must be a finite number >= 0, got inf"):
        EvalConfig(weights={"graph": float("inf")})


def test_weights_near_the_float_maximum_give_the_same_score_as_small_ones() -> None:
    """Their sum overflowed to infinity, every weight normalised to 0, and the overall score to 0."""
    scores = {"graph": 0.4, "llm_judge": 0.625}
    small = combine(scores, {"graph": 1.0, "llm_judge": 1.0})
    huge = combine(scores, {"graph": 1e308, "llm_judge": 1e308})
    assert huge.overall == pytest.approx(small.overall) == pytest.approx(0.5125)
    assert huge.weights == pytest.approx({"graph": 0.5, "llm_judge": 0.5})


async def test_same_spans_give_byte_identical_results() -> None:
    pipeline = EvalPipeline(EvalConfig())
    first = await pipeline.run(context(team_trace()))
    second = await pipeline.run(context(list(reversed(team_trace()))))
    assert first.to_json() == second.to_json()
    assert first.failures == []


@pytest.mark.slow
async def test_third_party_evaluator_plugin(plugin_site: Path, monkeypatch: pytest.MonkeyPatch,
                                            caplog: pytest.LogCaptureFixture) -> None:  # fmt: skip
    monkeypatch.syspath_prepend(str(plugin_site))
    plugins.refresh()  # another test may have scanned this path already (and logged the warnings then)
    with caplog.at_level(logging.WARNING, logger="coordbench.plugins"):
        found = available_evaluators()
    assert {"busiest_agent", "broken_evaluator"} <= set(found)
    assert "not_an_evaluator" not in found
    assert "plugin 'not_an_evaluator' (coordbench_example_metric:HUB_RATIO) is not a valid" in caplog.text
    config = EvalConfig(evaluators=["graph", "protocol", "busiest_agent", "broken_evaluator"])
    evaluation = await EvalPipeline(config).run(context(config=config))
    # the plugin read the protocol evaluator's result: A received 1 message, B 1, C 1; ties by name
    assert evaluation.results.extra["busiest_agent"] == {"agent": "A", "requests": 1}
    assert [(f.evaluator, f.error) for f in evaluation.failures] == [
        ("broken_evaluator", "RuntimeError: this evaluator always fails")
    ]
    assert "graph" in evaluation.results

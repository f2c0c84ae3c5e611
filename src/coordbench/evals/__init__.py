"""Evaluators of a scenario's trace, the pipeline that runs them tier by tier, and scoring."""

from coordbench.evals.base import (
    ENTRY_POINT_GROUP,
    TIER_ANALYSIS,
    TIER_GRAPH,
    TIER_JUDGEMENT,
    TIER_TEXT,
    EvalContext,
    EvalScenario,
    Evaluator,
    TeamOutcome,
    available_evaluators,
    select_evaluators,
)
from coordbench.evals.calls import Call, calls_of
from coordbench.evals.config import DEFAULT_WEIGHTS, EvalConfig, JudgeConfig
from coordbench.evals.coordination import CoordinationEvaluator, CoordinationResult, Part, assess_coordination
from coordbench.evals.evaluation import EvaluatorFailure, EvaluatorResults, ScenarioEvaluation, TraceEvaluation
from coordbench.evals.graph import GraphEvaluator
from coordbench.evals.judge import JudgeResult, LLMJudgeEvaluator, rule_judgment
from coordbench.evals.latency import LatencyEvaluator, LatencyResult
from coordbench.evals.pipeline import EvalPipeline, run_evaluator
from coordbench.evals.protocol import ProtocolEvaluator, ProtocolResult
from coordbench.evals.scoring import Score, combine
from coordbench.evals.text import TextEvaluator, TextResult

__all__ = [
    "DEFAULT_WEIGHTS",
    "ENTRY_POINT_GROUP",
    "TIER_ANALYSIS",
    "TIER_GRAPH",
    "TIER_JUDGEMENT",
    "TIER_TEXT",
    "Call",
    "CoordinationEvaluator",
    "CoordinationResult",
    "EvalConfig",
    "EvalContext",
    "EvalPipeline",
    "EvalScenario",
    "Evaluator",
    "EvaluatorFailure",
    "EvaluatorResults",
    "GraphEvaluator",
    "JudgeConfig",
    "JudgeResult",
    "LLMJudgeEvaluator",
    "LatencyEvaluator",
    "LatencyResult",
    "Part",
    "ProtocolEvaluator",
    "ProtocolResult",
    "ScenarioEvaluation",
    "Score",
    "TeamOutcome",
    "TextEvaluator",
    "TextResult",
    "TraceEvaluation",
    "assess_coordination",
    "available_evaluators",
    "calls_of",
    "combine",
    "rule_judgment",
    "run_evaluator",
    "select_evaluators",
]

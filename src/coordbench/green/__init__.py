"""The green assessor: an A2A agent that drives participants, collects their traces and scores coordination."""

from coordbench.green.assessment import Assessment
from coordbench.green.executor import GreenExecutor
from coordbench.green.request import (
    SAMPLE_REQUEST,
    AssessmentConfig,
    AssessmentRequest,
    RequestError,
    ScenarioConfig,
    default_scenarios,
    parse_request,
)
from coordbench.green.server import DEFAULT_NAME, GreenSettings, create_green_app, load_green_settings

__all__ = [
    "DEFAULT_NAME",
    "SAMPLE_REQUEST",
    "Assessment",
    "AssessmentConfig",
    "AssessmentRequest",
    "GreenExecutor",
    "GreenSettings",
    "RequestError",
    "ScenarioConfig",
    "create_green_app",
    "default_scenarios",
    "load_green_settings",
    "parse_request",
]

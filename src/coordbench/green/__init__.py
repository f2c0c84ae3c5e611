"""The green assessor: an A2A agent that drives participants, collects their traces and scores coordination.

Names are imported on first use (:mod:`coordbench.lazy`): validating a config does not import the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coordbench.lazy import lazy_exports

if TYPE_CHECKING:
    from coordbench.green.assessment import Assessment
    from coordbench.green.executor import GreenExecutor
    from coordbench.green.request import (
        SAMPLE_REQUEST,
        AssessmentRequest,
        RequestError,
        parse_request,
    )
    from coordbench.green.server import create_green_app
    from coordbench.green.settings import DEFAULT_NAME, GreenSettings, load_green_settings

__all__ = [
    "DEFAULT_NAME",
    "SAMPLE_REQUEST",
    "Assessment",
    "AssessmentRequest",
    "GreenExecutor",
    "GreenSettings",
    "RequestError",
    "create_green_app",
    "load_green_settings",
    "parse_request",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "Assessment": "assessment",
        "GreenExecutor": "executor",
        "SAMPLE_REQUEST": "request",
        "AssessmentRequest": "request",
        "RequestError": "request",
        "parse_request": "request",
        "DEFAULT_NAME": "settings",
        "GreenSettings": "settings",
        "create_green_app": "server",
        "load_green_settings": "settings",
    },
)

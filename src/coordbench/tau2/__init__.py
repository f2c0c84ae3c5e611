"""tau2-bench and A2A: tau2 evaluating remote A2A agents, and tau2 evaluations offered over A2A.

Needs the extra ``coordbench[tau2]`` (and ``coordbench[adk]`` for the evaluation service).
The modules that import tau2 are imported on use: ``coordbench.tau2.agent`` (the
``a2a_agent``), ``coordbench.tau2.translate`` (tau2 messages to A2A parts and back),
``coordbench.tau2.cli`` (``coordbench tau2 ...``) and ``coordbench.tau2.service`` (the ADK agent).
"""

import os

# litellm (imported by tau2 and by ADK's LiteLlm) fetches its price map from the internet at import
# unless told to use its bundled copy; every module of this package is imported after this line
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coordbench.tau2.config import A2AConfig

__all__ = ["A2AConfig"]


def __getattr__(name: str) -> Any:
    if name != "A2AConfig":
        raise AttributeError(f"module 'coordbench.tau2' has no attribute {name!r}")
    from coordbench.tau2.config import A2AConfig

    return A2AConfig

"""Failure attribution: which agent, and which step, made a run fail, with the chain of evidence.

Evidence first: the rules (:mod:`.rules`) read the trace as a conversation (:mod:`.said`) and
propose findings; :mod:`.rank` orders causes before symptoms and ranks the candidates. An
optional model ranks only what the rules proposed. ``docs/attribution.md`` has every rule, its
evidence, its strength and the measured accuracy.
"""

from coordbench.evals.attribution.attribute import attribute, attribute_trace
from coordbench.evals.attribution.model import Attribution, Candidate, Link

__all__ = ["Attribution", "Candidate", "Link", "attribute", "attribute_trace"]

"""The parallelism part: independent calls of a request run one after another."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from coordbench.evals.coordination.model import NOISE_FLOOR, PROCESS_WEIGHTS, Part, call_ids, call_order, floored
from coordbench.evals.dependency import dependencies_of
from coordbench.evals.evidence import COMPARED, TeamCall, TeamTrace, serialisation


def _serialised(trace: TeamTrace, requests: Iterable[str]) -> tuple[int, float, list[TeamCall], float]:
    """Work calls of these requests, their serialisation, the calls behind it, and the judgements' confidence.

    The confidence is the mean over the pairs compared (0 for a pair whose dependency could not be told).

    A call's serialisation is the largest :func:`~coordbench.evals.evidence.serialisation`
    with any call of the same request that started before it and that it does not depend
    on, directly, through its caller's own steps or through other calls
    (:class:`~coordbench.evals.dependency.Dependencies`; 0 for the first call). A relay's
    own requests are left out: the call into the relay
    stands for the work it passed on.
    """
    count, serial = 0, 0.0
    behind: list[TeamCall] = []
    trust, judged = 0.0, 0
    relayed = trace.relay_requests
    for request in requests:
        if request in relayed:
            continue
        work = sorted((c for c in trace.by_request.get(request, []) if c.work), key=call_order)
        dependencies = dependencies_of(trace, request)
        for i, b in enumerate(work):
            count += 1
            worst = 0.0
            for a in reversed(work[max(0, i - COMPARED) : i]):  # the latest first: one after another shows at once
                value, confidence = serialisation(a, b, dependencies.of)
                trust += confidence
                judged += 1
                if value is not None and value > worst:
                    worst = value
                    if worst >= 1.0:
                        break
            serial += worst
            if worst > 0:
                behind.append(b)
    return count, serial, sorted(behind, key=call_order), (trust / judged if judged else 1.0)


def parallelism_part(trace: TeamTrace) -> Part:
    """``1 - max(0, s - 0.05) / 0.95``: independent calls of a request run one after another."""
    weight = PROCESS_WEIGHTS["parallelism"]
    count, serial, behind, confidence = _serialised(trace, sorted(trace.by_request))
    share = serial / count if count else 0.0
    value = 1.0 - floored(share)
    figures: dict[str, float | int] = {"calls": count, "serialisation": serial}
    if value >= 1.0:
        formula = (
            f"1: no call waited for one it could have run beside (serialisation {share:.3f}, within the "
            f"{NOISE_FLOOR} noise floor)"
            if serial
            else "1: no call waited for one it could have run beside"
        )
        return Part(value=1.0, weight=weight, confidence=confidence, formula=formula, figures=figures)
    callers = Counter(c.call.caller for c in behind)
    return Part(
        value=value,
        weight=weight,
        confidence=confidence,
        formula=f"1 - max(0, {serial:.3f} serialised / {count} calls - {NOISE_FLOOR}) / {1 - NOISE_FLOOR:g}"
        f" = {value:.3f}",
        figures=figures,
        fired=["serialised_work"],
        evidence=[
            f"calls that waited for others they did not depend on (serialisation {serial:.2f} over {count} calls): "
            + ", ".join(f"{caller} ran {n} call(s) one after another" for caller, n in sorted(callers.items()))
        ],
        agents=sorted(callers),
        calls=call_ids(behind),
    )

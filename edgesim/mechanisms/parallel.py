"""Phase II in parallel (``mechanism.phase2_schedule``): run problems in lockstep.

A mechanism's Phase II is a set of independent problems (FFL: one per agent;
DP-FFL: one per cluster; vcg-federated: one training per agent), each a
sub-generator yielding :class:`~edgesim.mechanisms.protocol.Gather` steps.
``sequential`` runs them one after another: sum_k T2_k round trips.
``parallel`` (:func:`lockstep`) serves round t of every unfinished problem in
one :class:`~edgesim.mechanisms.protocol.GatherMany` exchange: each agent
receives the iterates it is needed at and replies with that many reports, so
bytes stay the same and round trips fall to max_k T2_k. Each problem sees
exactly the replies it would have seen on its own, so on a lossless network
the payments and the model are bit for bit the sequential ones (as long as a
problem draws no randomness of the server's: DP-FFL's noise is drawn in
another order, the same distribution).
"""

from __future__ import annotations

from edgesim.mechanisms.protocol import GatherMany

SCHEDULES = ("sequential", "parallel")
#: The built-in mechanisms with Phase II problems (``phase2_schedule`` applies to them).
HAS_PHASE2 = ("ffl", "dp-ffl", "vcg-federated")


def lockstep(problems: list, phase: str = "phase2"):
    """Run the sub-generators ``problems`` together; returns their return values, in order.

    A sub-generator (``yield from``): each exchange is one GatherMany of the
    next step of every unfinished problem; a problem that returns drops out.
    """
    results: list = [None] * len(problems)
    pending = {}
    for i, gen in enumerate(problems):
        try:
            pending[i] = next(gen)
        except StopIteration as stop:
            results[i] = stop.value
    while pending:
        order = list(pending)
        replies = yield GatherMany(tuple(pending[i] for i in order), phase=phase)
        for i, r in zip(order, replies, strict=True):
            try:
                pending[i] = problems[i].send(r)
            except StopIteration as stop:
                results[i] = stop.value
                del pending[i]
    return results


def run_problems(problems: list, schedule: str, phase: str = "phase2"):
    """Run ``problems`` (sub-generators) by ``schedule``; returns their return values, in order."""
    if schedule == "parallel":
        return (yield from lockstep(problems, phase))
    results = []
    for gen in problems:
        results.append((yield from gen))
    return results

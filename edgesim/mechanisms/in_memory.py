"""The in-memory driver (fidelity ``none``): every step answered at once, no network."""

from __future__ import annotations

import numpy as np

from edgesim import progress
from edgesim.arrays import total
from edgesim.mechanisms.driver import AgentSide, Counters
from edgesim.mechanisms.protocol import Gather, GatherMany, Replies


def drive(mechanism_gen, answer):
    """Run a mechanism generator to completion, answering each step with ``answer(step)``.

    Returns the mechanism's :class:`~edgesim.mechanisms.base.Outcome`.
    """
    try:
        step = next(mechanism_gen)
        while True:
            step = mechanism_gen.send(answer(step))  # no reference to the replies kept
    except StopIteration as stop:
        return stop.value


def run_in_memory(mechanism_gen, agent_side: AgentSide, K: int):
    """Answer every step at once (fidelity ``none``); returns (Outcome, Counters).

    Every recipient replies, unless its strategy withholds the reply (then it is
    missing, as a lost one); counts one downlink message per recipient and one
    uplink message per reply, with the sizes of :mod:`edgesim.mechanisms.protocol`
    (``local_model`` reads are evaluation only and are not counted).
    """
    counters = Counters()
    everyone = np.arange(K)
    everyone.flags.writeable = False  # (the strategies' positions in it are kept: Population)

    def answer(step: Gather | GatherMany) -> Replies | list[Replies]:
        if isinstance(step, GatherMany):  # one message each way per recipient
            agents, each = step.recipients(K)
            down, up, _ = agent_side.many_bytes(step, agents, each)
            counters.rounds[step.phase] = counters.rounds.get(step.phase, 0) + 1
            counters.messages_down += agents.size
            counters.messages_up += agents.size
            counters.transmissions_up += agents.size
            counters.bytes_down += int(down.sum())
            counters.bytes_up += int(up.sum())
            progress.update(phase=step.phase, round=counters.rounds[step.phase])
            return agent_side.answer_many(step, agents, each)
        agents = everyone if step.agents is None else np.asarray(step.agents)
        silent = agent_side.withheld(step, agents)
        replied = agents if silent is None else agents[~silent]
        if step.ask.sends_messages:
            m = int(agents.size)
            counters.rounds[step.phase] = counters.rounds.get(step.phase, 0) + 1
            counters.messages_down += m
            counters.messages_up += replied.size
            counters.transmissions_up += replied.size
            counters.bytes_down += m * agent_side.download_bytes(step)
            counters.bytes_up += total(agent_side.upload_bytes(step, replied))
            progress.update(
                phase=step.phase,
                round=counters.rounds[step.phase],
                problem=step.problem if step.problem >= 0 else None,
            )
        replies = agent_side.answer(step, replied)
        if silent is not None:  # withheld replies are missing, as if lost
            replies.missing = agents[silent]
        return replies

    outcome = drive(mechanism_gen, answer)
    return outcome, counters

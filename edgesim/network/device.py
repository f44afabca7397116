"""The device process: one long-lived SimPy process per device.

In the ``events`` fidelity every delivered message resumes its device's
process at the message's instant: the cost the fidelity stands for, one
resume per message. What happens to each message (losses, attempts,
compute time, whether the device is online, its share of a shared medium)
was decided by the server when it planned the exchange
(:class:`~edgesim.network.server.Plan`), so the reply's landing instant is
known on arrival and the server's walk lands it.

The device waits on one *permanent* inbox event that never triggers: the
server wakes it by moving its resume callback onto the event of the
message's arrival instant, which it shares with every other message arriving
then (:meth:`~edgesim.network.server.NetworkServer._walk`). A message is
thus no new SimPy event of its own, and the device needs no fresh inbox.
"""

from __future__ import annotations

import simpy


class Device:
    """Device ``i`` (the mechanism's agent index): a process woken by each message it receives."""

    def __init__(self, env: simpy.Environment, i: int):
        self.env = env
        self.i = i
        self.inbox = simpy.Event(env)  # never triggered: see the module docstring
        self.process = env.process(self.run())

    def run(self):
        """The device's life: wake at each message, forever (SimPy generator)."""
        inbox = self.inbox
        while True:
            yield inbox

"""The device process: one long-lived SimPy process per device.

A device waits for the server's message, computes, and sends its reply over
its access point's uplink. What happens to each message (losses, attempts,
compute time, whether the device is online) was drawn by the server when
it planned the exchange (:class:`~edgesim.network.server.Plan`); the device
process turns that plan into time: it holds the shared medium, waits, and
tells the server when its reply has arrived or its sender gave up.

The device waits on one *permanent* inbox event that never triggers: the
server wakes it by moving its resume callback onto the event of the
message's arrival instant, which it shares with every other message arriving
then (:meth:`~edgesim.network.server.NetworkServer._walk`). A message is
thus no new SimPy event of its own, and the device needs no fresh inbox.

When every cell is dedicated the wake changes nothing (the server's walk
lands the reply); it is kept so that in ``events`` each delivered message
still resumes its device's process, one resume per message, the cost the
fidelity stands for. Without it ``events`` on independent links would be
``batched`` walked instant by instant.
"""

from __future__ import annotations

import simpy


class Device:
    """Device ``i`` (the mechanism's agent index) attached to uplink medium ``access``."""

    def __init__(self, env: simpy.Environment, server, i: int, access):
        self.env = env
        self.server = server
        self.i = i
        self.access = access
        self.inbox = simpy.Event(env)  # never triggered: see the module docstring
        self.process = env.process(self.run())

    def run(self):
        """The device's life: receive, compute, reply; forever (SimPy generator)."""
        env, server, i, inbox = self.env, self.server, self.i, self.inbox
        while True:
            try:
                plan = yield inbox
                if server.dedicated or plan is not server.plan:
                    # Independent channels everywhere: nothing to contend for, so the
                    # reply's landing instant is known on arrival and the server's walk
                    # holds it. (One shared cell is enough for every device to send.)
                    continue
                j = plan.slot_list[i]
                if not plan.sending_list[j]:
                    server.idle(i)
                    continue  # offline when it would have replied
                yield env.timeout(int(plan.compute_ns[j]))
                u = plan.up_slot[j]
                up = plan.up
                attempts, delivered = int(up.attempts[u]), bool(up.delivered[u])
                airtime = int(up.airtime_ns[u])
                for a in range(attempts):
                    yield from self.access.transmit(airtime)
                    last_ok = delivered and a == attempts - 1
                    yield env.timeout(
                        int(up.latency_ns[u] + plan.up_backhaul_ns[u])
                        if last_ok
                        else int(up.rto_ns[u])
                    )
                server.resolve(i, plan, j)
            except simpy.Interrupt:
                pass  # cut by the deadline: drop this round's work

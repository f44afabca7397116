"""Deviation families: registered strategies that depart from the suggested protocol.

The paper's strategy space A_k is any message in any iteration (Faithful
Federated Learning, Sec. II, "Strategy space"). Each family here is a
registered strategy (:func:`edgesim.agents.register_strategy`) with named
parameters and documented ranges, written against what a device sees
(:mod:`edgesim.device_view`):

- :mod:`edgesim.deviations.reports`: misreports of the values asked for
  (amplify restricted to a phase or to whose payment problem, pretend-data,
  pull, loss-misreport, free-ride);
- :mod:`edgesim.deviations.network_aware`: deviations only a network allows
  (withhold a reply, answer late);
- :mod:`edgesim.deviations.identities`: who an agent claims to be (claimed
  sample counts, Sybil identities).

Importing this package registers them; :data:`BUILTIN_STRATEGIES` lists every
strategy edgesim itself registers.
"""

from __future__ import annotations

from edgesim.agents import STRATEGIES
from edgesim.deviations import identities, network_aware, reports

#: The strategy names edgesim registers (the agents' four and the families here).
BUILTIN_STRATEGIES = tuple(sorted(STRATEGIES))

__all__ = ["BUILTIN_STRATEGIES", "identities", "network_aware", "reports"]

"""The SimPy edge network: links, topology, devices, availability, secure aggregation, server.

The only package that knows simulated time. Times inside the simulator are
integer nanoseconds (``NS_PER_S``), so sums of delays are exact and the
``events`` and ``batched`` fidelities agree bit for bit.
"""

NS_PER_S = 1_000_000_000

"""The SimPy edge network: links, topology, devices, availability, secure aggregation, server.

The only package that knows simulated time. Times inside the simulator are
integer nanoseconds (``NS_PER_S``), so sums of delays are exact and the
``events`` and ``batched`` fidelities agree bit for bit.
"""

import numpy as np

NS_PER_S = 1_000_000_000


def to_ns(seconds):
    """Return ``seconds`` rounded to the nearest integer nanosecond: an int for a scalar, else int64.

    Every duration enters the simulator through here, rounded once, so that
    later sums of nanoseconds are exact.
    """
    ns = np.rint(np.asarray(seconds, dtype=np.float64) * NS_PER_S).astype(np.int64)
    return int(ns) if ns.ndim == 0 else ns

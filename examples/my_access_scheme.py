"""An access scheme of your own: one sender at a time, smallest message first, after a grant delay.

A cell's scheduler is a subclass of ``edgesim.network.access.AccessScheme``
registered under a name (``register_access``), which scenarios then take as
``network.radio.access``. This one is a non-preemptive shortest-job-first
scheduler: a message may go once its scheduling grant has come (``grant_s``
after it reaches the sender's radio, as a cellular uplink waits for its
scheduling request to be granted); it then holds the cell's whole channel for
its work (its airtime alone times its attempts), and when the channel frees,
the smallest message that may go goes next (ties: the one ready first). Its
option ``grant_s`` is declared with ``edgesim.config.option``, so a scenario
sets it in the sub-table ``[network.radio.shortest-first]``. The scheme
gives the closed form (``through_ns``), so it runs in both fidelities.

``edgesim.check_access`` first checks it (times int64 and aligned, never
before arrival plus work, the events and batched fidelities agree). Then the
same FedAvg rounds run on the built-in ``tdma`` (first come, one at a time)
and on the new scheme. In a FedAvg round every message has the model's size,
so without a grant delay smallest-first serves in arrival order, as TDMA does:
the times must agree to the nanosecond. With a grant delay g, every message
waits g and then goes as before, so each round takes 2 g longer (one grant
each way). It prints the check's report and the three simulated times.

    python examples/my_access_scheme.py [grant_ms]      # default 4 ms
"""

from __future__ import annotations

import heapq
import sys
from dataclasses import dataclass

import numpy as np

import edgesim
from edgesim.config import option
from edgesim.network import to_ns
from edgesim.network.access import AccessScheme, register_access

NAME = "shortest-first"


@dataclass(frozen=True)
class ShortestFirstOptions:
    """The scheme's own option: the ``[network.radio.shortest-first]`` sub-table."""

    grant_s: float = option(
        0.0, "delay from a message's arrival to its grant, when it may go", unit="s", ge=0.0
    )


class ShortestFirst(AccessScheme):
    """Non-preemptive shortest-job-first on the whole channel, each message after its grant."""

    options = ShortestFirstOptions

    def through_ns(
        self, direction, cell, devices, sizes, arrive_ns, transfers, rng, horizon_ns=None
    ):
        """Return when each message has left the channel (int64 ns, aligned with the messages)."""
        work = np.asarray(transfers.attempts * transfers.airtime_ns, dtype=np.int64)
        ready = np.asarray(arrive_ns, dtype=np.int64) + to_ns(self.settings.grant_s)
        done = np.empty(ready.size, dtype=np.int64)
        for c in np.unique(cell):
            mine = np.flatnonzero(cell == c)
            queue = list(mine[np.argsort(ready[mine], kind="stable")])[::-1]  # pop: next ready
            waiting: list[tuple[int, int, int]] = []  # (size, ready, message) that may go
            now = 0
            while queue or waiting:
                if not waiting:  # the channel idles until the next grant
                    now = max(now, int(ready[queue[-1]]))
                while queue and ready[queue[-1]] <= now:
                    i = queue.pop()
                    heapq.heappush(waiting, (int(sizes[i]), int(ready[i]), int(i)))
                _, _, i = heapq.heappop(waiting)
                now += int(work[i])
                done[i] = now
        return done


def scenario(access: str, grant_s: float | None = None) -> dict:
    """Return the example's scenario: FedAvg, 6 devices of unequal data in one cell of ``access``."""
    radio = {"access": access, "bandwidth_bps": 10e6, "latency_s": 0.001}
    if grant_s is not None:
        radio[access] = {"grant_s": grant_s}  # the scheme's sub-table
    return {
        "seed": 7,
        "data": {
            "source": "synthetic",
            "samples": 300,
            "features": 20,
            "partition": {"kind": "quantity"},
        },
        "model": {"kind": "ridge"},
        "agents": {"count": 6},
        "mechanism": {"kind": "fedavg", "phase1_rounds": 10},
        "network": {
            "fidelity": "batched",
            "radio": radio,
            "backhaul": {"hops": 0},
            "compute": {"model": "per-sample", "seconds": 0.002, "per_sample_s": 1e-4},
        },
        "output": {"local_baseline": False},
    }


def main(argv: list[str] | None = None) -> dict:
    """Check, register and run the scheme beside TDMA; print and return the report and results."""
    argv = sys.argv[1:] if argv is None else argv
    grant_s = float(argv[0]) / 1000 if argv else 0.004
    report = edgesim.check_access(ShortestFirst)
    print(f"check_access: {report['access']} passed")
    register_access(NAME, ShortestFirst)
    out = {
        "check": report,
        "tdma": edgesim.run(scenario("tdma")),
        "no-grant": edgesim.run(scenario(NAME)),
        "grant": edgesim.run(scenario(NAME, grant_s)),
    }
    rounds = out["tdma"].iterations.phase1
    for label, res in list(out.items())[1:]:
        print(f"{label:9s} {rounds} rounds: {res.sim_time_s.total:.6f} s")
    return out


if __name__ == "__main__":
    main()

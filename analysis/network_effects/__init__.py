"""Network effects on FFL: dropouts, ARQ, churn with deadlines and a shared access point.

Issue 5, deliverable 7. How the edge network changes FFL's payment accuracy
(``payment_error_max`` = max_k |P_k - P_k^VCG| against exact VCG),
faithfulness (the gain of an agent that amplifies its gradients) and time to
finish (``sim_time_s.total``), and where the mechanism's guarantees stop
holding. Four studies, each on a shipped scenario with overrides:

1. Loss and ARQ (``comm-vs-k`` at K = 50, n = 500, FFL, Theorem 1's T1 and
   T2 with ``phase2_check = false``, so that every Phase II problem runs exactly
   Theorem 1's T2 rounds; the check was switched off because, with lost reports,
   it used to never fire and ran problems to ``phase2_max_rounds``, whereas
   edgesim now ends such a problem after T2 rounds). Bernoulli
   loss q per transmission, ARQ cap R retransmissions. Closed forms: uplink
   transmissions per message (1 - q^(R+1)) / (1 - q) (capped ARQ, docs/network.md
   "Network defaults"); a request gets no reply when its downlink or its
   uplink is dropped after R + 1 tries: 1 - (1 - q^(R+1))^2.
2. Churn and deadlines (``churn-deadline``, FFL): Markov on/off devices,
   shifted-exponential compute (shift s_c + Exp(mean m)); the round closes at
   the deadline d. Closed form: a request that reached an online device is
   answered in time with probability 1 - exp(-(d - s)/m), s = the fixed
   delays (radio and backhaul latency and airtime both ways, compute shift).
3. A shared access point (``lossy-wifi``, events fidelity, 20 devices,
   Gilbert-Elliott loss): OFDMA with a block per device, OFDMA with 4
   blocks, TDMA and processor sharing, at the scenario's 54 Mbit/s and in a
   congested 1 Mbit/s cell. The medium changes only timing: under wait-all
   the same replies arrive, so payments are identical. Serialising the
   uploads of a round costs at most (transmissions - 1) airtimes per round.
4. Faithfulness: agent 0 truthful or amplifying (gamma = 2) under FedAvg and
   FFL, on an ideal link, with loss (with and without ARQ) and with churn
   (wait-all and a deadline); gain = J_0(truthful) - J_0(amplify), J_0 =
   payment + F_0(w*) (Definition 1). Positive gain = manipulation pays.

Where the guarantees stop: FFL's payments are sums over rounds of the others'
reported gradients, and its Phase II assumes every agent reports in every
round. A missing reply is reweighted away, which leaves an error of the order
of one agent's gradient in a sum that should be O(p_k): payment errors grow
from below epsilon to orders of magnitude above it as soon as replies go
missing (loss without ARQ, churn, deadline cuts), and the amplifier's gain is
then no longer bounded by epsilon. Panel (i) shows it per agent.

Sizes. ``--quick``: 4 loss values x 3 ARQ caps, 5 deadlines, lossy-wifi with
40 Phase I rounds; one seed (about 40 s on two cores). Full: 8 x 4 loss grid
and 3 seeds, 10 deadlines, the scenario's 200 rounds (a few minutes).

    PYTHONPATH=. python -m analysis.network_effects [--quick] [--out DIR] [--workers N]

Modules: ``base`` (sizes, sweep helper), one per study (``loss``, ``churn``,
``access``, ``faithfulness``), ``rows`` (the CSV rows) and ``figure`` (one
function per panel).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from analysis import common

from .access import access_study
from .base import SIZES
from .churn import deadline_study
from .faithfulness import faith_study
from .figure import draw
from .loss import loss_study
from .rows import build

__all__ = ["STEM", "main"]

STEM = "network_effects"


def main(argv: Sequence[str] | None = None) -> list[Path]:
    """Run the four studies, draw, write ``network_effects.png`` and ``.csv``; returns their paths."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    size = SIZES[args.quick]
    loss = loss_study(args, size)
    dl, tight, shift, mean_s = deadline_study(args, size)
    access = access_study(args, size)
    faith = faith_study(args)
    # Theorem 1's payment accuracy the loss study's runs were given (churn-deadline runs fixed
    # T1, T2 instead).
    (eps,) = {float(r["epsilon"]) for r in loss}
    rows, meta = build(loss, dl, tight, shift, mean_s, access, faith, eps)
    csv = common.write_csv(args.out / f"{STEM}.csv", rows)
    png = common.save(draw(rows, meta, args.quick), args.out, STEM)
    return [png, csv]

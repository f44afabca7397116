"""Lossy faithfulness: what keeps FFL's payments within epsilon on lossy links, and at what price.

Issue 12, item 3. network_effects found that FFL's payment error explodes
once replies go missing, because the server reweights the replies it got
(``mechanism.missing = "reweight"``). This study sets the repair policies
(``edgesim/mechanisms/repair.py``) and the Phase II schedules
(``edgesim/mechanisms/parallel.py``) side by side:

- policies: ``reweight``; ``retry`` with ``mechanism.retry_max`` = 3 (the
  default) and 20 ("retry 3", "retry 20": re-ask only the missing agents at
  the same model, then reweight); ``stale`` (each missing agent's latest
  earlier report);
- schedules: ``sequential`` (sum_k T2_k Phase II round trips) and
  ``parallel`` (max_k T2_k round trips, same bytes);

and measures the payment error against exact VCG (``payment_error_max`` =
max_k |P_k - P_k^VCG|), the simulated time to finish (``sim_time_s.total``),
the messages (down + up) and the gain of agent 0 when it amplifies its
gradients by gamma = 2 (as in network_effects' faithfulness study: gain =
J_0(truthful) - J_0(amplify), J_0 = payment + F_0(w*); > 0: amplifying
pays). Same seed for both strategies.

Grid (full size):

1. The comm-vs-k cell as network_effects uses it (K = 50, n = 500, FFL,
   Theorem 1's T1 and T2, ``phase2_check = false``, exact VCG, epsilon =
   0.1), q in {0, 0.05, 0.1, 0.2, 0.3, 0.5}, seeds 0-2, under three loss
   conditions: Bernoulli loss with R = 3 ARQ retransmissions and without
   ARQ (R = 0), and Gilbert-Elliott loss with R = 3, parametrised to the
   same mean loss: h = 0 (the bad state loses everything), k = 1, r = 0.25
   (bursts of 4 transmissions on average) and p = q r / (1 - q), so the
   stationary loss p / (p + r) is q. Panels (a)-(l), (s) and (t).
2. The acceptance point, ten seeds (0-9), truthful agents: Bernoulli q =
   0.1, R = 3, every policy and schedule, against the lossless run of each
   seed (q = 0); the claim is that ``retry`` (retry_max 3) keeps the error
   within that run's error + epsilon in at least 9 of 10 seeds. Panels (q)
   and (r) (its time and messages against reweight).
3. ``churn-deadline`` (K = 100, Markov churn, shifted-exponential compute)
   at its own 0.15 s deadline and under wait-all, seeds 0-1. Panels (m)-(p).

``--quick``: K = 20 (n = 200), q in {0, 0.1, 0.3}, seed 0; the acceptance
point with ten seeds at K = 20; churn-deadline at K = 20 with 40 Phase I
rounds and without retry 20 (about 50 s in one process). The full size
takes 12 to 15 min in one process (703 to 912 s on the 2-core machine beside other jobs).

    PYTHONPATH=. python -m analysis.lossy_faithfulness [--quick] [--out DIR] [--workers N]

Modules: ``base`` (sizes, policies, one record per run), ``study`` (the
sweeps), ``rows`` (the CSV rows) and ``figure`` (the panels).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from analysis import common

from .base import SIZES
from .figure import draw
from .rows import build
from .study import accept_study, cell_study, churn_study

__all__ = ["STEM", "main"]

STEM = "lossy_faithfulness"


def main(argv: Sequence[str] | None = None) -> list[Path]:
    """Run the three studies, draw, write ``lossy_faithfulness.png`` and ``.csv``; returns their paths."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    size = SIZES[args.quick]
    rows = build(cell_study(args, size), accept_study(args, size), churn_study(args, size))
    csv = common.write_csv(args.out / f"{STEM}.csv", rows)
    png = common.save(draw(rows, args.quick), args.out, STEM)
    return [png, csv]

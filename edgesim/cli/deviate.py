"""``edgesim deviate``: search an agent's (or a coalition's) best deviation within a family.

``edgesim deviate SCENARIO --agent 3 [--agent 4] --family pull --param lam=-2:2 -o DIR``
runs the search of :func:`edgesim.best_response.search` on the scenario (its
``[best_response]`` table, changed by the options) and writes into DIR:
``deviate.json`` (the search's result beside the resolved scenario),
``deviate.png`` (the objective over the parameters: a curve for one, a heat map
for two, one panel per parameter for more; with the truthful level and the
lowest objective the theory's bound allows) and ``deviate.txt`` (the summary
it prints).
"""

from __future__ import annotations

from pathlib import Path

from edgesim.cli.common import fail_input, failure_code
from edgesim.errors import ScenarioError, ScenarioErrors

FILES = ("deviate.json", "deviate.png", "deviate.txt")


def cmd_deviate(args) -> int:
    """``edgesim deviate``: run the search, print its summary, write the JSON, plot and summary."""
    from edgesim import scenario as scn
    from edgesim.best_response import configured, search
    from edgesim.output import clean, to_json
    from edgesim.reference import optimum
    from edgesim.simulate import Simulation
    from edgesim.sweeps import write_atomic
    from edgesim.version import __version__

    try:
        changes = _changes(args)
        sc = configured(scn.load(args.scenario, args.set or [], args.seed), **changes)
    except ScenarioErrors as errs:
        return fail_input(errs.errors)
    except ScenarioError as err:
        return fail_input([err])
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        return fail_input([ScenarioError("-o", f"{out} is a file; give a folder")])
    try:
        found = search(Simulation(sc), sc.best_response, optimum=optimum)
    except Exception as err:  # bad input found while running (2), or a failed run (1)
        return failure_code(err, "deviate", args.debug)
    result = clean(
        {
            "edgesim_version": __version__,
            "name": sc.name,
            "mechanism": sc.mechanism.kind,
            "scenario": sc.to_dict(),
            "best_response": found,
        }
    )
    text = summary(result["best_response"])
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(str(out / FILES[0]), to_json(result))
        write_atomic(str(out / FILES[1]), plot_png(result["best_response"]))
        write_atomic(str(out / FILES[2]), text + "\n")
    except OSError as err:
        return fail_input([ScenarioError("-o", f"cannot write into {out}: {err}")])
    if not args.quiet:
        print(text)
        print(f"  written to {out}/: {', '.join(FILES)}")
    return 0


def _changes(args) -> dict:
    """Return the ``[best_response]`` changes the options ask for (raises ScenarioError)."""
    from edgesim.scenario.keys import parse_override

    parameters = {}
    for text in args.param or []:
        name, eq, bracket = text.partition("=")
        ends = bracket.split(":")
        try:
            lo, hi = (float(x) for x in ends)
        except ValueError:
            lo = hi = None
        if not eq or not name.strip() or len(ends) != 2 or lo is None:
            raise ScenarioError("--param", f"expected NAME=LO:HI (e.g. lam=-2:2), got {text!r}")
        parameters[name.strip()] = [lo, hi]
    fixed = {}
    for text in args.fix or []:
        try:
            name, value = parse_override(text)
        except ScenarioError:
            raise ScenarioError("--fix", f"expected NAME=VALUE, got {text!r}") from None
        fixed[name] = value
    return {
        "agent": args.agent if args.agent is None or len(args.agent) > 1 else args.agent[0],
        "family": args.family,
        "parameters": parameters or None,
        "fixed": fixed or None,
        "objective": args.objective,
        "budget": args.budget,
        "points": args.points,
        "xtol": args.xtol,
    }


def summary(found: dict) -> str:
    """Return the search's summary (lines of text) from its JSON-ready result ``found``."""

    def num(x, spec=".6g"):
        return "-" if x is None else format(x, spec)

    who = found["agent"]
    who = f"coalition {who}" if isinstance(who, list) else f"agent {who}"
    best = ", ".join(f"{k} = {num(v)}" for k, v in found["parameters"].items())
    searched = ", ".join(
        f"{k} in [{lo:g}, {hi:g}] ({scale})"
        for k, (lo, hi, scale) in found["search"]["parameters"].items()
    )
    lines = [
        f"best deviation of {who}: {found['family']} ({found['objective_kind']})",
        f"  searched {searched}; fixed {found['search']['fixed'] or 'nothing'};"
        f" {found['evaluations']} runs ({found['search']['method']})",
        f"  best found: {best}: J = {num(found['objective'])} against J = {num(found['truthful'])}"
        f" truthful: regret {num(found['regret'])}",
        f"  opting out gives J = {num(found['opt_out'])}",
    ]
    if found["bound"] is not None:
        holds = found["regret"] is not None and found["regret"] <= found["bound"]
        t = found["bound_terms"]
        lines.append(
            f"  bound {num(found['bound'])} ({'holds' if holds else 'VIOLATED'}): epsilon"
            f" {num(t['epsilon'])} + Phase II payment errors {num(t['payment_phase2_error_truthful'])}"
            f" + {num(t['payment_phase2_error_deviating'])} + Phase I's gap / p_k {num(t['phase1_gap'])}"
        )
    else:
        lines.append(f"  bound: none ({found['bound_reason']})")
    return "\n".join(lines)


def plot_png(found: dict) -> bytes:
    """Return a PNG of the search's curve (one parameter), heat map (two) or panels (more)."""
    import io

    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = list(found["search"]["parameters"])
    points = [
        (c["parameters"], c["objective"]) for c in found["curve"] if c["objective"] is not None
    ]
    J = np.array([j for _, j in points])
    truthful, bound = found["truthful"], found["bound"]
    scales = {k: v[2] for k, v in found["search"]["parameters"].items()}
    # Frame the objective near the truthful level and the best found: far worse deviations
    # (a diverging run) would flatten everything else.
    low = float(min(J.min(), truthful - (bound or 0.0)))
    top = truthful + 2.0 * max(truthful - low, 1e-9 * abs(truthful), 1e-12)
    fig = Figure(figsize=(6.4 if len(names) < 3 else 3.2 * len(names), 4.4))
    FigureCanvasAgg(fig)
    if len(names) == 2:
        ax = fig.add_subplot()
        x, y = (np.array([p[n] for p, _ in points]) for n in names)
        art = ax.scatter(x, y, c=np.minimum(J, top), cmap="viridis", s=60, marker="s")
        grid = found["search"]["grid"]
        on_grid = np.isin(x, grid[names[0]]) & np.isin(y, grid[names[1]])
        ax.scatter(x[~on_grid], y[~on_grid], c="none", edgecolors="white", s=60, marker="s")
        best = found["parameters"]
        ax.plot(best[names[0]], best[names[1]], "r*", ms=14, label="best found")
        fig.colorbar(art, ax=ax, label=f"J ({found['objective_kind']}); truthful {truthful:.4g}")
        ax.set_xlabel(names[0])
        ax.set_ylabel(names[1])
        ax.set_xscale("log" if scales[names[0]] == "log" else "linear")
        ax.set_yscale("log" if scales[names[1]] == "log" else "linear")
        ax.legend(loc="best")
    else:
        axes = fig.subplots(1, len(names), squeeze=False)[0]
        for ax, name in zip(axes, names, strict=True):
            x = np.array([p[name] for p, _ in points])
            order = np.argsort(x, kind="stable")
            ax.plot(x[order], J[order], "o-" if len(names) == 1 else "o", ms=4, label="J found")
            ax.axhline(truthful, color="k", ls="--", lw=1, label="truthful")
            if bound is not None:
                ax.axhline(truthful - bound, color="r", ls=":", lw=1, label="truthful - bound")
            if J.max() > top:
                pad = 0.05 * (top - low)
                ax.set_ylim(low - pad, top + pad)
                ax.set_title(f"{int((J > top).sum())} points above the frame", fontsize=8)
            ax.set_xscale("log" if scales[name] == "log" else "linear")
            ax.set_xlabel(name)
            ax.set_ylabel(f"J ({found['objective_kind']})")
        axes[0].legend(loc="best")
    who = found["agent"]
    fig.suptitle(f"{found['family']}: agent{'s' if isinstance(who, list) else ''} {who}")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()


def add_parsers(sub) -> None:
    """Add ``deviate`` to the ``edgesim`` subcommands ``sub``; returns nothing."""
    d = sub.add_parser(
        "deviate", help="search an agent's (or a coalition's) best deviation within a family"
    )
    d.add_argument("scenario", nargs="?", help="scenario TOML file (default: the quick start)")
    d.add_argument(
        "--agent", type=int, action="append", help="the deviating agent; repeat for a coalition"
    )
    d.add_argument("--family", help="a registered strategy (default: the table's, amplify)")
    d.add_argument(
        "--param", action="append", metavar="NAME=LO:HI", help="an option searched in [LO, HI]"
    )
    d.add_argument("--fix", action="append", metavar="NAME=VALUE", help="an option held fixed")
    d.add_argument("--objective", choices=("overall", "overall-test", "test"))
    d.add_argument("--budget", type=int, help="at most this many mechanism runs")
    d.add_argument("--points", type=int, help="grid points (per parameter)")
    d.add_argument("--xtol", type=float, help="the refinement's tolerance (search coordinate)")
    d.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key")
    d.add_argument("--seed", type=int, help="override the seed")
    d.add_argument("-o", "--output", required=True, metavar="DIR", help="write the results here")
    d.add_argument("--quiet", action="store_true", help="print nothing")
    d.add_argument("--debug", action="store_true", help="show tracebacks of failed runs")
    d.set_defaults(func=cmd_deviate)

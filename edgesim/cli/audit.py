"""``edgesim audit``: a lower bound on a scenario's privacy loss from neighbouring runs."""

from __future__ import annotations

import json
import sys

from edgesim.cli.common import check_output, fail_input, progress_bar
from edgesim.errors import ScenarioError, ScenarioErrors, one_line


def cmd_audit(args) -> int:
    """``edgesim audit``: audit a scenario's privacy claim empirically (see :mod:`edgesim.audit`)."""

    from edgesim import audit as aud
    from edgesim.sweeps import write_atomic

    try:
        base, plan = aud.audit_plan(args.scenario, args.set or [], args.runs)
    except ScenarioErrors as errs:
        return fail_input(errs.errors)
    except ScenarioError as err:
        return fail_input([err])
    problem = check_output(args.json, "--json") if args.json else None
    if problem:
        return fail_input([problem])
    bar = progress_bar(args, "audit", len(plan.runs))
    try:
        with bar:
            result = aud.audit(
                args.scenario,
                args.output,
                overrides=args.set or [],
                runs=args.runs,
                workers=args.workers,
                scheduler=args.scheduler,
                bar=bar,
            )
    except ScenarioError as err:  # the folder is in use, the scheduler cannot be reached
        return fail_input([err])
    except OSError as err:
        return fail_input([ScenarioError("-o", f"cannot write {args.output}: {err}")])
    except RuntimeError as err:
        print(f"edgesim: {one_line(err)}", file=sys.stderr)
        return 1
    if args.json:
        write_atomic(args.json, json.dumps(result.to_json(), indent=1) + "\n")
    if not args.quiet:
        claimed = result.epsilon_claimed
        claim = "no privacy claim" if claimed is None else f"{claimed:.4g}"
        if claimed is None and result.epsilon_noise_only is not None:
            claim += f" (constants read off the data; noise alone {result.epsilon_noise_only:.4g})"
        side = ">" if result.above else "<"
        print(
            f"audit of {base.name or args.scenario}: {result.runs} runs on D and {result.runs} on"
            f" D' (a canary in agent {result.canary_agent}'s data; delta = {result.delta:g})\n"
            f"  claimed epsilon        {claim}\n"
            f"  audited lower bound    {result.epsilon_lower:.4g} at {result.confidence:.0%}"
            f" confidence (statistic {side} {result.threshold:.4g}: TPR {result.tpr:.3f},"
            f" FPR {result.fpr:.3f} on the measuring half)\n"
            + (
                "  REFUTED: the lower bound exceeds the claimed epsilon"
                if result.refuted
                else "  no claim to test"
                if claimed is None
                else "  consistent with the claim (a lower bound cannot prove it)"
            )
        )
    return 0


def add_parsers(sub) -> None:
    """Add ``audit`` to the ``edgesim`` subcommands ``sub``; returns nothing."""
    a = sub.add_parser(
        "audit",
        help="audit a scenario's privacy claim: a lower bound on epsilon from neighbouring runs",
        description="Run the scenario M times on its data D and M times on a neighbour D' (a"
        " canary replaces one sample of the smallest agent), with fresh noise each run; print"
        " the claimed epsilon and a Clopper-Pearson lower bound on the true one. The runs are"
        " recorded in DIR: rerunning the same command resumes.",
    )
    a.add_argument("scenario", help="scenario TOML file (or a shipped scenario's name)")
    a.add_argument("-o", "--output", required=True, metavar="DIR", help="the audit's folder")
    a.add_argument("--runs", type=int, metavar="M", help="runs per side (default audit.runs)")
    a.add_argument("--json", metavar="OUT", help="write the audit's result (and statistics) here")
    a.add_argument("--workers", type=int, metavar="N", help="local worker processes (0: inline)")
    a.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler address")
    a.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key")
    a.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    a.set_defaults(func=cmd_audit)

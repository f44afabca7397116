"""``edgesim results`` and ``edgesim plot``: a sweep's records as a tidy table or a figure.

Both read a sweep's folder or one run's JSON file (``edgesim run --json``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from edgesim.cli.common import check_output, fail_input
from edgesim.errors import ScenarioError


def _records(folder: str):
    """Return the newest record per run of a sweep folder, or the one record of a run's JSON
    file (``edgesim run --json``, its per-agent sidecar beside it); ScenarioError if none."""
    from edgesim import sweeps as sweep

    p = Path(folder)
    if p.is_file() and p.suffix == ".json":
        try:
            result = json.loads(p.read_text())
        except (OSError, ValueError) as err:
            raise ScenarioError("results", f"cannot read {p} as a run's JSON: {err}") from None
        if not isinstance(result, dict) or "iterations" not in result:
            raise ScenarioError("results", f"{p} is not the JSON of `edgesim run --json`")
        run_id = p.name[: -len(".json")]
        return [
            {
                "run_id": run_id,
                "index": 0,
                "status": "ok",
                "result": result,
                "folder": str(p.parent),
            }
        ]
    if not p.is_dir():
        raise ScenarioError(
            "results", f"{p} is neither a folder (a sweep's -o) nor a run's JSON file"
        )
    if not (p / sweep.RESULTS).exists():
        raise ScenarioError("results", f"no {sweep.RESULTS} in {p}: run `edgesim sweep` first")
    return sweep.load_records(p)


def cmd_results(args) -> int:
    """``edgesim results``: flatten a sweep's records into a tidy CSV and/or Parquet table."""
    from edgesim import sweeps as sweep

    try:
        rows = sweep.table(_records(args.folder), per_agent=args.per_agent)
        for opt, path in (("--csv", args.csv), ("--parquet", args.parquet)):
            if path and path != "-":
                problem = check_output(path, opt)
                if problem:
                    return fail_input([problem])
        if args.parquet:
            sweep.write_parquet(args.parquet, rows)
        if args.csv and args.csv != "-":
            sweep.write_csv(args.csv, rows)
    except ScenarioError as err:
        return fail_input([err])
    if args.csv == "-" or not (args.csv or args.parquet):
        sys.stdout.write(sweep.csv_text(rows))
    elif not args.quiet:
        written = " and ".join(p for p in (args.csv, args.parquet) if p)
        print(f"{len(rows)} rows written to {written}")
    return 0


def cmd_plot(args) -> int:
    """``edgesim plot``: mean and spread over seeds of one column against another, as a PNG."""
    from edgesim import scenario as scn
    from edgesim import sweeps as sweep

    try:
        problem = check_output(args.output, "-o")
        if problem:
            return fail_input([problem])
        records = _records(args.folder)
        where = {}
        for item in args.where or []:
            key, value = scn.parse_override(item)
            where[key] = value
        swept = list(dict.fromkeys(k for r in records for k in (r.get("values") or {})))
        fig = sweep.plot(
            sweep.table(records, per_agent=args.per_agent),
            args.x,
            args.y,
            hue=args.hue,
            logx=args.logx,
            logy=args.logy,
            spread=args.spread,
            where=where,
            swept=swept,
        )
        sweep.save_figure(fig, args.output)
    except ScenarioError as err:
        return fail_input([err])
    if not args.quiet:
        print(f"figure written to {args.output}")
    return 0


def add_parsers(sub) -> None:
    """Add ``results`` and ``plot`` to the ``edgesim`` subcommands ``sub``; returns nothing."""
    res = sub.add_parser("results", help="flatten a sweep's records into a tidy table")
    res.add_argument(
        "folder",
        metavar="DIR",
        help="the sweep's folder, or a run's JSON file (edgesim run --json)",
    )
    res.add_argument("--csv", metavar="OUT", help="write CSV here ('-': stdout, the default)")
    res.add_argument("--parquet", metavar="OUT", help="write Parquet here (needs pyarrow)")
    res.add_argument("--per-agent", action="store_true", help="one row per agent, not per run")
    res.add_argument("--quiet", action="store_true", help="print nothing")
    res.set_defaults(func=cmd_results)
    pl = sub.add_parser("plot", help="plot a sweep: mean and spread over seeds")
    pl.add_argument("folder", metavar="DIR", help="the sweep's folder")
    pl.add_argument("--x", required=True, metavar="KEY", help="column on the x axis")
    pl.add_argument("--y", required=True, metavar="KEY", help="column on the y axis")
    pl.add_argument("--hue", metavar="KEY", help="one line per value of this column")
    pl.add_argument("--where", action="append", metavar="KEY=VALUE", help="keep matching runs")
    pl.add_argument("--logx", action="store_true", help="logarithmic x axis")
    pl.add_argument("--logy", action="store_true", help="logarithmic y axis")
    pl.add_argument(
        "--spread", choices=("std", "minmax", "none"), default="std", help="band around the mean"
    )
    pl.add_argument("--per-agent", action="store_true", help="plot agent columns (agent.*)")
    pl.add_argument("-o", "--output", required=True, metavar="FIG.png", help="the figure file")
    pl.add_argument("--quiet", action="store_true", help="print nothing")
    pl.set_defaults(func=cmd_plot)

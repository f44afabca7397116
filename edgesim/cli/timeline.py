"""``edgesim plot-timeline``: an events log drawn as a per-device Gantt chart."""

from __future__ import annotations

from edgesim.cli.common import check_output, fail_input, parse_window
from edgesim.errors import ScenarioError, one_line


def cmd_plot_timeline(args) -> int:
    """``edgesim plot-timeline``: draw an events log as a per-device Gantt chart (PNG)."""
    from edgesim.network.timeline import draw_timeline, read_log

    window = None if args.window is None else parse_window(args.window, "--window")
    if isinstance(window, ScenarioError):
        return fail_input([window])
    problem = check_output(args.output, "-o")
    if problem:
        return fail_input([problem])
    try:
        rows = read_log(args.log)
    except (OSError, ValueError) as err:
        return fail_input([ScenarioError("LOG", f"cannot read {args.log}: {one_line(err)}")])
    fig = draw_timeline(rows, window, args.devices)
    fig.savefig(args.output, dpi=120)
    print(f"timeline of {len({r['device'] for r in rows})} devices written to {args.output}")
    return 0


def add_parsers(sub) -> None:
    """Add ``plot-timeline`` to the ``edgesim`` subcommands ``sub``; returns nothing."""
    pt = sub.add_parser(
        "plot-timeline",
        help="draw an events log (edgesim run --events-log) as a Gantt chart, one row per device",
    )
    pt.add_argument("log", metavar="LOG", help="the events log CSV")
    pt.add_argument("-o", "--output", required=True, metavar="PNG", help="the picture to write")
    pt.add_argument("--window", metavar="START:END", help="the simulated seconds to draw")
    pt.add_argument("--devices", type=int, default=40, help="devices drawn (the first N)")
    pt.set_defaults(func=cmd_plot_timeline)

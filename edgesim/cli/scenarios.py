"""``edgesim validate`` and ``edgesim scenarios``: check scenario files, list the shipped ones."""

from __future__ import annotations

import sys

from edgesim.errors import ScenarioError, ScenarioErrors, one_line


def cmd_validate(args) -> int:
    """``edgesim validate``: check scenario files, every run of a sweep; exit 2 listing every error."""
    from edgesim import scenario as scn

    status = 0
    for path in args.scenarios:
        try:
            plan = scn.load_sweep(path, args.set or [])
        except ScenarioErrors as errs:
            status = 2
            for e in errs.errors:
                print(f"{path}: {one_line(e)}", file=sys.stderr)
        except ScenarioError as err:
            status = 2
            print(f"{path}: {one_line(err)}", file=sys.stderr)
        else:
            runs = f" ({len(plan.runs)} runs)" if plan.axes else ""
            print(f"{path}: ok{runs}")
    return status


def cmd_scenarios(args) -> int:
    """``edgesim scenarios``: list the shipped scenarios, one line each."""
    from edgesim import scenario as scn

    shipped = scn.shipped_scenarios()
    width = max(len(n) for n in shipped)
    for name, path in shipped.items():
        line = f"{name:<{width}}  {scn.describe(path)}"
        print(f"{line}  [{path}]" if args.paths else line)
    return 0


def add_parsers(sub) -> None:
    """Add ``validate`` to the ``edgesim`` subcommands ``sub``; returns nothing."""
    v = sub.add_parser("validate", help="check scenario files (every run of a sweep)")
    v.add_argument("scenarios", nargs="+")
    v.add_argument("--set", action="append", metavar="KEY=VALUE")
    v.set_defaults(func=cmd_validate)


def add_list_parser(sub) -> None:
    """Add ``scenarios`` to the ``edgesim`` subcommands ``sub`` (listed after ``plot``);
    returns nothing."""
    sc = sub.add_parser("scenarios", help="list the shipped scenarios")
    sc.add_argument("--paths", action="store_true", help="show each file's path")
    sc.set_defaults(func=cmd_scenarios)

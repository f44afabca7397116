"""Command line: ``edgesim run`` and ``edgesim validate``.

Exit codes: 0 success, 1 a run failed, 2 bad input (one line per problem, naming the key).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback
from pathlib import Path

from edgesim.errors import ScenarioError, ScenarioErrors


def _one_line(text) -> str:
    """Return ``text`` with every run of whitespace (newlines included) as one space."""
    return " ".join(str(text).split())


def _fail_input(errors) -> int:
    """Print one ``edgesim: error: KEY: ...`` line per error; return exit code 2."""
    for e in errors:
        print(f"edgesim: error: {_one_line(e)}", file=sys.stderr)
    return 2


def _check_output(path: str) -> ScenarioError | None:
    """Return an error when ``--json PATH`` cannot be written (before running anything)."""
    p = Path(path)
    if p.is_dir():
        return ScenarioError("--json", f"{p} is a folder; give a file name")
    parent = p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return ScenarioError("--json", f"cannot create {p}: {parent} is not a folder")
    if not os.access(parent, os.W_OK):
        return ScenarioError("--json", f"cannot write into {parent}")
    return None


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: never half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def summary(result: dict) -> str:
    """Return a short human-readable summary of one run's result."""
    lines = []
    sc = result["scenario"]
    name = result.get("name") or "scenario"
    lines.append(
        f"{name}: {result['mechanism']} with K = {result['K']} agents, "
        f"{sc['data']['source']} data, {sc['model']['kind']} model, seed {result['seed']}"
    )
    it = result["iterations"]
    lines.append(f"  rounds        phase I {it['phase1']}, phase II {it['phase2_total']} in total")
    m = result["model"]
    acc = m.get("test_accuracy")
    acc_s = f", test accuracy {acc:.4f}" if acc is not None else ""
    gap = m.get("optimality_gap")
    gap_s = f" (optimum {m['optimum_loss']:.6g}, gap {gap:.2e})" if gap is not None else ""
    lines.append(f"  model         global loss {m['global_loss']:.6g}{gap_s}{acc_s}")
    c = result["communication"]
    lines.append(
        f"  communication {c['messages_down']} messages down ({c['bytes_down'] / 1e6:.3f} MB), "
        f"{c['messages_up']} up ({c['bytes_up'] / 1e6:.3f} MB)"
    )
    if any(result["payments"]):
        err = result.get("payment_error_max")
        err_s = f", max |P - P_VCG| = {err:.3e}" if err is not None else ""
        lines.append(f"  payments      total {result['budget_total']:.6g}{err_s}")
    if "privacy" in result:
        pr = result["privacy"]
        lines.append(
            f"  privacy       target alpha {pr['alpha']:g}, accounted epsilon "
            f"{pr['epsilon_accounted']:.4g} (paper's zCDP conversion {pr['epsilon_zcdp']:.4g})"
        )
    shown = result["agents"][:12]
    lines.append("  agent      n  strategy            payment   train loss  overall    local loss")
    for a in shown:
        local = a["local_loss"]
        local_s = f"{local:10.4f}" if local is not None else "         -"
        lines.append(
            f"  {a['id']:5d} {a['n']:6d}  {a['strategy']:<18s} {a['payment']:9.4f} "
            f"{a['train_loss']:10.4f} {a['overall_loss']:9.4f}  {local_s}"
        )
    if len(result["agents"]) > len(shown):
        lines.append(f"  ... {len(result['agents']) - len(shown)} more agents in the JSON")
    if "best_response" in result:
        br = result["best_response"]
        lines.append(
            f"  best response agent {br['agent']} ({br['objective_kind']}): gamma {br['gamma']:.4g}, "
            f"gain over truthful {br['gain']:.4g}; opting out gives {br['opt_out']:.6g}"
        )
    return "\n".join(lines)


def cmd_run(args) -> int:
    """``edgesim run``: run one scenario, print a summary, optionally write the JSON."""
    from edgesim import scenario as scn
    from edgesim.simulate import run, to_json

    try:
        sc = scn.load(args.scenario, args.set or [], args.seed)
    except ScenarioErrors as errs:
        return _fail_input(errs.errors)
    except ScenarioError as err:
        return _fail_input([err])
    if args.json:
        problem = _check_output(args.json)
        if problem:
            return _fail_input([problem])
    try:
        result = run(sc)
        text = to_json(result)
    except ScenarioErrors as errs:  # found while loading data (e.g. a malformed npz file)
        return _fail_input(errs.errors)
    except ScenarioError as err:
        return _fail_input([err])
    except Exception as err:  # a failed run, not bad input
        if args.debug:
            traceback.print_exc()
        print(f"edgesim: run failed: {type(err).__name__}: {_one_line(err)}", file=sys.stderr)
        return 1
    if args.json:
        try:
            _write_atomic(Path(args.json), text)
        except OSError as err:
            return _fail_input([ScenarioError("--json", f"cannot write {args.json}: {err}")])
    if not args.quiet:
        print(summary(result))
        if args.json:
            print(f"  JSON written to {args.json}")
    return 0


def cmd_validate(args) -> int:
    """``edgesim validate``: check scenario files; exit 2 listing every error of every file."""
    from edgesim import scenario as scn

    status = 0
    for path in args.scenarios:
        try:
            scn.load(path, args.set or [])
        except ScenarioErrors as errs:
            status = 2
            for e in errs.errors:
                print(f"{path}: {_one_line(e)}", file=sys.stderr)
        else:
            print(f"{path}: ok")
    return status


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``edgesim`` command."""
    parser = argparse.ArgumentParser(prog="edgesim", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a scenario (default: the built-in quick start)")
    r.add_argument("scenario", nargs="?", help="scenario TOML file")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key")
    r.add_argument("--seed", type=int, help="override the seed")
    r.add_argument("--json", metavar="OUT", help="write the result JSON here")
    r.add_argument("--quiet", action="store_true", help="print nothing")
    r.add_argument("--debug", action="store_true", help="show tracebacks of failed runs")
    r.set_defaults(func=cmd_run)
    v = sub.add_parser("validate", help="check scenario files")
    v.add_argument("scenarios", nargs="+")
    v.add_argument("--set", action="append", metavar="KEY=VALUE")
    v.set_defaults(func=cmd_validate)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``edgesim`` console script; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse printed usage and a one-line error (or --help)
        if exc.code is None:
            return 0
        return exc.code if isinstance(exc.code, int) else 2
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("edgesim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())

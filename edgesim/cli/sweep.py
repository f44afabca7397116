"""``edgesim sweep``: every run of a scenario's ``[sweep]`` into a folder (resumes)."""

from __future__ import annotations

import sys
from pathlib import Path

from edgesim.cli.common import FORCE_HELP, fail_input, progress_bar
from edgesim.errors import ScenarioError, ScenarioErrors, one_line


def cmd_sweep(args) -> int:
    """``edgesim sweep``: run every run of a scenario's ``[sweep]``, appending to DIR/results.jsonl."""
    from edgesim import scenario as scn
    from edgesim import sweeps as sweep

    try:
        plan = scn.load_sweep(args.scenario, args.set or [])
    except ScenarioErrors as errs:
        return fail_input(errs.errors)
    except ScenarioError as err:
        return fail_input([err])
    info = {
        "scenario": str(plan.path) if plan.path else None,
        "overrides": list(args.set or []),
    }
    bar = progress_bar(args, "sweep", len(plan.runs))

    def report(rec: dict) -> None:
        if rec["status"] != "ok":
            values = ", ".join(f"{k}={v}" for k, v in rec["values"].items())
            where = f" ({values})" if values else ""
            if bar.enabled:
                sys.stderr.write("\r\033[K")
            print(
                f"edgesim: run {rec['index']}{where} failed: {one_line(rec['error'])}",
                file=sys.stderr,
            )
            if args.debug and rec.get("traceback"):
                print(rec["traceback"], file=sys.stderr)

    try:
        security = sweep.dask_security(
            args.scheduler, args.dask_tls_ca, args.dask_tls_cert, args.dask_tls_key
        )
        with bar:
            summary = sweep.run_sweep(
                plan,
                args.output,
                workers=args.workers,
                scheduler=args.scheduler,
                security=security,
                bar=bar,
                retry_failed=args.retry_failed,
                manifest=info,
                on_record=report,
                force=args.force,
            )
    except ScenarioError as err:  # folder in use, scheduler unreachable, bad TLS files
        return fail_input([err])
    except OSError as err:
        return fail_input([ScenarioError("-o", f"cannot write {args.output}: {err}")])
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


def add_parsers(sub) -> None:
    """Add ``sweep`` to the ``edgesim`` subcommands ``sub``; returns nothing."""
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
        help="a Dask scheduler, e.g. tls://host:8786 with --dask-tls-*, or tcp://host:8786"
        " (extra [dask]; docs/sweeps.md)",
    )
    s.add_argument(
        "--dask-tls-ca",
        metavar="FILE",
        help="the CA certificate (PEM) that signed the scheduler's and workers' certificates",
    )
    s.add_argument(
        "--dask-tls-cert", metavar="FILE", help="this client's certificate (PEM), signed by the CA"
    )
    s.add_argument(
        "--dask-tls-key",
        metavar="FILE",
        help="this client's private key (PEM), unless it is in --dask-tls-cert's file",
    )
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key")
    s.add_argument(
        "--retry-failed", action="store_true", help="run again the runs recorded as failed"
    )
    s.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    s.add_argument("--debug", action="store_true", help="show tracebacks of failed runs")
    s.add_argument("--force", action="store_true", help=FORCE_HELP)
    s.set_defaults(func=cmd_sweep)

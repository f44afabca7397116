"""Rerun a few configurations in ns-3 and check them against the committed CSV.

Run with the ns-3 virtual environment (see README.md), after installing ``ns3==3.44.post0``:

    ~/.venvs/ns3/bin/python analysis/validation/recheck.py            # the default few
    ~/.venvs/ns3/bin/python analysis/validation/recheck.py --config ac,7,10,800000,round

For each configuration it reruns ns-3 with the committed run numbers (same seeds and
streams) and compares the mean completion time of the last device with the committed
mean: it passes when the two differ by no more than the committed runs' spread (max - min;
ns-3 is deterministic for a given run, so on the same ns-3 version the rows repeat to the
microsecond). Prints one line per configuration and exits 1 when any fails, 0 otherwise.
This is the maintainers' check that ``ns3_wifi.csv`` still describes what ``ns3_wifi.py``
and the pinned ns-3 produce (README.md says why CI does not run it).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ns3_wifi  # noqa: E402

#: A few cheap configurations across the grid's axes: both standards, MCS 3 and 7, one and
#: several devices, small and large messages, every mode (about a minute of ns-3).
DEFAULT = [
    ("ac", 7, 1, 800_000, "round"),
    ("ac", 7, 5, 50_000, "downlink"),
    ("ac", 3, 5, 200_000, "uplink"),
    ("ax", 7, 10, 50_000, "round"),
    ("ax", 7, 2, 800_000, "uplink"),
]


def committed(path: str) -> dict[tuple, dict[int, float]]:
    """Return {(standard, mcs, n, bytes, mode): {run: last device's time (s)}} from the CSV."""
    out: dict[tuple, dict[int, float]] = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["last_s"]:
                key = (r["standard"], int(r["mcs"]), int(r["n"]), int(r["bytes"]), r["mode"])
                out.setdefault(key, {})[int(r["run"])] = float(r["last_s"])
    return out


def parse_config(text: str) -> tuple:
    """Parse 'standard,mcs,n,bytes,mode' into a configuration key."""
    std, mcs, n, nbytes, mode = text.split(",")
    return (std, int(mcs), int(n), int(nbytes), mode)


def main(argv=None) -> int:
    """Rerun the configurations and compare; returns the exit code (0 all match, 1 not, 2 none)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--csv", default=os.path.join(HERE, "ns3_wifi.csv"))
    p.add_argument(
        "--config",
        action="append",
        type=parse_config,
        help="standard,mcs,n,bytes,mode (repeatable; default: a few across the grid)",
    )
    a = p.parse_args(argv)
    have = committed(a.csv)
    configs = a.config or DEFAULT
    missing = [c for c in configs if c not in have]
    if missing:
        print(f"not in {a.csv}: {missing}", file=sys.stderr)
        return 2
    t0 = time.time()
    failed = 0
    for key in configs:
        runs = have[key]
        old = sum(runs.values()) / len(runs)
        spread = max(runs.values()) - min(runs.values())
        rerun = [ns3_wifi.run_one(*key, run)["last_s"] for run in sorted(runs)]
        new = float("nan") if "" in rerun else sum(rerun) / len(rerun)
        ok = abs(new - old) <= spread  # False for NaN: a run that did not complete fails
        failed += not ok
        print(
            f"{'ok  ' if ok else 'FAIL'} {key}: committed mean {old:.6f} s over {len(runs)}"
            f" runs (spread {spread:.6f}), rerun {new:.6f} s",
            flush=True,
        )
    print(f"{len(configs) - failed} of {len(configs)} match ({time.time() - t0:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Network driver speed: SimPy events per message, batched against events, one FFL run at K = 1e6.

One script on purpose: its four parts print one table of ratios measured in one run.

Run from the repository root (``edgesim`` installed)::

    python analysis/benchmarks/bench_network.py                  # full: K = 1e4, FFL at K = 1e6
    python analysis/benchmarks/bench_network.py --quick          # smoke: K = 1e3 / 1e4, FFL at 1e4
    python analysis/benchmarks/bench_network.py --skip-million   # parts 1 and 2 only

Parts 1 and 2 (``network_messages.py``, which describes them) time the
network driver alone, on a trivial mechanism: part 1 the ``events``
fidelity's cost per message against bare SimPy loops (target: at most 3x),
part 2 ``batched`` against ``events`` (target: at least 100x faster, same
simulated time and counters). The number of rounds is chosen so that the
``events`` run does about 4e5 messages (2-4 s; 1e5 with ``--quick``).

Part 1 runs on two networks. ``default``: every device has the same link
and compute time, so all messages of a round arrive at one instant, and
``events`` (which gives the messages of one instant one shared SimPy event)
pays one device resume per message and two SimPy events per round.
``stragglers``: Shannon rates that differ by device (distance, shadowing)
and shifted-exponential compute times, so no two messages share an instant:
one SimPy event per message, the worst case. Then one 802.11ac cell of 50
devices (``wifi``). Part 2 runs at K = 1e4 (reusing part 1's ``events``
time when the K agree) on both networks.

Parts 3 and 4 (``network_ffl.py``, which describes them) run FFL through the
scenario path in fresh processes: part 3 at K = 1e6 on one cell and on cells
of 100 (target: under 120 s each, cells within 1.5x of one cell), part 4 the
overheads of the energy accounting and of moving devices (target: 1.3x each).

The script always exits with status 0; it prints PASS/FAIL lines and a
summary table.
"""

from __future__ import annotations

import sys
import time

from instrument import add_epsilon, argument_parser, epsilon, machine_line, verdict
from network_ffl import (
    CELLS_OVER_ONE_TARGET,
    FFL_WALL_TARGET_S,
    OVERHEAD_TARGET,
    OVERHEADS,
    run_ffl,
)
from network_messages import (
    BATCHED_SPEEDUP_TARGET,
    EVENTS_MESSAGES,
    EVENTS_MESSAGES_QUICK,
    EVENTS_OVER_BARE_TARGET,
    WIFI_DEVICES,
    bench_batched,
    bench_events,
    rounds_for,
)
from scale_scenario import FEATURES, SAMPLES_PER_AGENT

#: A row of the summary table: (check, measured, target, verdict).
Row = tuple[str, str, str, str]


def ratio_row(check: str, ratio: float, fmt: str, target: str, ok: bool | None) -> Row:
    """Return a summary row for a ratio (``fmt``: its format, e.g. ".2f"); verdict "-" when
    ``ok`` is None (printed for information)."""
    return (check, f"{ratio:{fmt}}x", target, "-" if ok is None else verdict(ok))


def message_rows(K1: int, K2: int, messages: int) -> list[Row]:
    """Run parts 1 and 2 (K1 devices for part 1, K2 for part 2); returns their summary rows."""
    rows, by_network = [], {}
    for network in ("default", "stragglers"):
        res = by_network[network] = bench_events(K1, rounds_for(K1, messages), network)
        ok = res["ratio_a"] <= EVENTS_OVER_BARE_TARGET
        rows.append(
            ratio_row(
                f"events / bare loop (a), {network}, K = {K1}", res["ratio_a"], ".2f", "<= 3x", ok
            )
        )
        rows.append(
            ratio_row(
                f"events / K processes (b), {network}, K = {K1}",
                res["ratio_b"],
                ".2f",
                "(info)",
                None,
            )
        )
        print()
    wifi = bench_events(WIFI_DEVICES, rounds_for(WIFI_DEVICES, messages), "wifi")
    ok = wifi["ratio_a"] <= EVENTS_OVER_BARE_TARGET
    rows.append(
        ratio_row(
            f"events / bare loop (a), wifi, K = {WIFI_DEVICES}", wifi["ratio_a"], ".2f", "<= 3x", ok
        )
    )
    print()
    for network, ev in by_network.items():
        r2 = rounds_for(K2, messages) if K2 != K1 else ev["rounds"]
        ba = bench_batched(K2, r2, ev if K2 == K1 else None, network)
        ok = ba["ratio"] >= BATCHED_SPEEDUP_TARGET
        rows.append(
            ratio_row(
                f"batched speedup over events, {network}, K = {K2}",
                ba["ratio"],
                ".0f",
                ">= 100x",
                ok,
            )
        )
        rows.append(
            (f"events and batched agree, {network}", str(ba["same"]), "True", verdict(ba["same"]))
        )
        print()
    return rows  # fmt: skip


def ffl_rows(K: int, epsilon: float, profile: bool) -> list[Row]:
    """Run part 3 (FFL at K on one cell, then on cells of 100); returns its summary rows."""
    rows, walls = [], {}
    for network in ("one cell, per-device", "cells of 100"):
        print(
            f"== Part 3: one FFL run, K = {K}, {SAMPLES_PER_AGENT} samples/agent, d = {FEATURES},"
            f" Theorem 1 rounds, batched, epsilon = {epsilon:g}, {network} (fresh process) =="
        )
        r = run_ffl(K, epsilon, profile, network)
        check = f"FFL run, K = {K}, {network}"
        if r is None:
            rows.append((check, "failed", "< 120 s", "FAIL"))
        elif r["profiled"]:
            rows.append((check + " (cProfile)", f"{r['wall_s']:.1f} s", "< 120 s", "-"))
        else:
            walls[network] = r["wall_s"]
            ok = r["wall_s"] < FFL_WALL_TARGET_S
            rows.append((check, f"{r['wall_s']:.1f} s", "< 120 s", verdict(ok)))
        print()
    if len(walls) == 2:
        ratio = walls["cells of 100"] / walls["one cell, per-device"]
        target = f"<= {CELLS_OVER_ONE_TARGET}x"
        ok = ratio <= CELLS_OVER_ONE_TARGET
        rows.append(ratio_row(f"cells of 100 / one cell, K = {K}", ratio, ".2f", target, ok))
    return rows


def overhead_rows() -> list[Row]:
    """Run part 4 (each overhead on and off, best of 3 fresh processes); returns its rows."""
    rows = []
    for what, K, without, with_it in OVERHEADS:
        print(f"== Part 4: {what}, FFL at K = {K}, best of 3 fresh processes each ==")
        best = {}
        for network in (without, with_it):
            walls = []
            for _ in range(3):
                r = run_ffl(K, 1.0, False, network, quiet=True)
                walls.append(r["wall_s"] if r else float("nan"))
            best[network] = min(walls)
            runs = ", ".join(f"{w:.2f}" for w in walls)
            print(f"  {network}: {best[network]:.2f} s (runs {runs})")
        ratio = best[with_it] / best[without]
        target = f"<= {OVERHEAD_TARGET}x"
        ok = ratio <= OVERHEAD_TARGET
        rows.append(ratio_row(f"{what} on / off, FFL K = {K}", ratio, ".2f", target, ok))
        print()
    return rows


def print_summary(rows: list[Row], note: str) -> None:
    """Print the summary table of every check; returns None."""
    print(f"== Summary{note} ==")
    width = max((len(row[0]) for row in rows), default=10)
    print(f"{'check':<{width}}  {'measured':>10}  {'target':>8}  verdict")
    for check, measured, target, v in rows:
        print(f"{check:<{width}}  {measured:>10}  {target:>8}  {v}")


def main(argv=None) -> int:
    """Run the parts not skipped, print their measurements and the summary; returns 0."""
    ap = argument_parser(__doc__)
    ap.add_argument(
        "--quick", action="store_true", help="smoke run: K = 1e3 (part 1), 1e4 (parts 2 and 3)"
    )
    ap.add_argument("--skip-million", action="store_true", help="skip the FFL run (part 3)")
    ap.add_argument("--skip-events", action="store_true", help="skip parts 1 and 2")
    ap.add_argument(
        "--skip-energy", action="store_true", help="skip part 4 (energy and mobility overheads)"
    )
    ap.add_argument(
        "--profile", action="store_true", help="run the FFL run under cProfile, print the top"
    )
    ap.add_argument("--ffl-agents", type=int, default=0, help="K of the FFL run (default 1e6)")
    add_epsilon(ap)
    args = ap.parse_args(argv)

    K1, K2, K3 = (1_000, 10_000, 10_000) if args.quick else (10_000, 10_000, 1_000_000)
    messages = EVENTS_MESSAGES_QUICK if args.quick else EVENTS_MESSAGES
    t_start = time.perf_counter()
    print(machine_line())
    rows = []
    if not args.skip_events:
        rows += message_rows(K1, K2, messages)
    if not args.skip_million:
        rows += ffl_rows(args.ffl_agents or K3, epsilon(args), args.profile)
    if not args.skip_energy:
        rows += overhead_rows()
    print_summary(rows, " (quick mode: the targets are set for the full K)" if args.quick else "")
    print(f"total benchmark time {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

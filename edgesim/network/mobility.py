"""Moving devices: random waypoint, or a trace in the ns-2 mobility format; handover.

Pure numpy (no SimPy). The server asks where devices are at an exchange's
instants (:meth:`Mobility.position`); queries must not go back in time per
device (the walk state only moves forward), which the plan's order
guarantees.

- ``random-waypoint`` (Johnson and Maltz, 1996; the model of ns-2, BonnMotion
  and SUMO's random trips): from its placed position a device picks a
  waypoint uniformly in the area and a speed uniformly in [speed_min_mps,
  speed_max_mps], walks there in a straight line, pauses ``pause_s``, and
  again. Draw order per new leg, devices in index order: the waypoint's x
  and y, then the speed (three uniforms; ``mobility`` stream). The time
  average of the speed is (v_max - v_min) / ln(v_max / v_min) (legs at low
  speed last longer: Yoon, Liu and Noble, INFOCOM 2003).
- ``trace``: an ns-2 mobility file as SUMO (``traceExporter.py --ns2mobility``)
  and BonnMotion (``NSFile``) write it: ``$node_(i) set X_ x`` / ``set Y_ y``
  give device i's start, ``$ns_ at t "$node_(i) setdest x y speed"`` sends
  it towards (x, y) at ``speed`` m/s from time t (seconds) until it gets
  there (a later setdest replaces the current one).

Decision (handover): a device attaches to the nearest access point when an
exchange starts, and the exchange's messages stay on that cell: a message in
flight when the device crosses into another cell finishes on the old one,
and the next exchange uses the new cell. The Shannon rate of each
transmission follows the distance to the attached access point at the
instant the transmission starts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgesim.config import option
from edgesim.errors import ScenarioError

NS = 1e9


@dataclass(frozen=True)
class MobilityConfig:
    """The ``[network.mobility]`` table."""

    model: str = option(
        "static",
        "'static' (devices stay where they were placed), 'random-waypoint' or 'trace' (an ns-2"
        " mobility file, trace_path)",
        choices=("static", "random-waypoint", "trace"),
    )
    speed_min_mps: float = option(0.5, "random-waypoint: slowest speed (> 0)", unit="m/s", gt=0.0)
    speed_max_mps: float = option(1.5, "random-waypoint: fastest speed", unit="m/s", gt=0.0)
    pause_s: float = option(0.0, "random-waypoint: pause at each waypoint", unit="s", ge=0.0)
    trace_path: str = option("", "trace: the ns-2 mobility file (setdest lines)")

    def cross_check(self, prefix: str = "network.mobility") -> list[ScenarioError]:
        """Return the errors across keys: speeds in order, a trace file that exists."""
        errs = []
        if self.model == "random-waypoint" and self.speed_max_mps < self.speed_min_mps:
            errs.append(
                ScenarioError(
                    f"{prefix}.speed_max_mps",
                    f"{self.speed_max_mps} is below speed_min_mps ({self.speed_min_mps})",
                )
            )
        if self.model == "trace" and not Path(self.trace_path).is_file():
            errs.append(
                ScenarioError(
                    f"{prefix}.trace_path",
                    f"{self.trace_path!r} is not a file; trace needs an ns-2 mobility file",
                )
            )
        return errs


_SET = re.compile(r"^\$node_\((\d+)\)\s+set\s+([XYZ])_\s+(\S+)$")
_SETDEST = re.compile(
    r'^\$ns_\s+at\s+(\S+)\s+"\$node_\((\d+)\)\s+setdest\s+(\S+)\s+(\S+)\s+(\S+)"$'
)


def read_ns2(path: str | Path, devices: int) -> tuple[np.ndarray, list[list[tuple]]]:
    """Read an ns-2 mobility file; returns (start positions (devices, 2), per device its setdest
    commands [(t_s, x, y, speed)] in time order).

    Raises ValueError "FILE:LINE: ..." on a malformed line, a node the
    scenario does not have, or a device without a start position.
    """
    start = np.full((devices, 2), np.nan)
    moves: list[list[tuple]] = [[] for _ in range(devices)]
    for number, raw in enumerate(Path(path).read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}:{number}"
        if m := _SET.match(line):
            node, axis, value = int(m[1]), m[2], m[3]
            values = [value]
        elif m := _SETDEST.match(line):
            node = int(m[2])
            values = [m[1], m[3], m[4], m[5]]
        else:
            raise ValueError(f"{where}: not an ns-2 mobility line: {line!r}")
        try:
            numbers = [float(v) for v in values]
        except ValueError:
            raise ValueError(f"{where}: not a number in {line!r}") from None
        if not all(math.isfinite(v) for v in numbers):
            raise ValueError(f"{where}: not a finite number in {line!r}")
        if node >= devices:
            raise ValueError(f"{where}: node {node}, but the scenario has {devices} devices")
        if _SET.match(line):
            if axis != "Z":
                start[node, "XY".index(axis)] = numbers[0]
        else:
            t, x, y, speed = numbers
            if t < 0 or speed < 0:
                raise ValueError(f"{where}: time and speed must be >= 0 in {line!r}")
            moves[node].append((t, x, y, speed))
    missing = np.flatnonzero(np.isnan(start).any(axis=1))
    if missing.size:
        raise ValueError(f"{path}: node {missing[0]} has no start position (set X_ and Y_)")
    for m in moves:
        m.sort(key=lambda move: move[0])
    return start, moves


def read_trace(path: str | Path, devices: int, area) -> tuple[np.ndarray, list[list[tuple]]]:
    """Read an ns-2 mobility file (:func:`read_ns2`) and check every point lies in ``area``
    ((x0, y0), (x1, y1)); returns what :func:`read_ns2` returns, ValueError naming the file."""
    start, moves = read_ns2(path, devices)
    lo, hi = np.asarray(area[0], dtype=float), np.asarray(area[1], dtype=float)
    for node, m in enumerate(moves):
        for p in [start[node]] + [np.array(move[1:3]) for move in m]:
            if (p < lo - 1e-9).any() or (p > hi + 1e-9).any():
                raise ValueError(
                    f"{path}: node {node} goes to ({p[0]:g}, {p[1]:g}), outside the area"
                    f" ({lo[0]:g}, {lo[1]:g})-({hi[0]:g}, {hi[1]:g})"
                )
    return start, moves


def area_of(ap_xy: np.ndarray, cell_radius_m: float) -> tuple[np.ndarray, np.ndarray]:
    """Return the area devices move in: the access points' bounding box widened by a cell radius."""
    return ap_xy.min(axis=0) - cell_radius_m, ap_xy.max(axis=0) + cell_radius_m


class Mobility:
    """Where each of K devices is over simulated time.

    ``cfg``: the table; ``xy_m`` (K, 2): the placed positions (random
    waypoint starts there); ``area`` ((x0, y0), (x1, y1)): the rectangle the
    waypoints are drawn in; ``rng``: the ``mobility`` stream.
    """

    def __init__(self, cfg: MobilityConfig, xy_m: np.ndarray, area, rng: np.random.Generator):
        self.cfg = cfg
        self.area = (np.asarray(area[0], dtype=float), np.asarray(area[1], dtype=float))
        K = len(xy_m)
        self.rng = rng
        self.last_ns = np.zeros(K, dtype=np.int64)
        if cfg.model == "trace":
            start, moves = read_trace(cfg.trace_path, K, self.area)
            self._start = start
            self._legs = [self._trace_legs(start[i], moves[i]) for i in range(K)]
            return
        # random waypoint: the current leg of each device (from, to, start, arrival, pause end)
        self.src = np.array(xy_m, dtype=float)
        self.dst = self.src.copy()
        self.t_start = np.zeros(K)
        self.t_arrive = np.zeros(K)
        self.t_leave = np.zeros(K)  # when it sets off for the next waypoint
        self.need_s = np.zeros(K)

    @staticmethod
    def _trace_legs(start: np.ndarray, moves: list[tuple]) -> list[tuple]:
        """Return a device's legs [(t_start, from, to, t_arrive)] (s, m) from its setdest
        commands: each starts where the device is when it is given (a later command cuts the
        leg before it short), and a speed of 0 stops the device there."""
        legs: list[tuple] = []
        here = start.astype(float)
        for t, x, y, speed in moves:
            if legs:
                t0, src, dst, t1 = legs[-1]
                if t < t1:  # cut short: where it had got to by t
                    here = src + (dst - src) * (t - t0) / (t1 - t0)
                    legs[-1] = (t0, src, here, t)
                else:
                    here = dst
            to = np.array([x, y]) if speed > 0 else here
            dist = float(np.hypot(*(to - here)))
            legs.append((t, here, to, t + (dist / speed if speed > 0 else 0.0)))
        return legs

    def position(self, devices: np.ndarray, t_ns: np.ndarray) -> np.ndarray:
        """Return where each listed device is at the matching time (m, 2), in metres."""
        devices = np.asarray(devices, dtype=np.int64)
        t_ns = np.broadcast_to(np.asarray(t_ns, dtype=np.int64), devices.shape)
        if (t_ns < self.last_ns[devices]).any():
            raise ValueError("mobility queries must not go back in time for a device")
        self.last_ns[devices] = np.maximum(self.last_ns[devices], t_ns)
        t = t_ns / NS
        if self.cfg.model == "trace":
            return np.array(
                [
                    self._trace_at(self._start[d], self._legs[d], s)
                    for d, s in zip(devices, t, strict=True)
                ]
            ).reshape(-1, 2)
        self._advance(devices, t)
        src, dst = self.src[devices], self.dst[devices]
        t0, t1 = self.t_start[devices], self.t_arrive[devices]
        frac = np.where(t1 > t0, np.clip((t - t0) / np.where(t1 > t0, t1 - t0, 1.0), 0, 1), 1.0)
        return src + (dst - src) * frac[:, None]

    def _advance(self, devices: np.ndarray, t: np.ndarray) -> None:
        """Start new random-waypoint legs for the listed devices until each one's covers ``t``."""
        cfg, (lo, hi) = self.cfg, self.area
        todo = np.unique(devices[t >= self.t_leave[devices]])
        self.need_s[devices] = np.maximum(self.need_s[devices], t)  # the latest time asked
        while todo.size:
            n = todo.size
            u = self.rng.random((n, 3))
            waypoint = lo + (hi - lo) * u[:, :2]
            speed = cfg.speed_min_mps + (cfg.speed_max_mps - cfg.speed_min_mps) * u[:, 2]
            self.src[todo] = self.dst[todo]
            self.dst[todo] = waypoint
            self.t_start[todo] = self.t_leave[todo]
            dist = np.hypot(*(waypoint - self.src[todo]).T)
            self.t_arrive[todo] = self.t_start[todo] + dist / speed
            self.t_leave[todo] = self.t_arrive[todo] + cfg.pause_s
            todo = todo[self.need_s[todo] >= self.t_leave[todo]]

    @staticmethod
    def _trace_at(start: np.ndarray, legs: list[tuple], t: float) -> np.ndarray:
        """Return a trace device's position at time ``t`` (s): its start, then along its legs."""
        here = start
        for t0, src, dst, t1 in legs:
            if t < t0:
                break
            here = dst if t >= t1 else src + (dst - src) * (t - t0) / (t1 - t0)
        return here

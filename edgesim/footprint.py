"""How much memory a run will take, known from the scenario alone, before anything is allocated.

:func:`estimate` predicts the peak resident memory of ``edgesim run`` (the
plan, the run, the JSON written) from K, the numbers of training and test rows,
the features, the classes, the model, the mechanism, the fidelity and the
outputs. It reads no data: for stored sources it reads the array shapes
only (the ``.npz`` headers) or uses the data set's known size.

One module on purpose: its parts read one :class:`Shape` and their constants were
measured together (``bench_memory.py --grid``), so they change together.

The model is a sum of parts, each a count of the bytes of the arrays the code
holds (numpy arrays counted exactly, from the shapes the scenario asks for;
Python objects per agent measured with ``analysis/benchmarks/bench_memory.py``).
Held throughout the run:

- ``interpreter``: Python with every module a run imports (measured);
- ``run``: what any run holds besides (measured on runs of 10 agents);
- ``data``: the training and test rows, each held as X (d floats), the
  design matrix Xa (d + 1 floats with the intercept), the label and the agent
  index; the synthetic source draws its rows into the design itself (one copy,
  in float32 under ``data.precision``, with an int32 agent index for regression);
- ``network``: per-device state: a few (K,) arrays for ``batched``, a SimPy
  process and its events per device for ``events``.

And one phase after another, each part what the phase holds above those:

- ``construction``: the synthetic source's draws (and for classification a second
  copy of the rows while they are grouped by agent);
- ``smoothness``: the power iteration behind L_g (per block of rows and thread);
- ``rounds``: the mechanism's (K, n_params) reports, its gradient blocks (rows
  of the block, never more than the data has), ridge's gradient moments;
- ``exact VCG``: the central references after the mechanism (exact VCG, or w^o
  alone), as :func:`edgesim.reference.reference_plan` decides;
- ``local baseline``: local learning's (K, n_params) arrays and its gathers;
- ``losses``: the per-row gathers of each agent's model that the per-agent
  losses and accuracies need (row blocks of at most the data's rows);
- ``output``: the per-agent records of the result (or a sidecar's columns);
  both of these with the local models, when they were trained.

Peak = interpreter + :data:`ALLOCATOR_MARGIN` x (run + data + network + the largest
phase). ``bench_memory.py --grid`` checks measured <= estimate <= 1.5 x measured
on 30 shapes (docs/performance.md has the table).

**Refusal.** A run is refused when its estimate exceeds the limit. Because the
estimate is at most 1.5 times the measured peak, a run whose peak is below two
thirds of the limit has an estimate below the limit: it is never refused.

:func:`machine_memory` reads the memory this process may use (the cgroup limit,
else MemTotal) and what is free now (MemAvailable); the environment variable
``EDGESIM_MEMORY_LIMIT`` (bytes, or a number with K, M, G or T) overrides the
limit, for tests and for users who want a smaller budget.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgesim.errors import ScenarioError
from edgesim.learning.data.shape import config_shape
from edgesim.learning.data.sources import DRAW_BLOCK_ROWS, storage_dtype
from edgesim.learning.segments import (
    BLOCK_ROWS,
    EIGEN_BLOCK_ROWS,
    INDICATOR_MAX_ENTRIES,
    block_threads,
    gradient_threads,
)
from edgesim.mechanisms.ffl import SHARED_BLOCK
from edgesim.mechanisms.vcg import OUTER_MAX, RIDGE_BATCH_MAX
from edgesim.reference import exact_vcg_planned, reference_plan
from edgesim.scenario import Scenario

MiB = 2**20
GiB = 2**30
FLOAT = 8

#: Python with every module a run imports (measured 96 MiB, rounded up).
INTERPRETER_BYTES = 100 * MiB
#: What any run holds besides (the scenario, the SimPy environment, the plan, the allocator's
#: pools): measured 3 MiB on a run of 10 agents.
RUN_BYTES = 4 * MiB
#: Per-agent records of the result (dicts, boxed floats), measured without a network
#: (1 208 bytes an agent at K = 2 * 10^5, ``bench_memory.py``) ...
OUTPUT_BYTES_PER_AGENT = 1200
#: ... and the per-device network counters they gain with one (526 measured) ...
OUTPUT_NETWORK_BYTES_PER_AGENT = 550
#: ... and the per-agent lists of a mechanism with payments (Phase II rounds, restarts, final
#: step sizes, discretisation errors: 360 measured under FFL) ...
OUTPUT_PAYMENTS_BYTES_PER_AGENT = 360
#: ... and the local baseline's losses and accuracies (measured with the local models held:
#: 370 bytes at 21 parameters) ...
OUTPUT_LOCAL_BYTES_PER_AGENT = 200
#: ... or, with ``output.per_agent`` a sidecar (or none), its columns and the mechanism's
#: per-agent results (about 48 numbers each; 380 bytes measured).
SIDECAR_BYTES_PER_AGENT = 48 * FLOAT
#: Per-device state of the ``events`` fidelity (SimPy process, inbox, events): 1 300 bytes
#: measured with the energy meter.
EVENTS_BYTES_PER_DEVICE = 1200
#: Per-device arrays of the ``batched`` fidelity and of the mechanism's counters: 198 bytes
#: measured with the energy meter.
BATCHED_BYTES_PER_DEVICE = 13 * FLOAT
#: The energy meter's per-device arrays (four parts, battery, its state) and the
#: per-exchange temporaries it builds.
ENERGY_BYTES_PER_DEVICE = 12 * FLOAT
#: The resident memory above the interpreter is this much more than the bytes the parts
#: count (pages the allocator keeps after a free, objects' headers, buffers of numpy's
#: own): 0.89 to 1.15 times the counted bytes on the points of ``bench_memory.py --grid``
#: above 100 MiB; this margin puts the estimate at 1.09 to 1.41 times the measured peak there.
ALLOCATOR_MARGIN = 1.25
#: Vectors of n_params floats that scipy's L-BFGS-B holds in a solve (its 30 pairs of history,
#: its workspace and the optimiser's copies of the iterate and gradient; tracemalloc: 80).
LBFGS_VECTORS = 80

#: The parts that come one after another (the peak holds the largest).
PHASES = (
    "construction",
    "smoothness",
    "rounds",
    "exact VCG",
    "local baseline",
    "losses",
    "output",
)

#: What shrinks each part, named by the key to change.
ADVICE = {
    "data": ("data.samples", "fewer samples (data.samples) or features (data.features)"),
    "rounds": ("agents.count", "fewer agents (agents.count) or a smaller model"),
    "exact VCG": ("mechanism.exact_vcg", "mechanism.exact_vcg = false"),
    "local baseline": ("output.local_baseline", "output.local_baseline = false"),
    "network": ("network.fidelity", "network.fidelity = 'batched' or fewer agents"),
    "output": ("agents.count", "fewer agents (agents.count): the result has a record per agent"),
    "losses": (
        "data.features",
        "fewer features (data.features) or test rows (data.test_samples): each agent's model is"
        " gathered per row",
    ),
    "interpreter": ("agents.count", "nothing to shrink: this is Python itself"),
    "run": ("agents.count", "nothing to shrink: every run holds it"),
    "construction": ("data.samples", "fewer samples (data.samples) or features (data.features)"),
    "smoothness": ("data.features", "fewer features (data.features) or samples (data.samples)"),
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
            f"this run needs {self.describe()}, more than {human(limit)} ({where};"
            " estimates run at most 1.5x the real peak, so runs under two thirds of the limit"
            f" always pass); shrink it with {how}, or pass --force to run anyway",
        )


def human(n: float) -> str:
    """Return ``n`` bytes as a short text in GiB (>= 1 GiB) or MiB."""
    return f"{n / GiB:.1f} GiB" if n >= GiB else f"{n / MiB:.0f} MiB"


def data_shape(sc: Scenario) -> tuple[int, int, int, int]:
    """Return (training rows n, test rows, features d, classes) the scenario will hold."""
    return config_shape(sc.data, sc.agents.count, sc.model.kind == "logistic")


def exact_vcg_on(sc: Scenario) -> bool:
    """Return whether a run of ``sc`` computes the exact VCG reference (its K + 1 solves)."""
    return exact_vcg_planned(sc)[0]


def optimum_only(sc: Scenario) -> bool:
    """Return whether a run of ``sc`` computes w^o alone (one central solve, no exact VCG)."""
    plan = reference_plan(sc)
    return plan.optimum and not plan.exact_vcg


@dataclass(frozen=True)
class Shape:
    """The sizes the estimate is written in: K agents, n training and n_test test rows, d
    features, d' = d + intercept, ``classes`` (0 for ridge), ``params`` (d' x max(classes, 1)),
    ``item`` (bytes per stored feature), ``block`` (training rows of one gradient block),
    ``block_agents`` (agents in one), ``blocks`` (their number) and ``threads`` (blocks
    computed at once)."""

    K: int
    n: int
    n_test: int
    d: int
    dprime: int
    classes: int
    params: int
    item: int
    block: int
    block_agents: int
    blocks: int
    threads: int


def shape(sc: Scenario) -> Shape:
    """Return the :class:`Shape` of ``sc``, from the scenario alone."""
    K = sc.agents.count
    n, n_test, d, classes = data_shape(sc)
    dprime = d + (1 if sc.model.intercept else 0)
    item = FLOAT
    if sc.data.source == "synthetic":
        item = np.dtype(storage_dtype(sc.data, n, d)).itemsize
    per_agent = max(1, math.ceil(n / max(K, 1)))
    # Blocks end at an agent's last row: about BLOCK_ROWS rows, never more than the data.
    block = min(n, BLOCK_ROWS + per_agent - 1)
    blocks = max(1, math.ceil(n / max(block, 1)))
    threads = block_threads(blocks)
    return Shape(
        K,
        n,
        n_test,
        d,
        dprime,
        classes,
        dprime * max(classes, 1),
        item,
        block,
        min(K, max(1, block // per_agent)),
        blocks,
        threads,
    )


def _gradient_block(s: Shape) -> int:
    """Bytes of one gradient block's temporaries: its rows converted to float64 (stored in
    float32), the scores and probabilities (ridge: residuals), and its agents' sums."""
    convert = s.block * s.dprime * FLOAT if s.item < FLOAT else 0
    scores = 3 * s.block * max(s.classes, 1) * FLOAT
    return convert + scores + 2 * s.block_agents * s.params * FLOAT


def _smoothness(s: Shape) -> int:
    """Bytes of the power iteration behind L_g: per block of EIGEN_BLOCK_ROWS rows (one per
    thread), its rows in float64, the start vectors and iterates (agents x d'), and with
    fewer rows than d' per agent each agent's (rows x rows) Gram matrix (``einsum`` forms it
    through a buffer of the block's size: the larger of the two counts), and the sparse
    indicator of the blocks' segment sum, which ``segments`` keeps for the next call."""
    per_agent = max(1, math.ceil(s.n / max(s.K, 1)))
    # the blocks in flight at once: one per thread, at most the data's rows
    rows = min(s.n, gradient_threads() * (EIGEN_BLOCK_ROWS + per_agent - 1))
    agents = min(s.K, max(1, rows // per_agent))
    convert = rows * s.dprime * FLOAT if s.item < FLOAT else 0
    gram = max(agents * per_agent**2, rows * s.dprime) * FLOAT if per_agent < s.dprime else 0
    kept = min(rows, INDICATOR_MAX_ENTRIES) * 2 * FLOAT  # a segment sum's indicator, kept
    return convert + 3 * agents * s.dprime * FLOAT + gram + kept


def _rounds(sc: Scenario, s: Shape) -> int:
    """Bytes of the mechanism's rounds: two (K, n_params) report arrays (a round's reports
    in a reused buffer, and FFL's shared round at w* held through Phase II, or the plan's
    own gradients), each thread's gradient block; ridge's gradient moments (a (d', d')
    sum per block, then their total) where the rounds sum from them."""
    reports = 2 * s.K * s.params * FLOAT
    moments = (s.blocks + 1) * s.dprime**2 * FLOAT if sc.model.kind == "ridge" else 0
    if sc.mechanism.kind == "ffl":  # the stopping rule's block of problems' first gradients
        reports += min(s.K, SHARED_BLOCK) * s.params * FLOAT
    return reports + s.threads * _gradient_block(s) + moments


def _construct(sc: Scenario, s: Shape, data: int) -> int:
    """Bytes the synthetic source holds besides its data while drawing it: blocks of rows
    drawn in float64 with their means (regression: then each row's agent model); for
    classification, later, a second copy of every array while the rows are grouped by agent."""
    if sc.data.source != "synthetic":
        return 0
    rows = min(max(s.n, s.n_test), DRAW_BLOCK_ROWS)
    if s.classes:  # the copy, and the grouping's order and index arrays
        return max(data + 4 * max(s.n, s.n_test) * FLOAT, 2 * rows * s.d * FLOAT)
    return 2 * rows * s.d * FLOAT


def _gather(s: Shape) -> int:
    """Bytes of one per-row gather of each agent's own model (``W[agent]``, row blocks of
    BLOCK_ROWS) over the larger of the training and test sets, with its scores."""
    rows = min(max(s.n, s.n_test), BLOCK_ROWS)
    return rows * (s.params + 3 * max(s.classes, 1)) * FLOAT


def _exact_vcg(sc: Scenario, s: Shape) -> int:
    """Bytes of the central references after the mechanism: exact VCG, or w^o alone (the
    decision of :func:`edgesim.reference.reference_plan`).

    Ridge, batched (K d'^2 <= RIDGE_BATCH_MAX): the K Gram matrices (K, d', d') three at
    once, or while they are formed two of them, a block's per-agent sums and two blocks'
    per-row outer products (rows, d', d'; at most the data's rows; a block whose products
    exceed OUTER_MAX floats forms each agent's X_k^T X_k instead). Ridge, one solve per problem:
    the (d', d') normal matrix three times (the product, the identity term, the solver's
    copy) and two (n, d') copies of the rows. Logistic: L-BFGS-B's vectors
    (:data:`LBFGS_VECTORS`) and each evaluation's (K, n_params) gradients and block.
    """
    if optimum_only(sc):  # ridge from the data's moments; logistic by the same solver
        if sc.model.kind == "ridge":
            return (s.blocks + 1) * s.dprime**2 * FLOAT + s.threads * _gradient_block(s)
        return (LBFGS_VECTORS + s.K) * s.params * FLOAT + s.threads * _gradient_block(s)
    if not exact_vcg_on(sc):
        return 0
    if sc.model.kind == "ridge":
        grams = s.K * s.dprime**2 * FLOAT
        if grams <= RIDGE_BATCH_MAX * FLOAT:
            outer = min(s.n, 2 * s.block) * s.dprime**2  # floats
            if s.block * s.dprime**2 > OUTER_MAX:  # one product X_k^T X_k per agent instead
                outer = OUTER_MAX  # (bar a last block small enough for the outer products)
            # G and G / n_k, and the block's per-agent sums, beside the products
            sums = s.block_agents * s.dprime**2 * FLOAT
            return max(3 * grams, outer * FLOAT + 2 * grams + sums)
        return 3 * s.dprime**2 * FLOAT + 2 * s.n * s.dprime * FLOAT
    return (LBFGS_VECTORS + s.K) * s.params * FLOAT + s.threads * _gradient_block(s)


def _local(sc: Scenario, s: Shape) -> int:
    """Bytes of every agent's local learning: the power iteration again, then accelerated
    gradient descent's seven (K, n_params) arrays at once (iterate, momentum point, the last
    gradients and the next with their regulariser term, next iterate, their difference;
    measured with tracemalloc) and its per-row gather of each agent's model."""
    if not sc.output.local_baseline:
        return 0
    return max(_smoothness(s), 7 * s.K * s.params * FLOAT + _gather(s))


def estimate(sc: Scenario) -> Footprint:
    """Return the :class:`Footprint` of running ``sc`` (``edgesim run``'s peak RSS, in bytes)."""
    s = shape(sc)
    K, n, rows = s.K, s.n, s.n + s.n_test
    if sc.data.source == "synthetic":  # drawn into the design itself: one (rows, d + 1) array
        index = 4 if s.classes == 0 else FLOAT  # the regression's agent index is int32
        data = rows * ((s.d + 1) * s.item + s.item + index)
    else:
        x_copies = s.d + (s.dprime if sc.model.intercept else 0)
        data = rows * (x_copies + 2) * FLOAT
    fidelity = sc.network.fidelity
    per_device = {"none": 0, "batched": BATCHED_BYTES_PER_DEVICE}.get(
        fidelity, EVENTS_BYTES_PER_DEVICE
    )
    if per_device and sc.network.energy.model != "none":
        per_device += ENERGY_BYTES_PER_DEVICE
    network = K * per_device
    per_agent = OUTPUT_BYTES_PER_AGENT + (OUTPUT_NETWORK_BYTES_PER_AGENT if per_device else 0)
    if sc.mechanism.kind not in ("fedavg", "local"):
        per_agent += OUTPUT_PAYMENTS_BYTES_PER_AGENT
    if sc.output.local_baseline:
        per_agent += OUTPUT_LOCAL_BYTES_PER_AGENT
    if sc.output.per_agent != "json":  # numpy columns, and the per-row losses behind them
        per_agent = SIDECAR_BYTES_PER_AGENT
    records = K * per_agent + (0 if sc.output.per_agent == "json" else n * FLOAT)
    # The local models stay held to the end (the output reads them).
    held_local = K * s.params * FLOAT if sc.output.local_baseline else 0
    parts = {
        "interpreter": INTERPRETER_BYTES,
        "run": RUN_BYTES,
        "data": data,
        "network": network,
        "construction": _construct(sc, s, data),
        "smoothness": _smoothness(s),
        "rounds": _rounds(sc, s),
        "exact VCG": _exact_vcg(sc, s),
        "local baseline": _local(sc, s),
        "output": held_local + records,
        "losses": held_local + _gather(s),
    }
    # One phase at a time: L_g, the rounds, exact VCG, local learning, the output.
    transient = max(parts[p] for p in PHASES)
    total = INTERPRETER_BYTES + ALLOCATOR_MARGIN * (RUN_BYTES + data + network + transient)
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
    (naming the key that shrinks the largest part) when the estimate exceeds the
    limit. The estimate is at most 1.5 x the measured peak (``bench_memory.py
    --grid``), so a run whose peak is below two thirds of the limit is never refused.
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

"""The ``[network.secagg]`` table and the plan of one secure-aggregation session.

:class:`SecAggConfig` chooses the graph (complete, as in Bonawitz et al.
2017, or a random k-regular graph, as in SecAgg+, Bell et al. 2020), the
Shamir threshold, the fixed-point bound, the cryptographic profile
(:mod:`~edgesim.network.secagg.profiles`), whether cryptography runs and how
often keys are renewed; :func:`plan_secagg` resolves it, for n clients and
vectors of p entries, to a :class:`SecAggPlan`. Each client's secrets are
shared among its h = k + 1 holders (itself and its k neighbours) and t =
floor(threshold h) + 1 of them (at most h) reconstruct; the default 0.5
gives a majority. With the complete graph the aggregate survives any n - t
dropouts. Only the semi-honest protocol is implemented (the malicious-server
variant of Bonawitz et al. needs t > 2h/3, a consistency check and
signatures).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from edgesim.config import option
from edgesim.errors import ScenarioError
from edgesim.mechanisms.fixed_point import DEFAULT_VALUE_BOUND, fixed_point_params
from edgesim.network.secagg.profiles import PROFILES

#: ``graph = "auto"`` uses the complete graph (Bonawitz) up to this many clients.
AUTO_COMPLETE_MAX_CLIENTS = 100
#: Cost of one (client, neighbour) pair's key work (key agreements, HKDF, share encryption,
#: Shamir) in mask-word equivalents, by profile: a mask word (ChaCha20, the additions) costs
#: about 3.5 ns, a pair's key work 105-128 us (x25519), 415-980 us (flower), 4.9-5.1 ms
#: (ffdhe2048): two fits of whole sessions by analysis/benchmarks/bench_secagg.py --fit on the
#: loaded 2-core machine (2^14.8-2^15.1, 2^17.0-2^18.1, 2^20.4-2^20.5 words; rounded).
KEY_AGREEMENT_WORDS = {"x25519": 2**15, "flower": 2**18, "ffdhe2048": 2**20}
#: ``masking = "auto"`` runs the cryptography when n k (p + KEY_AGREEMENT_WORDS[profile])
#: is at most this: about 60 ms of CPU per aggregation (at 3.6 ns a word), so that a run of a
#: few hundred aggregations spends seconds, not minutes, on it (2^29, two seconds each, made
#: the test suite's DP-FFL sweeps take ten minutes more). Before issue 31 it was n k <= 32
#: pairs; x25519 now runs it for 16 times as many pairs (the complete graph of 23 clients).
AUTO_CRYPTO_MAX_WORK = 2**24


@dataclass(frozen=True)
class SecAggConfig:
    """The ``[network.secagg]`` table: secure aggregation's graph, threshold, encoding and cost."""

    graph: str = option(
        "auto",
        "who masks with whom and holds whose shares: 'complete' (Bonawitz et al. 2017),"
        " 'k-regular' (SecAgg+, Bell et al. 2020: a random Harary graph of degree `degree`)"
        f" or 'auto' (complete up to {AUTO_COMPLETE_MAX_CLIENTS} clients, else k-regular)",
        choices=("auto", "complete", "k-regular"),
    )
    degree: int | str = option(
        "auto",
        "k-regular: neighbours per client k (odd values are rounded up to even; k >= n - 1"
        " is the complete graph), or 'auto' = ceil(2 log2 n) rounded up to even",
        kinds=(int, str),
        choices=("auto",),
        ge=2,
    )
    threshold: float = option(
        0.5,
        "Shamir threshold as a fraction of a client's h = k + 1 share holders (itself and its"
        " neighbours): t = floor(threshold h) + 1; 0.5 is a majority",
        gt=0,
        lt=1,
    )
    value_bound: float = option(
        DEFAULT_VALUE_BOUND,
        "fixed-point bound B on each entry of a weighted vector a_i x_i (larger entries are"
        " saturated and counted); the frac bits f are the largest with n B 2^f < 2^63",
        gt=0,
    )
    profile: str = option(
        "x25519",
        "the cryptography and its message sizes: 'x25519' (X25519 keys of 32 bytes, AES-GCM"
        " shares), 'flower' (as Flower's SecAgg+: P-384 keys PEM-encoded in 215 bytes, Fernet"
        " shares) or 'ffdhe2048' (RFC 7919 finite-field DH, 256-byte keys: results before"
        " issue 31); keys come from the scenario's seed: reproducible, not secret",
        choices=tuple(PROFILES),
    )
    masking: str = option(
        "auto",
        "'crypto' (real key agreement, shares and masks), 'skip' (no cryptography: same"
        " messages and bytes, identical sum) or 'auto' (crypto when n k (p + w) <= 2^24, w the"
        " profile's key work in mask words: 2^15 x25519, 2^18 flower, 2^20 ffdhe2048; about"
        " 60 ms per aggregation)",
        choices=("auto", "crypto", "skip"),
    )
    rekey: str = option(
        "round",
        "'round': fresh keys and shares in every aggregation (Bonawitz); 'session': keys and"
        " shares set up once per session, per-round masks from the round index",
        choices=("round", "session"),
    )

    def cross_check(self, agents_count: int) -> list[ScenarioError]:
        """Return the cross-field errors for ``agents_count`` agents; [] when consistent.

        The fixed point needs ``value_bound * agents_count < 2^63``.
        """
        try:
            fixed_point_params(max(1, int(agents_count)), self.value_bound)
        except ValueError:
            return [
                ScenarioError(
                    "network.secagg.value_bound",
                    f"{self.value_bound!r} times {agents_count} agents must be below 2^63;"
                    " lower the bound",
                )
            ]
        return []


def auto_degree(n_clients: int) -> int:
    """Return SecAgg+'s default degree: ceil(2 log2 n) rounded up to even, at most n - 1.

    Bell et al. (2020) show that k = O(log n) neighbours suffice; the constant
    depends on the dropout and corruption rates, and 2 log2 n is our choice.
    """
    n = int(n_clients)
    k = math.ceil(2 * math.log2(n)) if n > 1 else 0
    k += k % 2
    return min(k, n - 1)


@dataclass(frozen=True)
class SecAggPlan:
    """What one session of ``n_clients`` clients with vectors of ``dim`` entries runs.

    ``degree`` k (n - 1 for the complete graph), ``threshold`` t of the h =
    k + 1 holders, ``masking`` ('crypto' or 'skip'), ``rekey``,
    ``frac_bits`` and ``value_bound`` of the fixed point, ``profile`` (the
    name of a :class:`~edgesim.network.secagg.profiles.Profile`).
    """

    n_clients: int
    dim: int
    degree: int
    threshold: int
    masking: str
    rekey: str
    frac_bits: int
    value_bound: float
    profile: str = "x25519"

    @property
    def complete(self) -> bool:
        """True for the complete graph (every client a neighbour of every other)."""
        return self.degree == self.n_clients - 1


def plan_secagg(n_clients: int, dim: int, cfg: SecAggConfig | None = None) -> SecAggPlan:
    """Return the :class:`SecAggPlan` of ``cfg`` for ``n_clients`` clients and ``dim`` entries.

    Graph: 'complete' -> k = n - 1; 'k-regular' -> ``degree`` (or
    :func:`auto_degree`), odd rounded up to even, capped at n - 1; 'auto' ->
    complete when n <= ``AUTO_COMPLETE_MAX_CLIENTS``. Threshold t =
    floor(threshold (k + 1)) + 1. Masking 'auto' -> 'crypto' when
    ``n k (dim + KEY_AGREEMENT_WORDS[profile]) <= AUTO_CRYPTO_MAX_WORK``.
    """
    cfg = cfg or SecAggConfig()
    n, p = int(n_clients), int(dim)
    if n < 1 or p < 0:
        raise ValueError(f"need n_clients >= 1 and dim >= 0, got {n_clients}, {dim}")
    if cfg.graph == "complete" or (cfg.graph == "auto" and n <= AUTO_COMPLETE_MAX_CLIENTS):
        k = n - 1
    elif cfg.graph in ("k-regular", "auto"):
        k = auto_degree(n) if cfg.degree == "auto" else int(cfg.degree)
        k = min(k + k % 2, n - 1)
    else:
        raise ValueError(f"unknown secagg graph {cfg.graph!r}")
    h = k + 1
    t = min(h, math.floor(round(float(cfg.threshold) * h, 9)) + 1)
    masking = cfg.masking
    if masking == "auto":
        work = n * k * (p + KEY_AGREEMENT_WORDS[cfg.profile])
        masking = "crypto" if work <= AUTO_CRYPTO_MAX_WORK else "skip"
    return SecAggPlan(
        n_clients=n,
        dim=p,
        degree=k,
        threshold=t,
        masking=masking,
        rekey=cfg.rekey,
        frac_bits=fixed_point_params(n, cfg.value_bound),
        value_bound=float(cfg.value_bound),
        profile=cfg.profile,
    )

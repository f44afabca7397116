"""Secure aggregation: fixed-point encoding, and the masked protocol itself.

The server of a federated mechanism must learn only ``sum_{i in survivors}
a_i x_i`` (client i's float vector x_i of dimension p times its public weight
a_i). This module has two layers.

1. **Fixed point** (shared by every driver). Each client encodes its weighted
   vector a_i x_i in the ring Z_{2^64} (numpy ``uint64`` arithmetic wraps mod
   2^64): ``round(a_i x_i 2^f)`` in two's complement, with ``f`` frac bits
   chosen by :func:`fixed_point_params` so that the sum of ``n`` encodings of
   values in ``[-B, B]`` cannot wrap: ``n B 2^f < 2^63``. Entries of a_i x_i
   beyond ``B = value_bound`` are saturated to +-B (and counted). The
   in-memory driver calls :func:`aggregate_plain` (no masks); the network
   driver runs :class:`SecureAggregation`; both decode the same integer sum
   mod 2^64 and so return bit-identical floats. Quantisation: each entry is
   rounded to the nearest multiple of 2^-f, so a sum of m rows is within
   ``m 2^-(f+1)`` of the float sum of the (saturated) products.

2. **The protocol**, semi-honest variant of Bonawitz et al., "Practical Secure
   Aggregation for Privacy-Preserving Machine Learning", CCS 2017 (Sec. 4,
   Fig. 4: AdvertiseKeys, ShareKeys, MaskedInputCollection, Unmasking; no
   ConsistencyCheck, no signatures), over the complete graph or over a random
   k-regular neighbour graph as in SecAgg+ (Bell et al., "Secure Single-Server
   Aggregation with (Poly)Logarithmic Overhead", CCS 2020: masks and shares
   only between neighbours). Client i sends

       y_i = enc(a_i x_i) + PRG(b_i) + sum_{j in N(i), j > i} PRG(s_ij)
                                     - sum_{j in N(i), j < i} PRG(s_ij)   (mod 2^64)

   (Bonawitz eq. in Sec. 4: the pairwise masks cancel in the sum). The
   server reconstructs, from t Shamir shares, b_i of every survivor (removes
   PRG(b_i)) and the masking secret key of every dropped client (recomputes
   and removes its pairwise masks with its surviving neighbours).

Cryptographic choices (Python stdlib + numpy only):

- Key agreement: finite-field Diffie-Hellman in the RFC 7919 group
  ``ffdhe2048`` (generator 2) with 254-bit secret exponents (RFC 7919 App.
  A.1 asks for at least 225 bits with short exponents). Public keys are 256
  bytes. One exponentiation (Python's ``pow``) costs about 4 ms on one 2020s
  x86 core, which dominates the crypto path: a round with fresh keys costs
  about ``2 n`` key generations plus ``n k`` agreements (two key pairs, each
  unordered pair agreed once: both ends derive the same secret, so the
  simulation computes it once), plus ``k`` per dropped client at unmasking.
- Pairwise seed ``s_ij = SHA-256(domain || DH secret (256 B) || min(i,j) ||
  max(i,j))``; PRG: SHAKE-128 (``hashlib.shake_128``) of ``domain || seed ||
  round`` read as little-endian uint64 words (domain separation between
  self masks and pairwise masks, the round index is the per-round nonce).
- Shamir t-of-h sharing over GF(q), q = 2^255 - 19 (shares 32 bytes); the
  share held by client j is the polynomial at x = j + 1; reconstruction is
  Lagrange interpolation at 0.
- Shares travel through the server encrypted with an encrypt-then-MAC
  stand-in for AES-GCM (no AES in the standard library): keystream
  SHAKE-256(k_enc || nonce), tag HMAC-SHA256(k_mac, nonce || ct) cut to 16
  bytes, 12-byte nonce; the same 28 bytes of overhead as AES-GCM.

Randomness: every secret (exponents, self-mask seeds, polynomial
coefficients) comes from a seeded ``numpy.random.Generator``, deliberately,
so that simulations are reproducible. A production system must draw them
from a CSPRNG (``secrets``); only the PRG expansion here is cryptographic.

Graph and threshold (``[network.secagg]``, :class:`SecAggConfig`): each
client's secrets are shared among its h = k + 1 holders (itself and its k
neighbours; Bonawitz shares among all of U_1, the sender included), and t =
floor(threshold h) + 1 of them reconstruct (the default 0.5 gives t > h/2, a
majority). In the semi-honest model the sum is all that the server and any
fewer than t colluding clients learn; the malicious-server variant of
Bonawitz needs t > 2h/3, which this module does not implement. With the
complete graph the aggregate survives any ``n - t`` dropouts.

Messages (counted by :func:`protocol_messages`, produced by the session's
stage methods; every message carries ``HEADER_BYTES`` = 64 bytes of header,
ids are 4 bytes, k = degree):

=================  =====  =========================  ====================================
stage              dir    messages                   bytes each
=================  =====  =========================  ====================================
advertise_keys     up     n                          64 + 2*256 (two DH public keys)
advertise_keys     down   n                          64 + k (4 + 512) (neighbours' keys)
share_keys         up     n                          64 + k (4 + 100) (encrypted shares)
share_keys         down   n                          64 + k (4 + 100) (shares for it)
masked_input       up     n                          64 + 8 p (replaces the plain upload)
survivors          down   survivors                  64 + ceil(k / 8) (neighbour bitmap)
unmasking          up     responders                 64 + (k + 1)(4 + 32) (for itself and
                                                     each neighbour i: a share of b_i if
                                                     i survived, else of i's key)
=================  =====  =========================  ====================================

An encrypted share is 28 + 72 bytes: sender id, receiver id, the key share
and the self-mask share (4 + 4 + 32 + 32). The two key stages run in every
aggregation with ``rekey = "round"`` (Bonawitz) and once per session with
``rekey = "session"``. ``masking = "skip"`` runs no cryptography: it sends
the unmasked encodings and counts the same messages; the sum is identical
because the masks cancel exactly mod 2^64. The crypto path loops over
clients and pairs in Python (big-integer arithmetic does not vectorise), so
``masking = "auto"`` keeps it to small sessions; the ``skip`` path and
:func:`protocol_messages` are vectorised (O(n), 10^6 clients in about a
second).
"""

from __future__ import annotations

import hashlib
import hmac
import math
from dataclasses import dataclass, field

import numpy as np

from edgesim.config import option
from edgesim.errors import ScenarioError
from edgesim.mechanisms.fixed_point import (
    DEFAULT_VALUE_BOUND,
    FixedPoint,
    aggregate_plain,
    decode,
    encode,
    encode_with_saturation,
    fixed_point_params,
)
from edgesim.mechanisms.protocol import HEADER_BYTES

__all__ = [
    "AE_OVERHEAD_BYTES",
    "AUTO_COMPLETE_MAX_CLIENTS",
    "AUTO_CRYPTO_MAX_WORK",
    "DEFAULT_VALUE_BOUND",
    "DH_PUBLIC_KEY_BYTES",
    "FFDHE2048_G",
    "FFDHE2048_P",
    "FixedPoint",
    "KEY_AGREEMENT_WORDS",
    "NeighbourGraph",
    "SHAMIR_PRIME",
    "SERVER",
    "SHARE_BYTES",
    "SecAggAborted",
    "SecAggConfig",
    "SecAggPlan",
    "SecureAggregation",
    "StageMessages",
    "aggregate_plain",
    "auto_degree",
    "decode",
    "dh_agree",
    "dh_keypair",
    "encode",
    "encode_with_saturation",
    "fixed_point_params",
    "plan_secagg",
    "prg",
    "protocol_messages",
    "shamir_reconstruct",
    "shamir_share",
]

# ---------------------------------------------------------------------------
# Cryptographic building blocks
# ---------------------------------------------------------------------------

#: RFC 7919 ffdhe2048: p = 2^2048 - 2^1984 + (floor(2^1918 e) + 560316) 2^64 - 1, a safe prime.
FFDHE2048_P = int(
    "FFFFFFFFFFFFFFFFADF85458A2BB4A9AAFDC5620273D3CF1D8B9C583CE2D3695A9E13641146433FBCC939DCE249B3"
    "EF97D2FE363630C75D8F681B202AEC4617AD3DF1ED5D5FD65612433F51F5F066ED0856365553DED1AF3B557135E7F"
    "57C935984F0C70E0E68B77E2A689DAF3EFE8721DF158A136ADE73530ACCA4F483A797ABC0AB182B324FB61D108A94"
    "BB2C8E3FBB96ADAB760D7F4681D4F42A3DE394DF4AE56EDE76372BB190B07A7C8EE0A6D709E02FCE1CDF7E2ECC034"
    "04CD28342F619172FE9CE98583FF8E4F1232EEF28183C3FE3B1B4C6FAD733BB5FCBC2EC22005C58EF1837D1683B2C"
    "6F34A26C1B2EFFA886B423861285C97FFFFFFFFFFFFFFFF",
    16,
)
FFDHE2048_G = 2
#: Bits of a DH secret exponent (RFC 7919 App. A.1: >= 225 for ffdhe2048); below SHAMIR_PRIME.
DH_SECRET_BITS = 254
DH_PUBLIC_KEY_BYTES = 256
#: Shamir field: GF(2^255 - 19); a share is 32 bytes.
SHAMIR_PRIME = 2**255 - 19
SHARE_BYTES = 32
CLIENT_ID_BYTES = 4
#: Authenticated-encryption overhead: 12-byte nonce + 16-byte tag (as AES-GCM).
AE_OVERHEAD_BYTES = 28
_AE_NONCE_BYTES = 12
_AE_TAG_BYTES = 16
#: Plaintext of one encrypted share: sender id, receiver id, key share, self-mask share.
SHARE_PLAINTEXT_BYTES = 2 * CLIENT_ID_BYTES + 2 * SHARE_BYTES
SHARE_CIPHERTEXT_BYTES = SHARE_PLAINTEXT_BYTES + AE_OVERHEAD_BYTES

_DOMAIN_SELF = b"edgesim/secagg/v1/self-mask\x00"
_DOMAIN_PAIR = b"edgesim/secagg/v1/pair-mask\x00"
_DOMAIN_AE = b"edgesim/secagg/v1/share-encryption\x00"
_LABEL_ENC = b"edgesim/secagg/v1/ae-enc\x00"
_LABEL_MAC = b"edgesim/secagg/v1/ae-mac\x00"


def _int_bytes(x: int, n: int) -> bytes:
    """Return ``x`` as ``n`` big-endian bytes."""
    return int(x).to_bytes(n, "big")


def dh_keypair(rng: np.random.Generator) -> tuple[int, int]:
    """Return (secret exponent, public key g^x mod p) in ffdhe2048, drawing 32 bytes from ``rng``.

    The exponent has exactly :data:`DH_SECRET_BITS` bits (top bit set, 253
    random bits), so it is below :data:`SHAMIR_PRIME` and can be shared.
    """
    x = (int.from_bytes(rng.bytes(32), "big") >> (256 - DH_SECRET_BITS + 1)) | (
        1 << (DH_SECRET_BITS - 1)
    )
    return x, pow(FFDHE2048_G, x, FFDHE2048_P)


def dh_agree(secret: int, peer_public: int) -> bytes:
    """Return the DH shared secret ``peer_public^secret mod p`` as 256 big-endian bytes.

    Rejects peer keys outside [2, p - 2] (RFC 7919 Sec. 5.1) with ValueError.
    """
    if not 2 <= peer_public <= FFDHE2048_P - 2:
        raise ValueError("invalid ffdhe2048 public key")
    return _int_bytes(pow(peer_public, secret, FFDHE2048_P), DH_PUBLIC_KEY_BYTES)


def _pair_id(i: int, j: int) -> bytes:
    """Return the 8-byte context of the unordered pair {i, j}."""
    return _int_bytes(min(i, j), CLIENT_ID_BYTES) + _int_bytes(max(i, j), CLIENT_ID_BYTES)


def prg(seed: bytes, dim: int, round_index: int, domain: bytes = _DOMAIN_PAIR) -> np.ndarray:
    """Return ``dim`` pseudorandom uint64 words: SHAKE-128(domain || seed || round) read little-endian.

    ``round_index`` (0 <= r < 2^64) is the per-round nonce, ``domain``
    separates self masks from pairwise masks. The array is read-only (a view
    of the digest).
    """
    h = hashlib.shake_128(domain + seed + int(round_index).to_bytes(8, "little"))
    return np.frombuffer(h.digest(8 * int(dim)), dtype="<u8").astype(np.uint64, copy=False)


def shamir_share(
    secret: int, xs, threshold: int, rng: np.random.Generator, prime: int = SHAMIR_PRIME
) -> list[int]:
    """Return Shamir shares f(x) mod prime of ``secret`` at each x in ``xs`` (distinct, nonzero).

    f has degree ``threshold - 1``, f(0) = secret, and coefficients drawn as
    ``rng.bytes(40 (threshold - 1))``, 40 big-endian bytes each reduced mod
    prime (bias below 2^-64). Shamir, "How to share a secret", CACM 1979.
    """
    t = int(threshold)
    raw = rng.bytes(40 * (t - 1))
    coeffs = [int.from_bytes(raw[40 * c : 40 * (c + 1)], "big") % prime for c in range(t - 1)]
    secret %= prime
    out = []
    for x in xs:
        y = 0
        for c in reversed(coeffs):  # Horner
            y = (y + c) * x % prime
        out.append((y + secret) % prime)
    return out


def shamir_reconstruct(xs, ys, prime: int = SHAMIR_PRIME) -> int:
    """Return the degree-(len(xs) - 1) interpolant at 0: sum_j y_j prod_{m != j} x_m / (x_m - x_j) mod prime."""
    xs = [int(x) for x in xs]
    total = 0
    for j, (xj, yj) in enumerate(zip(xs, ys, strict=True)):
        num, den = 1, 1
        for m, xm in enumerate(xs):
            if m != j:
                num = num * xm % prime
                den = den * (xm - xj) % prime
        total += int(yj) * num * pow(den, -1, prime)
    return total % prime


def _ae_subkeys(key: bytes) -> tuple[bytes, bytes]:
    """Return (encryption key, MAC key) derived from a 32-byte pair key."""
    return hashlib.sha256(_LABEL_ENC + key).digest(), hashlib.sha256(_LABEL_MAC + key).digest()


def _seal(key: bytes, nonce: bytes, plaintext: bytes) -> bytes:
    """Return nonce || ciphertext || tag (len(plaintext) + 28 bytes), encrypt-then-MAC."""
    k_enc, k_mac = _ae_subkeys(key)
    stream = hashlib.shake_256(k_enc + nonce).digest(len(plaintext))
    ct = (int.from_bytes(plaintext, "big") ^ int.from_bytes(stream, "big")).to_bytes(
        len(plaintext), "big"
    )
    tag = hmac.new(k_mac, nonce + ct, hashlib.sha256).digest()[:_AE_TAG_BYTES]
    return nonce + ct + tag


def _open(key: bytes, sealed: bytes) -> bytes:
    """Return the plaintext of :func:`_seal`'s output; ValueError if the tag does not verify."""
    k_enc, k_mac = _ae_subkeys(key)
    nonce, ct = sealed[:_AE_NONCE_BYTES], sealed[_AE_NONCE_BYTES:-_AE_TAG_BYTES]
    tag = sealed[-_AE_TAG_BYTES:]
    want = hmac.new(k_mac, nonce + ct, hashlib.sha256).digest()[:_AE_TAG_BYTES]
    if not hmac.compare_digest(tag, want):
        raise ValueError("share ciphertext failed authentication")
    stream = hashlib.shake_256(k_enc + nonce).digest(len(ct))
    return (int.from_bytes(ct, "big") ^ int.from_bytes(stream, "big")).to_bytes(len(ct), "big")


# ---------------------------------------------------------------------------
# Configuration and the plan of one aggregation
# ---------------------------------------------------------------------------

#: ``graph = "auto"`` uses the complete graph (Bonawitz) up to this many clients.
AUTO_COMPLETE_MAX_CLIENTS = 100
#: Cost of one 2048-bit modular exponentiation in PRG-word equivalents (~4 ms
#: vs ~30 ns per SHAKE-128 word).
KEY_AGREEMENT_WORDS = 2**17
#: ``masking = "auto"`` runs the cryptography when n k (p + KEY_AGREEMENT_WORDS)
#: is at most this (a tenth of a second of CPU per aggregation: n k <= 32 key agreements).
AUTO_CRYPTO_MAX_WORK = 2**22


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
    masking: str = option(
        "auto",
        "'crypto' (real key agreement, shares and masks), 'skip' (no cryptography: same"
        " messages and bytes, identical sum) or 'auto' (crypto when n k (p + 2^17) <= 2^22: tiny sessions)",
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
    ``frac_bits`` and ``value_bound`` of the fixed point.
    """

    n_clients: int
    dim: int
    degree: int
    threshold: int
    masking: str
    rekey: str
    frac_bits: int
    value_bound: float

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
    ``n k (dim + KEY_AGREEMENT_WORDS) <= AUTO_CRYPTO_MAX_WORK``.
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
        masking = "crypto" if n * k * (p + KEY_AGREEMENT_WORDS) <= AUTO_CRYPTO_MAX_WORK else "skip"
    return SecAggPlan(
        n_clients=n,
        dim=p,
        degree=k,
        threshold=t,
        masking=masking,
        rekey=cfg.rekey,
        frac_bits=fixed_point_params(n, cfg.value_bound),
        value_bound=float(cfg.value_bound),
    )


# ---------------------------------------------------------------------------
# The neighbour graph
# ---------------------------------------------------------------------------


class NeighbourGraph:
    """An undirected k-regular graph on n clients: a Harary graph H(k, n) on a random ring order.

    Clients sit on a ring in the order ``order`` (client at each position)
    and are adjacent to the k/2 nearest positions on each side (k even, k <
    n - 1), the random Harary graph of SecAgg+ (Bell et al. 2020, Sec. 3).
    ``degree = n - 1`` is the complete graph (no order is drawn). Nothing
    here is O(n^2) unless the graph is complete and neighbours are listed.
    """

    def __init__(self, n_clients: int, degree: int, rng: np.random.Generator | None = None):
        n, k = int(n_clients), int(degree)
        if not 0 <= k <= n - 1:
            raise ValueError(f"degree must lie in 0..{n - 1}, got {degree}")
        if k < n - 1 and k % 2:
            raise ValueError(f"a k-regular graph here needs an even degree, got {degree}")
        self.n, self.degree = n, k
        if self.complete:
            self.order = np.arange(n, dtype=np.int64)
        else:
            if rng is None:
                raise ValueError("a k-regular graph needs a random generator")
            self.order = rng.permutation(n).astype(np.int64)
        self.position = np.empty(n, dtype=np.int64)
        self.position[self.order] = np.arange(n, dtype=np.int64)

    @property
    def complete(self) -> bool:
        """True when every client neighbours every other (degree n - 1)."""
        return self.degree == self.n - 1

    def neighbours(self, i: int) -> np.ndarray:
        """Return the sorted neighbour ids of client ``i`` (int64, (k,))."""
        i = int(i)
        if self.complete:
            return np.concatenate([np.arange(i), np.arange(i + 1, self.n)]).astype(np.int64)
        half = np.arange(1, self.degree // 2 + 1)
        pos = (self.position[i] + np.concatenate([half, -half])) % self.n
        return np.sort(self.order[pos])

    def neighbour_counts(self, mask) -> np.ndarray:
        """Return, for every client, how many of its neighbours have ``mask`` set (int64 (n,))."""
        m = np.asarray(mask, dtype=bool)
        if self.complete:
            return np.int64(np.count_nonzero(m)) - m.astype(np.int64)
        h = self.degree // 2
        ring = m[self.order].astype(np.int64)
        # window sums over ring positions q-h..q+h (wrapping) from one cumulative sum: O(n)
        cs = np.concatenate([[0], np.cumsum(np.concatenate([ring[-h:], ring, ring[:h]]))])
        c = cs[2 * h + 1 :] - cs[: self.n] - ring
        out = np.empty(self.n, dtype=np.int64)
        out[self.order] = c
        return out

    def edges(self) -> np.ndarray:
        """Return every edge once as (i, j) with i < j, lexicographically sorted (int64 (n k / 2, 2))."""
        if self.complete:
            i, j = np.triu_indices(self.n, 1)
            return np.stack([i, j], axis=1).astype(np.int64)
        q = np.arange(self.n)
        a = np.concatenate([self.order[q]] * (self.degree // 2))
        b = np.concatenate([self.order[(q + o) % self.n] for o in range(1, self.degree // 2 + 1)])
        e = np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1)
        return e[np.lexsort((e[:, 1], e[:, 0]))]

    def adjacency(self) -> np.ndarray:
        """Return the boolean adjacency matrix (n, n) (for small graphs and tests)."""
        adj = np.zeros((self.n, self.n), dtype=bool)
        e = self.edges()
        adj[e[:, 0], e[:, 1]] = True
        adj[e[:, 1], e[:, 0]] = True
        return adj


# ---------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------

#: The sender/receiver id of the server in :class:`StageMessages`.
SERVER = -1


def _stage_sizes(plan: SecAggPlan) -> dict[str, int]:
    """Return the bytes of one message of each (stage, direction), header included."""
    k, p = plan.degree, plan.dim
    return {
        "advertise_keys/up": HEADER_BYTES + 2 * DH_PUBLIC_KEY_BYTES,
        "advertise_keys/down": HEADER_BYTES + k * (CLIENT_ID_BYTES + 2 * DH_PUBLIC_KEY_BYTES),
        "share_keys/up": HEADER_BYTES + k * (CLIENT_ID_BYTES + SHARE_CIPHERTEXT_BYTES),
        "share_keys/down": HEADER_BYTES + k * (CLIENT_ID_BYTES + SHARE_CIPHERTEXT_BYTES),
        "masked_input/up": HEADER_BYTES + 8 * p,
        "survivors/down": HEADER_BYTES + (k + 7) // 8,
        "unmasking/up": HEADER_BYTES + (k + 1) * (CLIENT_ID_BYTES + SHARE_BYTES),
    }


def _record(stage: str, direction: str, messages: int, each: int) -> dict:
    """Return one stage record of :func:`protocol_messages`."""
    return {
        "stage": stage,
        "direction": direction,
        "messages": int(messages),
        "bytes": int(messages) * int(each),
        "bytes_per_message": int(each),
        "replaces_upload": stage == "masked_input",
    }


@dataclass(eq=False)
class StageMessages:
    """The messages of one protocol stage in one direction, as arrays (one entry per message).

    ``sender``/``receiver``: client ids, :data:`SERVER` (-1) for the server
    (int64 (m,)); ``nbytes``: bytes on the wire, header included (int64
    (m,)). ``payloads``: the bytes after the header (crypto masking, key
    and share stages only). ``vectors``: the masked uint64 inputs (m, p) of
    the ``masked_input`` stage. ``info``: extras (``saturated`` entries).
    """

    stage: str
    direction: str
    sender: np.ndarray
    receiver: np.ndarray
    nbytes: np.ndarray
    payloads: list[bytes] | None = None
    vectors: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    @property
    def messages(self) -> int:
        """Number of messages."""
        return int(self.nbytes.size)

    def record(self) -> dict:
        """Return the :func:`protocol_messages` record of this stage (sizes must be uniform)."""
        each = int(self.nbytes[0]) if self.messages else 0
        if self.messages and not np.all(self.nbytes == each):
            raise ValueError(f"{self.stage}/{self.direction}: message sizes differ")
        return _record(self.stage, self.direction, self.messages, each)


def _count(x, n: int, what: str) -> int:
    """Return a count from an int, a boolean mask (n,) or an index array."""
    if x is None:
        return n
    if np.isscalar(x):
        c = int(x)
    else:
        a = np.asarray(x)
        c = int(np.count_nonzero(a)) if a.dtype == bool else int(np.unique(a).size)
    if not 0 <= c <= n:
        raise ValueError(f"{what} must count 0..{n}, got {c}")
    return c


def protocol_messages(
    n_clients: int,
    dim: int,
    survivors=None,
    cfg: SecAggConfig | None = None,
    rekey_this_round: bool = True,
    responders=None,
) -> list[dict]:
    """Return the messages of one secure aggregation, one record per (stage, direction).

    ``survivors``: clients whose masked input the server received (a count,
    a boolean mask (n,) or an index array; ``None`` = all); ``responders``:
    survivors that answer the unmasking request (same forms; ``None`` = the
    survivors). ``rekey_this_round``: include the two key stages (always
    with ``rekey = "round"``; the first round only with ``"session"``).
    Each record: ``stage``, ``direction`` ('up' = to the server), ``messages``,
    ``bytes`` (total, headers included), ``bytes_per_message`` (every message
    of a stage has the same size) and ``replaces_upload`` (True for
    ``masked_input``: it stands in for the plain gradient upload of the same
    size, 64 + 8 p bytes, so it is not overhead). Sizes: module docstring.
    Pure counting, O(1): every client of a regular graph sends and receives
    the same.
    """
    plan = plan_secagg(n_clients, dim, cfg)
    n = plan.n_clients
    s = _count(survivors, n, "survivors")
    r = s if responders is None else _count(responders, s, "responders")
    size = _stage_sizes(plan)
    out = []
    if rekey_this_round:
        for stage in ("advertise_keys", "share_keys"):
            out.append(_record(stage, "up", n, size[f"{stage}/up"]))
            out.append(_record(stage, "down", n, size[f"{stage}/down"]))
    out.append(_record("masked_input", "up", n, size["masked_input/up"]))
    out.append(_record("survivors", "down", s, size["survivors/down"]))
    out.append(_record("unmasking", "up", r, size["unmasking/up"]))
    return out


# ---------------------------------------------------------------------------
# The session
# ---------------------------------------------------------------------------


class SecAggAborted(RuntimeError):
    """Too few shares reach the server: the round's aggregate is lost.

    ``client``: the first client whose secret cannot be reconstructed;
    ``secret``: ``"self-mask"`` (a survivor's b_i) or ``"key"`` (a dropped
    client's masking key); ``available`` shares vs ``threshold`` t;
    ``failing``: how many secrets fall short.
    """

    def __init__(self, client: int, secret: str, available: int, threshold: int, failing: int):
        self.client, self.secret = int(client), secret
        self.available, self.threshold, self.failing = int(available), int(threshold), int(failing)
        super().__init__(
            f"secure aggregation aborted: the {secret} of client {client} has {available}"
            f" shares among the responders, below the threshold t={threshold}"
            f" ({failing} secrets short); the round's aggregate is lost"
        )


def _as_mask(x, n: int, what: str) -> np.ndarray:
    """Return a boolean mask (n,) from a mask or an index array."""
    a = np.asarray(x)
    if a.dtype == bool:
        if a.shape != (n,):
            raise ValueError(f"{what} mask must have shape ({n},), got {a.shape}")
        return a.copy()
    a = a.astype(np.int64).ravel()
    if a.size and (a.min() < 0 or a.max() >= n):
        raise ValueError(f"{what} ids must lie in 0..{n - 1}")
    m = np.zeros(n, dtype=bool)
    m[a] = True
    return m


class SecureAggregation:
    """One secure-aggregation session among ``n_clients`` clients (ids 0..n-1) with vectors of ``dim``.

    Plays every party (clients and server) and returns, for each stage, what
    they send (:class:`StageMessages`), so that a network driver can ship and
    count the messages. Stages, in order: :meth:`advertise_keys`,
    :meth:`share_keys`, :meth:`masked_inputs` (or :meth:`masked_input`),
    :meth:`unmask_messages`, :meth:`unmask`. With ``rekey = "round"`` the two
    key stages precede every aggregation (:attr:`setup_due` says when);
    with ``"session"`` they run once and round indices must then increase
    from one unmasking to the next (a mask is never reused).
    Clients take part from the key stages on; dropouts happen at the masked
    input (``survivors``) and at unmasking (``responders``).

    Random draws: the constructor draws from ``rng`` the graph's ring order
    (``rng.permutation(n)``, k-regular only) and then 16 bytes that seed the
    session's own stream, identically for both masking modes, so ``rng`` ends
    in the same state whether cryptography runs or not. From the session's
    stream, crypto masking only: :meth:`advertise_keys` draws 2 n exponents
    (32 bytes each; client 0's encryption then masking key, client 1's, ...);
    :meth:`share_keys` draws n self-mask seeds (32 bytes each) and then, per
    client in id order, the polynomial coefficients of its key and of its
    seed (:func:`shamir_share`).

    Security caveat of ``rekey = "session"``: a dropped client's masking key
    is reconstructed, so its inputs in later rounds of the same session are
    protected by its self mask only; a deployment rekeys such clients.
    """

    def __init__(
        self,
        n_clients: int,
        dim: int,
        cfg: SecAggConfig | None,
        rng: np.random.Generator,
    ):
        self.cfg = cfg or SecAggConfig()
        self.plan = plan_secagg(n_clients, dim, self.cfg)
        self.n, self.dim = self.plan.n_clients, self.plan.dim
        self.fixed_point = FixedPoint(self.plan.frac_bits, self.plan.value_bound)
        self.graph = NeighbourGraph(self.n, self.plan.degree, rng)
        seed = int.from_bytes(rng.bytes(16), "little")
        self._rng = np.random.Generator(np.random.PCG64(seed))
        self.crypto = self.plan.masking == "crypto"
        self._sizes = _stage_sizes(self.plan)
        self._stage = "new"  # new -> advertised -> ready
        self._epoch = -1
        self._round: int | None = None
        self._last_round = -1
        self._sent = np.zeros(self.n, dtype=bool)
        self._saturated = 0
        #: info of the last successful :meth:`unmask`: frac_bits, saturated (entries clipped this
        #: round), survivors, responders, self_masks_reconstructed, keys_reconstructed, masking
        self.last_info: dict = {}
        self._nbrs: list[np.ndarray] | None = None
        if self.crypto:
            self._nbrs = [self.graph.neighbours(i) for i in range(self.n)]

    # -- state -------------------------------------------------------------

    @property
    def setup_due(self) -> bool:
        """True when :meth:`advertise_keys` and :meth:`share_keys` must run before the next input."""
        return self._stage != "ready"

    def _uniform(self, stage: str, direction: str, senders, receivers) -> StageMessages:
        """Return messages of the formula size (skip masking)."""
        s = np.asarray(senders, dtype=np.int64)
        r = np.broadcast_to(np.asarray(receivers, dtype=np.int64), s.shape).copy()
        nb = np.full(s.size, self._sizes[f"{stage}/{direction}"], dtype=np.int64)
        return StageMessages(stage, direction, s, r, nb)

    def _from_payloads(
        self, stage: str, direction: str, senders, receivers, payloads: list[bytes]
    ) -> StageMessages:
        """Return messages whose sizes are those of real payloads plus the header."""
        nb = np.fromiter((HEADER_BYTES + len(p) for p in payloads), np.int64, len(payloads))
        return StageMessages(
            stage,
            direction,
            np.asarray(senders, dtype=np.int64),
            np.asarray(receivers, dtype=np.int64),
            nb,
            payloads=payloads,
        )

    # -- AdvertiseKeys ------------------------------------------------------

    def advertise_keys(self) -> list[StageMessages]:
        """Run AdvertiseKeys: return [up (each client's two public keys), down (its neighbours' keys)].

        Starts a new key epoch (fresh key pairs), invalidating earlier shares.
        """
        ids = np.arange(self.n, dtype=np.int64)
        self._epoch += 1
        self._stage = "advertised"
        self._round = None
        self._last_round = -1  # fresh keys: round indices may restart
        self._sent[:] = False
        if not self.crypto:
            return [
                self._uniform("advertise_keys", "up", ids, SERVER),
                self._uniform("advertise_keys", "down", np.full(self.n, SERVER), ids),
            ]
        self._c_sk, self._c_pk, self._s_sk, self._s_pk = [], [], [], []
        for _ in range(self.n):
            for sk_list, pk_list in ((self._c_sk, self._c_pk), (self._s_sk, self._s_pk)):
                sk, pk = dh_keypair(self._rng)
                sk_list.append(sk)
                pk_list.append(pk)
        self._ae_keys: dict[tuple[int, int], bytes] = {}
        self._pair_seeds: dict[tuple[int, int], bytes] = {}
        self._server_keys: dict[int, int] = {}
        self._server_seeds: dict[tuple[int, int], bytes] = {}
        pkb = [
            _int_bytes(self._c_pk[i], DH_PUBLIC_KEY_BYTES)
            + _int_bytes(self._s_pk[i], DH_PUBLIC_KEY_BYTES)
            for i in range(self.n)
        ]
        down = [
            b"".join(_int_bytes(j, CLIENT_ID_BYTES) + pkb[j] for j in self._nbrs[i])
            for i in range(self.n)
        ]
        return [
            self._from_payloads("advertise_keys", "up", ids, np.full(self.n, SERVER), pkb),
            self._from_payloads("advertise_keys", "down", np.full(self.n, SERVER), ids, down),
        ]

    # -- ShareKeys ----------------------------------------------------------

    def _ae_key(self, i: int, j: int) -> bytes:
        """Return the share-encryption key of the pair {i, j} (from their encryption key pairs)."""
        pair = (min(i, j), max(i, j))
        if pair not in self._ae_keys:
            shared = dh_agree(self._c_sk[i], self._c_pk[j])
            self._ae_keys[pair] = hashlib.sha256(_DOMAIN_AE + shared + _pair_id(i, j)).digest()
        return self._ae_keys[pair]

    def _nonce(self, i: int, j: int) -> bytes:
        """Return the 12-byte nonce of the share ciphertext from i to j in this epoch."""
        return b"".join(_int_bytes(v, CLIENT_ID_BYTES) for v in (self._epoch, i, j))

    def share_keys(self) -> list[StageMessages]:
        """Run ShareKeys: return [up (each client's encrypted shares for its neighbours), down (those addressed to it)].

        Each client draws its self-mask seed b_i and Shamir-shares b_i and its
        masking secret key among its h = k + 1 holders (t-of-h); the share
        for itself stays local, the others go, encrypted, through the server.
        Receivers decrypt and keep their shares.
        """
        if self._stage != "advertised":
            raise RuntimeError("share_keys() must follow advertise_keys()")
        self._stage = "ready"
        ids = np.arange(self.n, dtype=np.int64)
        srv = np.full(self.n, SERVER)
        if not self.crypto:
            return [
                self._uniform("share_keys", "up", ids, SERVER),
                self._uniform("share_keys", "down", srv, ids),
            ]
        t = self.plan.threshold
        raw = self._rng.bytes(32 * self.n)
        # 254-bit seeds, below SHAMIR_PRIME
        self._b = [int.from_bytes(raw[32 * i : 32 * i + 32], "big") >> 2 for i in range(self.n)]
        self._held: list[dict[int, tuple[int, int]]] = [{} for _ in range(self.n)]
        up: list[bytes] = []
        inbox: list[list[tuple[int, bytes]]] = [[] for _ in range(self.n)]
        for i in range(self.n):
            holders = np.sort(np.append(self._nbrs[i], i))
            xs = [int(j) + 1 for j in holders]
            sk_sh = shamir_share(self._s_sk[i], xs, t, self._rng)
            b_sh = shamir_share(self._b[i], xs, t, self._rng)
            parts = []
            for j, a, b in zip(holders.tolist(), sk_sh, b_sh, strict=True):
                if j == i:
                    self._held[i][i] = (a, b)
                    continue
                pt = (
                    _int_bytes(i, CLIENT_ID_BYTES)
                    + _int_bytes(j, CLIENT_ID_BYTES)
                    + _int_bytes(a, SHARE_BYTES)
                    + _int_bytes(b, SHARE_BYTES)
                )
                ct = _seal(self._ae_key(i, j), self._nonce(i, j), pt)
                parts.append(_int_bytes(j, CLIENT_ID_BYTES) + ct)
                inbox[j].append((i, ct))
            up.append(b"".join(parts))
        down = []
        for j in range(self.n):
            down.append(b"".join(_int_bytes(i, CLIENT_ID_BYTES) + ct for i, ct in inbox[j]))
            for i, ct in inbox[j]:
                pt = _open(self._ae_key(j, i), ct)
                if pt[:8] != _int_bytes(i, CLIENT_ID_BYTES) + _int_bytes(j, CLIENT_ID_BYTES):
                    raise ValueError(f"share from {i} to {j} carries the wrong ids")
                self._held[j][i] = (int.from_bytes(pt[8:40], "big"), int.from_bytes(pt[40:], "big"))
        return [
            self._from_payloads("share_keys", "up", ids, srv, up),
            self._from_payloads("share_keys", "down", srv, ids, down),
        ]

    # -- MaskedInputCollection ---------------------------------------------

    def _pair_seed(self, i: int, j: int) -> bytes:
        """Return s_ij = SHA-256(domain || DH(s_i^SK, s_j^PK) || ids), as either end derives it."""
        pair = (min(i, j), max(i, j))
        if pair not in self._pair_seeds:
            shared = dh_agree(self._s_sk[i], self._s_pk[j])
            self._pair_seeds[pair] = hashlib.sha256(_DOMAIN_PAIR + shared + _pair_id(i, j)).digest()
        return self._pair_seeds[pair]

    def masked_inputs(self, clients, values, weights, round_index: int) -> StageMessages:
        """Return the ``masked_input`` uploads of ``clients`` (ids (m,)) for ``round_index``.

        ``values``: float (m, p), ``weights``: (m,). ``vectors`` holds y_i
        (uint64 (m, p)): enc(a_i x_i) + PRG(b_i) + sum_{j > i} PRG(s_ij) -
        sum_{j < i} PRG(s_ij) mod 2^64 (crypto), or enc(a_i x_i) alone (skip).
        ``info["saturated"]``: entries clipped to the value bound. May be
        called several times per round for disjoint client batches.
        """
        if self._stage != "ready":
            raise RuntimeError("call advertise_keys() and share_keys() before masked_inputs()")
        r = int(round_index)
        if not 0 <= r < 2**64:
            raise ValueError(f"round_index must lie in 0..2^64-1, got {round_index}")
        if r != self._round:
            if r <= self._last_round:
                raise ValueError(
                    f"round {r} is not after the last unmasked round {self._last_round}:"
                    " masks would repeat"
                )
            self._round = r
            self._sent[:] = False
            self._saturated = 0
        ids = np.asarray(clients, dtype=np.int64).ravel()
        if ids.size and (ids.min() < 0 or ids.max() >= self.n):
            raise ValueError(f"client ids must lie in 0..{self.n - 1}")
        if (ids.size and np.bincount(ids, minlength=self.n).max() > 1) or self._sent[ids].any():
            raise ValueError("a client sends one masked input per round")
        y, saturated = self.fixed_point.encode(values, weights)
        if y.shape != (ids.size, self.dim):
            raise ValueError(f"values must be ({ids.size}, {self.dim}), got {y.shape}")
        self._sent[ids] = True
        self._saturated += saturated
        if self.crypto and ids.size:
            row = {int(c): k for k, c in enumerate(ids)}
            for k, c in enumerate(ids.tolist()):
                y[k] += prg(_int_bytes(self._b[c], SHARE_BYTES), self.dim, r, _DOMAIN_SELF)
            e = self.graph.edges()
            mine = np.zeros(self.n, dtype=bool)
            mine[ids] = True
            e = e[mine[e[:, 0]] | mine[e[:, 1]]]
            for i, j in e.tolist():  # i < j: i adds, j subtracts
                mask = prg(self._pair_seed(i, j), self.dim, r, _DOMAIN_PAIR)
                if i in row:
                    y[row[i]] += mask
                if j in row:
                    y[row[j]] -= mask
        nb = np.full(ids.size, self._sizes["masked_input/up"], dtype=np.int64)
        return StageMessages(
            "masked_input",
            "up",
            ids.copy(),
            np.full(ids.size, SERVER, dtype=np.int64),
            nb,
            vectors=y,
            info={"saturated": saturated},
        )

    def masked_input(self, i: int, values_row, weight: float, round_index: int) -> StageMessages:
        """Return client ``i``'s single ``masked_input`` upload (``values_row``: float (p,))."""
        return self.masked_inputs(
            [i], np.asarray(values_row, dtype=np.float64)[None, :], [weight], round_index
        )

    # -- Unmasking ----------------------------------------------------------

    def _masks(self, survivors, responders) -> tuple[np.ndarray, np.ndarray]:
        """Return (survivor mask, responder mask) after checking them against the round."""
        if self._stage != "ready" or self._round is None:
            raise RuntimeError("no masked inputs this round")
        s = _as_mask(survivors, self.n, "survivors")
        if (s & ~self._sent).any():
            raise ValueError("a survivor sent no masked input this round")
        r = s.copy() if responders is None else _as_mask(responders, self.n, "responders")
        if (r & ~s).any():
            raise ValueError("responders must be survivors")
        return s, r

    def unmask_messages(self, survivors, responders=None) -> list[StageMessages]:
        """Return [survivors (down, to each survivor: a bitmap of its surviving neighbours), unmasking (up)].

        ``survivors``/``responders``: boolean masks (n,) or id arrays.
        Each responder sends one share per client it holds shares of (its
        neighbours and itself): of b_i for a survivor i, of the masking key
        for a dropped one.
        """
        s, r = self._masks(survivors, responders)
        sid, rid = np.flatnonzero(s), np.flatnonzero(r)
        if not self.crypto:
            return [
                self._uniform("survivors", "down", np.full(sid.size, SERVER), sid),
                self._uniform("unmasking", "up", rid, SERVER),
            ]
        down = [np.packbits(s[self._nbrs[i]]).tobytes() for i in sid.tolist()]
        up = []
        for j in rid.tolist():
            parts = []
            for i in sorted(self._held[j]):
                a, b = self._held[j][i]
                parts.append(_int_bytes(i, CLIENT_ID_BYTES) + _int_bytes(b if s[i] else a, 32))
            up.append(b"".join(parts))
        return [
            self._from_payloads("survivors", "down", np.full(sid.size, SERVER), sid, down),
            self._from_payloads("unmasking", "up", rid, np.full(rid.size, SERVER), up),
        ]

    def _check_shares(self, s: np.ndarray, r: np.ndarray) -> None:
        """Raise :class:`SecAggAborted` unless every needed secret has t shares among responders."""
        t = self.plan.threshold
        c_r = self.graph.neighbour_counts(r)
        avail_b = c_r + r
        fail_b = s & (avail_b < t)
        need_key = ~s & (self.graph.neighbour_counts(s) > 0)
        fail_key = need_key & (c_r < t)
        failing = int(np.count_nonzero(fail_b) + np.count_nonzero(fail_key))
        if not failing:
            return
        if fail_b.any():
            i = int(np.flatnonzero(fail_b)[0])
            raise SecAggAborted(i, "self-mask", avail_b[i], t, failing)
        i = int(np.flatnonzero(fail_key)[0])
        raise SecAggAborted(i, "key", c_r[i], t, failing)

    def _reconstruct(self, owner: int, r: np.ndarray, which: int) -> int:
        """Return secret ``which`` (0: key, 1: b) of ``owner`` from the first t responders' shares."""
        holders = [j for j in sorted(self._held_by(owner)) if r[j]][: self.plan.threshold]
        xs = [j + 1 for j in holders]
        ys = [self._held[j][owner][which] for j in holders]
        return shamir_reconstruct(xs, ys)

    def _held_by(self, owner: int) -> list[int]:
        """Return the clients holding shares of ``owner``'s secrets (its neighbours and itself)."""
        return [*self._nbrs[owner].tolist(), owner]

    def unmask(self, survivors, masked, round_index: int, responders=None) -> np.ndarray:
        """Return the float64 aggregate (p,) of the survivors' weighted vectors, masks removed.

        ``survivors``: boolean mask (n,) or ids of the clients whose masked
        input the server received; ``masked``: their sum mod 2^64 (uint64
        (p,)) or their vectors (uint64 (m, p)); ``responders``: survivors that
        answer the unmasking request (default all survivors). Raises
        :class:`SecAggAborted` if some needed secret has fewer than t shares
        among the responders (checked before any reconstruction). Equals
        :func:`aggregate_plain` of the survivors' rows, bit for bit. With
        ``rekey = "round"`` the key epoch ends here (also on abort).
        """
        s, r = self._masks(survivors, responders)
        if int(round_index) != self._round:
            raise ValueError(f"masked inputs are for round {self._round}, not {round_index}")
        y = np.asarray(masked)
        if y.dtype != np.uint64:
            raise TypeError(f"masked inputs must be uint64, got {y.dtype}")
        if y.ndim == 2:
            if y.shape[0] != np.count_nonzero(s):
                raise ValueError(f"{y.shape[0]} masked vectors for {np.count_nonzero(s)} survivors")
            y = y.sum(axis=0, dtype=np.uint64)
        if y.shape != (self.dim,):
            raise ValueError(f"masked sum must have shape ({self.dim},), got {y.shape}")
        total = y.copy()
        rr = self._last_round = self._round
        self._round = None
        if self.plan.rekey == "round":
            self._stage = "new"
        self._check_shares(s, r)
        need = ~s & (self.graph.neighbour_counts(s) > 0)
        info = {
            "frac_bits": self.plan.frac_bits,
            "saturated": self._saturated,
            "survivors": int(np.count_nonzero(s)),
            "responders": int(np.count_nonzero(r)),
            "self_masks_reconstructed": int(np.count_nonzero(s)),
            "keys_reconstructed": int(np.count_nonzero(need)),
            "masking": self.plan.masking,
        }
        if self.crypto:
            for i in np.flatnonzero(s).tolist():
                b = self._reconstruct(i, r, 1)
                total -= prg(_int_bytes(b, SHARE_BYTES), self.dim, rr, _DOMAIN_SELF)
            for d in np.flatnonzero(need).tolist():
                if d not in self._server_keys:
                    sk = self._reconstruct(d, r, 0)
                    if pow(FFDHE2048_G, sk, FFDHE2048_P) != self._s_pk[d]:
                        raise RuntimeError(f"reconstructed key of client {d} does not match")
                    self._server_keys[d] = sk
                for i in self._nbrs[d].tolist():
                    if not s[i]:
                        continue
                    pair = (min(i, d), max(i, d))
                    if pair not in self._server_seeds:
                        shared = dh_agree(self._server_keys[d], self._s_pk[i])
                        self._server_seeds[pair] = hashlib.sha256(
                            _DOMAIN_PAIR + shared + _pair_id(i, d)
                        ).digest()
                    mask = prg(self._server_seeds[pair], self.dim, rr, _DOMAIN_PAIR)
                    if i < d:  # survivor i added PRG(s_id)
                        total -= mask
                    else:
                        total += mask
        self.last_info = info
        return self.fixed_point.decode(total)

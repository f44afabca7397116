"""The secure-aggregation session: :class:`SecureAggregation` plays every client and the server.

Client i sends, mod 2^64,

    y_i = enc(a_i x_i) + PRG(b_i) + sum_{j in N(i), j > i} PRG(s_ij)
                                  - sum_{j in N(i), j < i} PRG(s_ij)

(Bonawitz et al. 2017, Sec. 4): the pairwise masks cancel in the sum, and the
server removes the self masks b_i of the survivors and the pairwise masks of
the dropped clients from t Shamir shares (:mod:`~edgesim.network.secagg.unmasking`).
This module holds the session's state and the stages up to the masked input.
``masking = "skip"`` runs no cryptography: it sends the unmasked encodings
and counts the same messages; the sum is identical because the masks cancel
exactly. The crypto path loops over clients and pairs in Python, so
``masking = "auto"`` keeps it to small sessions.
"""

from __future__ import annotations

import numpy as np

from edgesim.mechanisms.fixed_point import FixedPoint
from edgesim.mechanisms.protocol import HEADER_BYTES
from edgesim.network.secagg.config import SecAggConfig, plan_secagg
from edgesim.network.secagg.crypto import (
    CLIENT_ID_BYTES,
    DOMAIN_PAIR_MASK,
    DOMAIN_SELF_MASK,
    INFO_PAIR_SEED,
    INFO_SHARE_KEY,
    SHARE_BYTES,
    draw_seeds,
    hkdf_sha256,
    int_bytes,
    pair_id,
    prg,
    shamir_share,
)
from edgesim.network.secagg.graph import NeighbourGraph
from edgesim.network.secagg.messages import SERVER, StageMessages, stage_sizes
from edgesim.network.secagg.profiles import get_profile
from edgesim.network.secagg.unmasking import Unmasking


class SecureAggregation(Unmasking):
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
    stream, crypto masking only: :meth:`advertise_keys` draws 2 n key seeds
    (32 bytes each, :func:`draw_seeds`; client 0's encryption then masking
    key seed, client 1's, ...), from which the profile derives each private
    key; :meth:`share_keys` draws n self-mask seeds (32 bytes each) and then,
    per client in id order, the polynomial coefficients of its masking-key
    seed and of its self-mask seed (:func:`shamir_share`). Keys are
    therefore reproducible from the scenario's seed, by design: not secret.

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
        self.profile = get_profile(self.plan.profile)
        self._sizes = stage_sizes(self.plan)
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
        prof = self.profile
        seeds = draw_seeds(self._rng, 2 * self.n)
        self._s_seed = seeds[1::2]  # masking-key seeds: Shamir-shared in share_keys
        self._c_sk = [prof.private_key(x) for x in seeds[0::2]]
        self._s_sk = [prof.private_key(x) for x in self._s_seed]
        c_pk = [prof.public_bytes(sk) for sk in self._c_sk]
        self._s_pk = [prof.public_bytes(sk) for sk in self._s_sk]
        # each client parses its neighbours' keys as received; parsed once per client here
        self._c_pub = [prof.load_public(b) for b in c_pk]
        self._s_pub = [prof.load_public(b) for b in self._s_pk]
        self._ae_keys: dict[tuple[int, int], bytes] = {}
        self._pair_seeds: dict[tuple[int, int], bytes] = {}
        self._server_keys: dict[int, object] = {}
        self._server_seeds: dict[tuple[int, int], bytes] = {}
        pkb = [c_pk[i] + self._s_pk[i] for i in range(self.n)]
        down = [
            b"".join(int_bytes(j, CLIENT_ID_BYTES) + pkb[j] for j in self._nbrs[i])
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
            shared = self.profile.agree(self._c_sk[i], self._c_pub[j])
            self._ae_keys[pair] = hkdf_sha256(shared, INFO_SHARE_KEY + pair_id(i, j))
        return self._ae_keys[pair]

    def _nonce(self, i: int, j: int) -> bytes:
        """Return the 12-byte nonce of the share ciphertext from i to j in this epoch."""
        return b"".join(int_bytes(v, CLIENT_ID_BYTES) for v in (self._epoch, i, j))

    def share_keys(self) -> list[StageMessages]:
        """Run ShareKeys: return [up (each client's encrypted shares for its neighbours), down (those addressed to it)].

        Each client draws its self-mask seed b_i and Shamir-shares b_i and the
        seed of its masking private key among its h = k + 1 holders (t-of-h);
        the share for itself stays local, the others go, encrypted with the
        profile's cipher under the pair's HKDF key, through the server.
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
        self._b = draw_seeds(self._rng, self.n)  # 254-bit seeds, below SHAMIR_PRIME
        self._held: list[dict[int, tuple[int, int]]] = [{} for _ in range(self.n)]
        up: list[bytes] = []
        inbox: list[list[tuple[int, bytes]]] = [[] for _ in range(self.n)]
        for i in range(self.n):
            holders = np.sort(np.append(self._nbrs[i], i))
            xs = [int(j) + 1 for j in holders]
            sk_sh = shamir_share(int.from_bytes(self._s_seed[i], "big"), xs, t, self._rng)
            b_sh = shamir_share(int.from_bytes(self._b[i], "big"), xs, t, self._rng)
            parts = []
            for j, a, b in zip(holders.tolist(), sk_sh, b_sh, strict=True):
                if j == i:
                    self._held[i][i] = (a, b)
                    continue
                pt = (
                    int_bytes(i, CLIENT_ID_BYTES)
                    + int_bytes(j, CLIENT_ID_BYTES)
                    + int_bytes(a, SHARE_BYTES)
                    + int_bytes(b, SHARE_BYTES)
                )
                ct = self.profile.seal(self._ae_key(i, j), self._nonce(i, j), pt)
                parts.append(int_bytes(j, CLIENT_ID_BYTES) + ct)
                inbox[j].append((i, ct))
            up.append(b"".join(parts))
        down = []
        for j in range(self.n):
            down.append(b"".join(int_bytes(i, CLIENT_ID_BYTES) + ct for i, ct in inbox[j]))
            for i, ct in inbox[j]:
                pt = self.profile.open(self._ae_key(j, i), ct)
                if pt[:8] != int_bytes(i, CLIENT_ID_BYTES) + int_bytes(j, CLIENT_ID_BYTES):
                    raise ValueError(f"share from {i} to {j} carries the wrong ids")
                self._held[j][i] = (int.from_bytes(pt[8:40], "big"), int.from_bytes(pt[40:], "big"))
        return [
            self._from_payloads("share_keys", "up", ids, srv, up),
            self._from_payloads("share_keys", "down", srv, ids, down),
        ]

    # -- MaskedInputCollection ---------------------------------------------

    def _pair_seed(self, i: int, j: int) -> bytes:
        """Return s_ij = HKDF-SHA256(KA(s_i^SK, s_j^PK), info || ids), as either end derives it."""
        pair = (min(i, j), max(i, j))
        if pair not in self._pair_seeds:
            shared = self.profile.agree(self._s_sk[i], self._s_pub[j])
            self._pair_seeds[pair] = hkdf_sha256(shared, INFO_PAIR_SEED + pair_id(i, j))
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
                y[k] += prg(self._b[c], self.dim, r, DOMAIN_SELF_MASK)
            e = self.graph.edges()
            mine = np.zeros(self.n, dtype=bool)
            mine[ids] = True
            e = e[mine[e[:, 0]] | mine[e[:, 1]]]
            for i, j in e.tolist():  # i < j: i adds, j subtracts
                mask = prg(self._pair_seed(i, j), self.dim, r, DOMAIN_PAIR_MASK)
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

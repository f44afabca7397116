"""Secure aggregation's last stage: the server unmasks the sum, or aborts (:class:`SecAggAborted`).

From t Shamir shares sent by the responders the server reconstructs b_i of
every survivor (and removes PRG(b_i)) and the masking-key seed of every
dropped client with a surviving neighbour (derives its private key, checks it
against the advertised public key, and recomputes and removes its pairwise
masks with those neighbours). :class:`Unmasking` holds these methods of
:class:`~edgesim.network.secagg.session.SecureAggregation`, which inherits
them; they use the session's state.
"""

from __future__ import annotations

import numpy as np

from edgesim.network.secagg.crypto import (
    CLIENT_ID_BYTES,
    DOMAIN_PAIR_MASK,
    DOMAIN_SELF_MASK,
    INFO_PAIR_SEED,
    SEED_BYTES,
    SHARE_BYTES,
    hkdf_sha256,
    int_bytes,
    pair_id,
    prg,
    shamir_reconstruct,
)
from edgesim.network.secagg.messages import SERVER, StageMessages


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


class Unmasking:
    """The Unmasking stage: a base class of :class:`~edgesim.network.secagg.session.SecureAggregation`."""

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
                parts.append(
                    int_bytes(i, CLIENT_ID_BYTES) + int_bytes(b if s[i] else a, SHARE_BYTES)
                )
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

    def _reconstruct(self, owner: int, r: np.ndarray, which: int) -> bytes:
        """Return seed ``which`` (0: masking key's, 1: b) of ``owner`` from the first t responders' shares."""
        holders = [j for j in sorted(self._held_by(owner)) if r[j]][: self.plan.threshold]
        xs = [j + 1 for j in holders]
        ys = [self._held[j][owner][which] for j in holders]
        return int_bytes(shamir_reconstruct(xs, ys), SEED_BYTES)

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
                total -= prg(b, self.dim, rr, DOMAIN_SELF_MASK)
            for d in np.flatnonzero(need).tolist():
                if d not in self._server_keys:
                    sk = self.profile.private_key(self._reconstruct(d, r, 0))
                    if self.profile.public_bytes(sk) != self._s_pk[d]:
                        raise RuntimeError(f"reconstructed key of client {d} does not match")
                    self._server_keys[d] = sk
                for i in self._nbrs[d].tolist():
                    if not s[i]:
                        continue
                    pair = (min(i, d), max(i, d))
                    if pair not in self._server_seeds:
                        shared = self.profile.agree(self._server_keys[d], self._s_pub[i])
                        self._server_seeds[pair] = hkdf_sha256(
                            shared, INFO_PAIR_SEED + pair_id(i, d)
                        )
                    mask = prg(self._server_seeds[pair], self.dim, rr, DOMAIN_PAIR_MASK)
                    if i < d:  # survivor i added PRG(s_id)
                        total -= mask
                    else:
                        total += mask
        self.last_info = info
        return self.fixed_point.decode(total)

"""Secure aggregation's messages: :class:`StageMessages` and the counts of :func:`protocol_messages`.

Every message carries ``HEADER_BYTES`` = 64 bytes of header; ids are 4
bytes, k is the degree, p the vector length, K the bytes of one public key
and C those of one encrypted share in the session's profile
(:mod:`~edgesim.network.secagg.profiles`: K = 32, C = 100 for x25519; 215,
184 for flower; 256, 100 for ffdhe2048); no signatures are modelled:

=================  =====  ===========  ====================================
stage              dir    messages     bytes each
=================  =====  ===========  ====================================
advertise_keys     up     n            64 + 2 K (two public keys)
advertise_keys     down   n            64 + k (4 + 2 K) (neighbours' keys)
share_keys         up     n            64 + k (4 + C) (encrypted shares)
share_keys         down   n            64 + k (4 + C) (shares for it)
masked_input       up     n            64 + 8 p (replaces the plain upload)
survivors          down   survivors    64 + ceil(k / 8) (neighbour bitmap)
unmasking          up     responders   64 + (k + 1)(4 + 32) (for itself and
                                       each neighbour i: a share of b_i if
                                       i survived, else of i's key)
=================  =====  ===========  ====================================

An encrypted share's plaintext is 72 bytes: sender id, receiver id, the
share of the masking key's seed and of the self-mask seed (4 + 4 + 32 + 32);
AES-GCM adds 28 (nonce and tag), Fernet makes it a 184-byte token. The two key stages run in every
aggregation with ``rekey = "round"`` and once per session with ``rekey =
"session"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from edgesim.mechanisms.protocol import HEADER_BYTES
from edgesim.network.secagg.config import SecAggConfig, SecAggPlan, plan_secagg
from edgesim.network.secagg.crypto import CLIENT_ID_BYTES, SHARE_BYTES, SHARE_PLAINTEXT_BYTES
from edgesim.network.secagg.profiles import get_profile

#: The sender/receiver id of the server in :class:`StageMessages`.
SERVER = -1


def stage_sizes(plan: SecAggPlan) -> dict[str, int]:
    """Return the bytes of one message of each (stage, direction), header included.

    Key and share sizes are those of ``plan.profile`` (module docstring).
    """
    k, p = plan.degree, plan.dim
    prof = get_profile(plan.profile)
    keys = 2 * prof.public_key_bytes
    share = prof.ciphertext_bytes(SHARE_PLAINTEXT_BYTES)
    return {
        "advertise_keys/up": HEADER_BYTES + keys,
        "advertise_keys/down": HEADER_BYTES + k * (CLIENT_ID_BYTES + keys),
        "share_keys/up": HEADER_BYTES + k * (CLIENT_ID_BYTES + share),
        "share_keys/down": HEADER_BYTES + k * (CLIENT_ID_BYTES + share),
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
    size = stage_sizes(plan)
    out = []
    if rekey_this_round:
        for stage in ("advertise_keys", "share_keys"):
            out.append(_record(stage, "up", n, size[f"{stage}/up"]))
            out.append(_record(stage, "down", n, size[f"{stage}/down"]))
    out.append(_record("masked_input", "up", n, size["masked_input/up"]))
    out.append(_record("survivors", "down", s, size["survivors/down"]))
    out.append(_record("unmasking", "up", r, size["unmasking/up"]))
    return out

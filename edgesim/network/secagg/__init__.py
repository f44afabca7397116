"""Secure aggregation: Bonawitz et al. (CCS 2017) and SecAgg+ (Bell et al., CCS 2020), simulated.

The server of a federated mechanism learns only the sum of the surviving
clients' weighted vectors a_i x_i, encoded in fixed point mod 2^64
(:mod:`edgesim.mechanisms.fixed_point`). Each client adds pairwise masks,
which cancel in the sum, and a self mask; from Shamir shares the server
recovers the survivors' self-mask seeds and the dropped clients' masking
keys, and removes the masks that remain. This is the semi-honest protocol of
Bonawitz et al. (Sec. 4, Fig. 4: AdvertiseKeys, ShareKeys,
MaskedInputCollection, Unmasking; no ConsistencyCheck, no signatures) over
the complete graph or, as in SecAgg+, a random k-regular neighbour graph.
Its result equals :func:`aggregate_plain` of the survivors' rows bit for
bit.

The primitives are the ``cryptography`` package's (a core dependency):
X25519, P-384 ECDH or ffdhe2048 key agreement by profile, HKDF-SHA256,
AES-GCM or Fernet for the shares, ChaCha20 for the masks. Secrets (key
seeds, self-mask seeds, polynomial coefficients) are drawn from a seeded
``numpy.random.Generator`` so that simulations are reproducible: the keys are
reproducible by design, not secret; a production system draws them from a
CSPRNG (``secrets``).

The package, one job a module: :mod:`~edgesim.network.secagg.crypto`
(HKDF, ChaCha20 PRG, Shamir sharing, share encryption),
:mod:`~edgesim.network.secagg.profiles` (key agreement and message encodings
by profile: x25519, flower, ffdhe2048),
:mod:`~edgesim.network.secagg.config` (``[network.secagg]``, the plan),
:mod:`~edgesim.network.secagg.graph` (the neighbour graph),
:mod:`~edgesim.network.secagg.messages` (message sizes and counts),
:mod:`~edgesim.network.secagg.session` (the session, key stages and masked
input) and :mod:`~edgesim.network.secagg.unmasking` (unmasking and aborts).
Every name is also here, as ``edgesim.network.secagg.NAME``, with the
fixed-point helpers of :mod:`edgesim.mechanisms.fixed_point`.
"""

from __future__ import annotations

from edgesim.mechanisms.fixed_point import (
    DEFAULT_VALUE_BOUND,
    FixedPoint,
    aggregate_plain,
    decode,
    encode,
    encode_with_saturation,
    fixed_point_params,
)
from edgesim.network.secagg.config import (
    AUTO_COMPLETE_MAX_CLIENTS,
    AUTO_CRYPTO_MAX_WORK,
    KEY_AGREEMENT_WORDS,
    SecAggConfig,
    SecAggPlan,
    auto_degree,
    plan_secagg,
)
from edgesim.network.secagg.crypto import (
    AES_GCM_OVERHEAD_BYTES,
    SHAMIR_PRIME,
    SHARE_BYTES,
    aes_gcm_open,
    aes_gcm_seal,
    chacha20_keystream,
    fernet_open,
    fernet_seal,
    hkdf_sha256,
    prg,
    shamir_reconstruct,
    shamir_share,
)
from edgesim.network.secagg.crypto import CLIENT_ID_BYTES as CLIENT_ID_BYTES
from edgesim.network.secagg.crypto import SHARE_PLAINTEXT_BYTES as SHARE_PLAINTEXT_BYTES
from edgesim.network.secagg.graph import NeighbourGraph
from edgesim.network.secagg.messages import SERVER, StageMessages, protocol_messages
from edgesim.network.secagg.profiles import (
    FFDHE2048_G,
    FFDHE2048_P,
    PROFILES,
    Profile,
    get_profile,
)
from edgesim.network.secagg.session import SecureAggregation
from edgesim.network.secagg.unmasking import SecAggAborted

__all__ = [
    "AES_GCM_OVERHEAD_BYTES",
    "AUTO_COMPLETE_MAX_CLIENTS",
    "AUTO_CRYPTO_MAX_WORK",
    "DEFAULT_VALUE_BOUND",
    "FFDHE2048_G",
    "FFDHE2048_P",
    "FixedPoint",
    "KEY_AGREEMENT_WORDS",
    "NeighbourGraph",
    "PROFILES",
    "Profile",
    "SHAMIR_PRIME",
    "SERVER",
    "SHARE_BYTES",
    "SecAggAborted",
    "SecAggConfig",
    "SecAggPlan",
    "SecureAggregation",
    "StageMessages",
    "aes_gcm_open",
    "aes_gcm_seal",
    "aggregate_plain",
    "auto_degree",
    "chacha20_keystream",
    "decode",
    "encode",
    "encode_with_saturation",
    "fernet_open",
    "fernet_seal",
    "fixed_point_params",
    "get_profile",
    "hkdf_sha256",
    "plan_secagg",
    "prg",
    "protocol_messages",
    "shamir_reconstruct",
    "shamir_share",
]

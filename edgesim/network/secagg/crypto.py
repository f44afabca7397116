"""Secure aggregation's cryptographic building blocks (Python stdlib + numpy only).

- Key agreement: finite-field Diffie-Hellman in the RFC 7919 group
  ``ffdhe2048`` (generator 2) with 254-bit secret exponents (RFC 7919 App.
  A.1 asks for at least 225); public keys and shared secrets are 256 bytes.
  Its modular exponentiations (Python's ``pow``, a few ms each) dominate
  the crypto path.
- PRG (:func:`prg`): SHAKE-128 of ``domain || seed || round`` (round as 8
  little-endian bytes: the per-round nonce) read as little-endian uint64
  words; the domain separates self masks from pairwise masks.
- Shamir t-of-h sharing over GF(2^255 - 19) (shares 32 bytes), Lagrange
  interpolation at 0 to reconstruct (:func:`shamir_share`,
  :func:`shamir_reconstruct`).
- Share encryption (:func:`seal`, :func:`open_sealed`): an encrypt-then-MAC
  stand-in for AES-GCM (no AES in the standard library): keystream
  SHAKE-256(k_enc || nonce), tag HMAC-SHA256(k_mac, nonce || ct) cut to 16
  bytes, 12-byte nonce; the same 28 bytes of overhead as AES-GCM.

The session (:mod:`edgesim.network.secagg.session`) derives a pair's seed or
encryption key as SHA-256(domain || DH secret || min(i, j) || max(i, j)),
ids as 4 big-endian bytes.
"""

from __future__ import annotations

import hashlib
import hmac

import numpy as np

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

#: Domain of :func:`prg` for a client's self mask PRG(b_i).
DOMAIN_SELF_MASK = b"edgesim/secagg/v1/self-mask\x00"
#: Domain of :func:`prg` for a pairwise mask, and of the pair seed's SHA-256.
DOMAIN_PAIR_MASK = b"edgesim/secagg/v1/pair-mask\x00"
#: Domain of the SHA-256 that derives a pair's share-encryption key (:func:`seal`).
DOMAIN_SHARE_ENCRYPTION = b"edgesim/secagg/v1/share-encryption\x00"
_LABEL_ENC = b"edgesim/secagg/v1/ae-enc\x00"
_LABEL_MAC = b"edgesim/secagg/v1/ae-mac\x00"


def int_bytes(x: int, n: int) -> bytes:
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
    return int_bytes(pow(peer_public, secret, FFDHE2048_P), DH_PUBLIC_KEY_BYTES)


def pair_id(i: int, j: int) -> bytes:
    """Return the 8-byte context of the unordered pair {i, j}."""
    return int_bytes(min(i, j), CLIENT_ID_BYTES) + int_bytes(max(i, j), CLIENT_ID_BYTES)


def prg(seed: bytes, dim: int, round_index: int, domain: bytes = DOMAIN_PAIR_MASK) -> np.ndarray:
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


def seal(key: bytes, nonce: bytes, plaintext: bytes) -> bytes:
    """Return nonce || ciphertext || tag (len(plaintext) + 28 bytes), encrypt-then-MAC."""
    k_enc, k_mac = _ae_subkeys(key)
    stream = hashlib.shake_256(k_enc + nonce).digest(len(plaintext))
    ct = (int.from_bytes(plaintext, "big") ^ int.from_bytes(stream, "big")).to_bytes(
        len(plaintext), "big"
    )
    tag = hmac.new(k_mac, nonce + ct, hashlib.sha256).digest()[:_AE_TAG_BYTES]
    return nonce + ct + tag


def open_sealed(key: bytes, sealed: bytes) -> bytes:
    """Return the plaintext of :func:`seal`'s output; ValueError if the tag does not verify."""
    k_enc, k_mac = _ae_subkeys(key)
    nonce, ct = sealed[:_AE_NONCE_BYTES], sealed[_AE_NONCE_BYTES:-_AE_TAG_BYTES]
    tag = sealed[-_AE_TAG_BYTES:]
    want = hmac.new(k_mac, nonce + ct, hashlib.sha256).digest()[:_AE_TAG_BYTES]
    if not hmac.compare_digest(tag, want):
        raise ValueError("share ciphertext failed authentication")
    stream = hashlib.shake_256(k_enc + nonce).digest(len(ct))
    return (int.from_bytes(ct, "big") ^ int.from_bytes(stream, "big")).to_bytes(len(ct), "big")

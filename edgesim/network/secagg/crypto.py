"""Secure aggregation's cryptographic building blocks, all from the ``cryptography`` package.

- Key derivation (:func:`hkdf_sha256`): HKDF-SHA256 (RFC 5869), no salt,
  the info string naming what is derived. The session derives with it a
  pair's mask seed and share-encryption key from their key agreement, and
  each private key from a 32-byte seed.
- PRG (:func:`prg`): the ChaCha20 keystream (RFC 8439) under the 32-byte
  seed as key, with the 12-byte nonce ``round (8 little-endian bytes) ||
  domain (4 bytes)`` and the block counter from 0, read as little-endian
  uint64 words; the domain separates self masks from pairwise masks.
  ChaCha20 rather than SHAKE-128 (the PRG before issue 31) or AES-128-CTR
  because it was the fastest here: 10^4 words in 50 us against 73 us
  (AES-CTR, AES-NI) and 322 us (SHAKE-128) on the 2-core machine
  (analysis/benchmarks/bench_secagg.py measures what it buys a session).
- Shamir t-of-h sharing over GF(2^255 - 19) (shares 32 bytes) of 32-byte
  seeds with their top two bits clear (254 random bits, below the prime),
  Lagrange interpolation at 0 to reconstruct (:func:`shamir_share`,
  :func:`shamir_reconstruct`). Every shared secret is such a seed (a
  client's self-mask seed b_i, and the seed its masking private key is
  derived from), so any key-agreement group fits.
- Share encryption: AES-256-GCM (:func:`aes_gcm_seal`, :func:`aes_gcm_open`)
  with its 12-byte nonce sent before the ciphertext and tag (28 bytes of
  overhead), or Fernet (:func:`fernet_seal`, :func:`fernet_open`: AES-128-CBC
  and HMAC-SHA256 in a base64 token), as Flower's SecAgg+ sends its shares.
- Key agreement: the profiles of :mod:`~edgesim.network.secagg.profiles`.

Seeds are drawn from the simulation's seeded stream (:func:`draw_seeds`):
keys are reproducible by design, not secret.
"""

from __future__ import annotations

import base64
import functools
from types import SimpleNamespace

import numpy as np

#: Shamir field: GF(2^255 - 19); a share is 32 bytes.
SHAMIR_PRIME = 2**255 - 19
SHARE_BYTES = 32
#: A secret seed: 32 bytes, the top two bits clear (below SHAMIR_PRIME).
SEED_BYTES = 32
CLIENT_ID_BYTES = 4
#: AES-GCM's overhead on the wire: 12-byte nonce + 16-byte tag.
AES_GCM_OVERHEAD_BYTES = 28
_AES_GCM_NONCE_BYTES = 12
#: Plaintext of one encrypted share: sender id, receiver id, key-seed share, self-mask share.
SHARE_PLAINTEXT_BYTES = 2 * CLIENT_ID_BYTES + 2 * SHARE_BYTES

#: Domain of :func:`prg` for a client's self mask PRG(b_i) (4 bytes: the nonce's last four).
DOMAIN_SELF_MASK = b"self"
#: Domain of :func:`prg` for a pairwise mask.
DOMAIN_PAIR_MASK = b"pair"
#: HKDF info prefix of a pair's mask seed s_ij (followed by the pair's ids).
INFO_PAIR_SEED = b"edgesim/secagg/v2/pair-mask-seed\x00"
#: HKDF info prefix of a pair's share-encryption key (followed by the pair's ids).
INFO_SHARE_KEY = b"edgesim/secagg/v2/share-encryption-key\x00"


def int_bytes(x: int, n: int) -> bytes:
    """Return ``x`` as ``n`` big-endian bytes."""
    return int(x).to_bytes(n, "big")


def pair_id(i: int, j: int) -> bytes:
    """Return the 8-byte context of the unordered pair {i, j}."""
    return int_bytes(min(i, j), CLIENT_ID_BYTES) + int_bytes(max(i, j), CLIENT_ID_BYTES)


def draw_seeds(rng: np.random.Generator, count: int) -> list[bytes]:
    """Return ``count`` seeds of :data:`SEED_BYTES` bytes from ``rng``, top two bits clear.

    Reproducible by design (the scenario's seed fixes them), not secret: a
    deployment draws them from a CSPRNG (``secrets``).
    """
    raw = bytearray(rng.bytes(SEED_BYTES * int(count)))
    raw[::SEED_BYTES] = bytes(b & 0x3F for b in raw[::SEED_BYTES])
    return [bytes(raw[SEED_BYTES * c : SEED_BYTES * (c + 1)]) for c in range(int(count))]


@functools.cache
def _primitives() -> SimpleNamespace:
    """Return the ``cryptography`` classes used here, imported on first use (about 40 ms that
    a run without secure aggregation never pays)."""
    from cryptography.exceptions import InvalidTag
    from cryptography.fernet import Fernet, InvalidToken
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return SimpleNamespace(
        InvalidTag=InvalidTag,
        Fernet=Fernet,
        InvalidToken=InvalidToken,
        hashes=hashes,
        Cipher=Cipher,
        algorithms=algorithms,
        AESGCM=AESGCM,
        HKDF=HKDF,
    )


def hkdf_sha256(secret: bytes, info: bytes, length: int = 32) -> bytes:
    """Return ``length`` bytes of HKDF-SHA256 (RFC 5869) of ``secret``, no salt, ``info`` as given."""
    c = _primitives()
    return c.HKDF(algorithm=c.hashes.SHA256(), length=int(length), salt=None, info=info).derive(
        secret
    )


@functools.lru_cache(maxsize=8)
def _zeros(nbytes: int) -> bytes:
    """Return ``nbytes`` zero bytes (cached: the PRG encrypts them to get the keystream)."""
    return bytes(nbytes)


def chacha20_keystream(key: bytes, nonce: bytes, nbytes: int, counter: int = 0) -> bytes:
    """Return ``nbytes`` of the ChaCha20 keystream (RFC 8439 Sec. 2.4) of ``key`` (32 bytes), ``nonce`` (12).

    ``counter`` is the first block's 32-bit counter.
    """
    if len(nonce) != 12:
        raise ValueError(f"a ChaCha20 nonce is 12 bytes, got {len(nonce)}")
    full_nonce = int(counter).to_bytes(4, "little") + nonce
    c = _primitives()
    enc = c.Cipher(c.algorithms.ChaCha20(key, full_nonce), mode=None).encryptor()
    return enc.update(_zeros(int(nbytes)))


def prg(seed: bytes, dim: int, round_index: int, domain: bytes = DOMAIN_PAIR_MASK) -> np.ndarray:
    """Return ``dim`` pseudorandom uint64 words: ChaCha20(key = seed, nonce = round || domain) read little-endian.

    ``seed``: 32 bytes; ``round_index`` (0 <= r < 2^64) is the per-round
    nonce, as 8 little-endian bytes; ``domain`` (4 bytes) separates self
    masks from pairwise masks. The array is read-only (a view of the
    keystream).
    """
    if len(domain) != 4:
        raise ValueError(f"a PRG domain is 4 bytes, got {domain!r}")
    nonce = int(round_index).to_bytes(8, "little") + domain
    stream = chacha20_keystream(seed, nonce, 8 * int(dim))
    return np.frombuffer(stream, dtype="<u8").astype(np.uint64, copy=False)


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


def aes_gcm_seal(key: bytes, nonce: bytes, plaintext: bytes) -> bytes:
    """Return nonce || AES-GCM(key, nonce, plaintext) || tag: len(plaintext) + 28 bytes.

    ``key``: 32 bytes (AES-256); ``nonce``: 12 bytes, never reused under a key.
    """
    if len(nonce) != _AES_GCM_NONCE_BYTES:
        raise ValueError(f"an AES-GCM nonce is 12 bytes, got {len(nonce)}")
    return nonce + _primitives().AESGCM(key).encrypt(nonce, plaintext, None)


def aes_gcm_open(key: bytes, sealed: bytes) -> bytes:
    """Return the plaintext of :func:`aes_gcm_seal`'s output; ValueError if the tag does not verify."""
    nonce, body = sealed[:_AES_GCM_NONCE_BYTES], sealed[_AES_GCM_NONCE_BYTES:]
    c = _primitives()
    try:
        return c.AESGCM(key).decrypt(nonce, body, None)
    except c.InvalidTag as err:
        raise ValueError("share ciphertext failed authentication") from err


def _fernet(key: bytes):
    """Return the Fernet of a 32-byte key (its signing half first, then its encryption half)."""
    return _primitives().Fernet(base64.urlsafe_b64encode(key))


def fernet_seal(key: bytes, plaintext: bytes) -> bytes:
    """Return the Fernet token of ``plaintext`` under the 32-byte ``key`` (timestamp 0).

    Fernet draws its 16-byte IV from ``os.urandom``, as Flower's SecAgg+
    does: the token's bytes differ from run to run, its size (:func:`fernet_bytes`)
    and what it decrypts to do not.
    """
    return _fernet(key).encrypt_at_time(plaintext, 0)


def fernet_open(key: bytes, token: bytes) -> bytes:
    """Return the plaintext of a :func:`fernet_seal` token; ValueError if it does not verify."""
    try:
        return _fernet(key).decrypt(token)
    except _primitives().InvalidToken as err:
        raise ValueError("share ciphertext failed authentication") from err


def fernet_bytes(plaintext_bytes: int) -> int:
    """Return the bytes of a Fernet token of a ``plaintext_bytes``-byte plaintext.

    base64url(version 1 + timestamp 8 + IV 16 + AES-CBC ciphertext (PKCS7:
    16 (floor(m / 16) + 1)) + HMAC-SHA256 32), with padding: 184 for m = 72.
    """
    raw = 1 + 8 + 16 + 16 * (int(plaintext_bytes) // 16 + 1) + 32
    return 4 * -(-raw // 3)

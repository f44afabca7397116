"""Secure aggregation's primitives (edgesim/network/secagg/crypto.py): published vectors and references.

The vectors run through edgesim's wrappers; the pairwise mask is recomputed
here from its definition with independent code: X25519 by the RFC 7748
ladder, HKDF by RFC 5869 on ``hmac``, ChaCha20 by the RFC 8439 block
function, all in plain Python.
"""

from __future__ import annotations

import hashlib
import hmac

import numpy as np
import pytest

from edgesim.network.secagg import (
    SecAggConfig,
    SecureAggregation,
    aes_gcm_open,
    aes_gcm_seal,
    chacha20_keystream,
    fernet_open,
    fernet_seal,
    get_profile,
    hkdf_sha256,
    prg,
)
from edgesim.network.secagg.crypto import (
    DOMAIN_PAIR_MASK,
    INFO_PAIR_SEED,
    draw_seeds,
    fernet_bytes,
    pair_id,
)

# --- independent references (plain Python) ----------------------------------

P25519 = 2**255 - 19


def x25519_reference(k: bytes, u: bytes) -> bytes:
    """X25519(k, u) by the Montgomery ladder of RFC 7748 Sec. 5."""
    kb = bytearray(k)
    kb[0] &= 248
    kb[31] &= 127
    kb[31] |= 64
    scalar = int.from_bytes(kb, "little")
    x1 = int.from_bytes(u, "little") & ((1 << 255) - 1)
    x2, z2, x3, z3, swap = 1, 0, x1, 1, 0
    for t in reversed(range(255)):
        bit = (scalar >> t) & 1
        swap ^= bit
        if swap:
            x2, x3, z2, z3 = x3, x2, z3, z2
        swap = bit
        a, b = (x2 + z2) % P25519, (x2 - z2) % P25519
        aa, bb = a * a % P25519, b * b % P25519
        e = (aa - bb) % P25519
        c, d = (x3 + z3) % P25519, (x3 - z3) % P25519
        da, cb = d * a % P25519, c * b % P25519
        x3, z3 = (da + cb) ** 2 % P25519, x1 * (da - cb) ** 2 % P25519
        x2, z2 = aa * bb % P25519, e * (aa + 121665 * e) % P25519
    if swap:
        x2, z2 = x3, z3
    return (x2 * pow(z2, P25519 - 2, P25519) % P25519).to_bytes(32, "little")


def hkdf_reference(ikm: bytes, info: bytes, length: int = 32) -> bytes:
    """HKDF-SHA256 (RFC 5869 Sec. 2), no salt (a string of 32 zero bytes)."""
    prk = hmac.new(bytes(32), ikm, hashlib.sha256).digest()
    out, block = b"", b""
    for c in range(1, -(-length // 32) + 1):
        block = hmac.new(prk, block + info + bytes([c]), hashlib.sha256).digest()
        out += block
    return out[:length]


def chacha20_reference(key: bytes, nonce: bytes, nbytes: int, counter: int = 0) -> bytes:
    """The ChaCha20 keystream by the block function of RFC 8439 Sec. 2.3."""
    mask = 0xFFFFFFFF

    def qr(s, a, b, c, d):
        s[a] = (s[a] + s[b]) & mask
        s[d] ^= s[a]
        s[d] = ((s[d] << 16) | (s[d] >> 16)) & mask
        s[c] = (s[c] + s[d]) & mask
        s[b] ^= s[c]
        s[b] = ((s[b] << 12) | (s[b] >> 20)) & mask
        s[a] = (s[a] + s[b]) & mask
        s[d] ^= s[a]
        s[d] = ((s[d] << 8) | (s[d] >> 24)) & mask
        s[c] = (s[c] + s[d]) & mask
        s[b] ^= s[c]
        s[b] = ((s[b] << 7) | (s[b] >> 25)) & mask

    words = lambda b: [int.from_bytes(b[i : i + 4], "little") for i in range(0, len(b), 4)]  # noqa: E731
    out = b""
    for blk in range(-(-nbytes // 64)):
        init = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574, *words(key)]
        init += [(counter + blk) & mask, *words(nonce)]
        s = list(init)
        for _ in range(10):
            qr(s, 0, 4, 8, 12), qr(s, 1, 5, 9, 13), qr(s, 2, 6, 10, 14), qr(s, 3, 7, 11, 15)
            qr(s, 0, 5, 10, 15), qr(s, 1, 6, 11, 12), qr(s, 2, 7, 8, 13), qr(s, 3, 4, 9, 14)
        out += b"".join(
            ((x + y) & mask).to_bytes(4, "little") for x, y in zip(s, init, strict=True)
        )
    return out[:nbytes]


# --- published vectors through edgesim's wrappers ----------------------------


def test_rfc7748_x25519_vector_sec_6_1():
    prof = get_profile("x25519")
    a_sk = bytes.fromhex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
    a_pk = bytes.fromhex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
    b_sk = bytes.fromhex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
    b_pk = bytes.fromhex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
    shared = bytes.fromhex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
    alice, bob = prof.private_from_bytes(a_sk), prof.private_from_bytes(b_sk)
    assert prof.public_bytes(alice) == a_pk and prof.public_bytes(bob) == b_pk
    assert prof.agree(alice, prof.load_public(b_pk)) == shared
    assert prof.agree(bob, prof.load_public(a_pk)) == shared
    # the plain-Python ladder used below agrees with the RFC too
    assert x25519_reference(a_sk, (9).to_bytes(32, "little")) == a_pk
    assert x25519_reference(a_sk, b_pk) == shared


def test_aes_gcm_vector_gcm_spec_test_case_14():
    # McGrew & Viega, "The Galois/Counter Mode of Operation", App. B, Test Case 14 (AES-256)
    sealed = aes_gcm_seal(bytes(32), bytes(12), bytes(16))
    assert sealed.hex() == (
        "000000000000000000000000"  # the nonce, sent first
        "cea7403d4d606b6e074ec5d3baf39d18"  # ciphertext
        "d0d1c8a799996bf0265b98b5d48ab919"  # tag
    )
    assert aes_gcm_open(bytes(32), sealed) == bytes(16)
    tampered = sealed[:-1] + bytes([sealed[-1] ^ 1])
    with pytest.raises(ValueError, match="authentication"):
        aes_gcm_open(bytes(32), tampered)


def test_chacha20_vectors_rfc8439_appendix_a1():
    # A.1 test vectors #1 and #2: zero key, zero nonce, counter 0 and 1
    ks0 = chacha20_keystream(bytes(32), bytes(12), 64)
    assert ks0.hex() == (
        "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
        "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
    )
    ks1 = chacha20_keystream(bytes(32), bytes(12), 64, counter=1)
    assert ks1.hex().startswith("9f07e7be5551387a98ba977c732d080d")
    assert chacha20_reference(bytes(32), bytes(12), 64) == ks0
    key, nonce = bytes(range(32)), bytes.fromhex("000000090000004a00000000")
    assert chacha20_keystream(key, nonce, 300, 1) == chacha20_reference(key, nonce, 300, 1)


def test_hkdf_matches_rfc5869_on_hmac():
    for ikm, info, n in [(b"\x0b" * 22, bytes(range(0xF0, 0xFA)), 42), (b"s" * 32, b"x", 32)]:
        assert hkdf_sha256(ikm, info, n) == hkdf_reference(ikm, info, n)


def test_fernet_token_size_and_round_trip():
    key = bytes(range(32))
    for m in (0, 15, 16, 72, 100):
        token = fernet_seal(key, bytes(m))
        assert len(token) == fernet_bytes(m)
        assert fernet_open(key, token) == bytes(m)
    assert fernet_bytes(72) == 184  # Flower's SecAgg+ share tokens
    with pytest.raises(ValueError, match="authentication"):
        fernet_open(bytes(32), fernet_seal(key, b"share"))


# --- the protocol's masks against their definition ---------------------------


def test_pairwise_mask_equals_its_definition_computed_independently():
    """s_ij = HKDF-SHA256(X25519(s_i, S_j), info || ids); mask = ChaCha20(s_ij, round || 'pair')."""
    n, p, r = 5, 40, 7
    sess = SecureAggregation(n, p, SecAggConfig(masking="crypto"), np.random.default_rng(3))
    sess.advertise_keys()
    sess.share_keys()
    i, j = 1, 3
    # the masking private key as X25519 uses it: HKDF of the client's seed (the seed is what
    # the session Shamir-shares), recomputed here with the reference HKDF
    sk_i = hkdf_reference(sess._s_seed[i], b"edgesim/secagg/v2/x25519-private-key")
    sk_j = hkdf_reference(sess._s_seed[j], b"edgesim/secagg/v2/x25519-private-key")
    pk_j = x25519_reference(sk_j, (9).to_bytes(32, "little"))
    assert pk_j == sess._s_pk[j]  # the advertised key
    shared = x25519_reference(sk_i, pk_j)
    assert shared == x25519_reference(sk_j, x25519_reference(sk_i, (9).to_bytes(32, "little")))
    seed = hkdf_reference(shared, INFO_PAIR_SEED + (1).to_bytes(4, "big") + (3).to_bytes(4, "big"))
    nonce = r.to_bytes(8, "little") + b"pair"
    want = np.frombuffer(chacha20_reference(seed, nonce, 8 * p), dtype="<u8")
    assert sess._pair_seed(i, j) == seed == sess._pair_seed(j, i)
    np.testing.assert_array_equal(prg(seed, p, r, DOMAIN_PAIR_MASK), want)
    # and in the masked inputs: with zero inputs y_i - PRG(b_i) is the sum of its pair masks
    y = sess.masked_inputs(np.arange(n), np.zeros((n, p)), np.ones(n), r).vectors
    self_i = np.frombuffer(
        chacha20_reference(sess._b[i], r.to_bytes(8, "little") + b"self", 8 * p), "<u8"
    )
    pair = {}
    for a, b in [(i, m) for m in range(n) if m != i]:
        sd = hkdf_reference(x25519_reference(sk_i, sess._s_pk[b]), INFO_PAIR_SEED + pair_id(a, b))
        pair[b] = np.frombuffer(chacha20_reference(sd, nonce, 8 * p), "<u8")
    expect = self_i.copy()
    for b, mask in pair.items():
        expect = expect + mask if i < b else expect - mask
    np.testing.assert_array_equal(y[i], expect)


def test_prg_domains_rounds_and_uniformity():
    from scipy import stats

    seed = bytes(range(32))
    a = prg(seed, 20000, 7)
    assert a.dtype == np.uint64 and a.shape == (20000,)
    np.testing.assert_array_equal(a, prg(seed, 20000, 7))
    assert not np.array_equal(a[:8], prg(seed, 8, 8))
    assert not np.array_equal(a[:8], prg(seed, 8, 7, b"self"))
    u = (a >> np.uint64(11)).astype(np.float64) / 2.0**53
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    with pytest.raises(ValueError, match="4 bytes"):
        prg(seed, 8, 7, b"other-domain")


def test_seeds_are_254_bit_and_reproducible():
    s = draw_seeds(np.random.default_rng(0), 200)
    assert all(len(x) == 32 and x[0] < 64 for x in s)
    assert max(x[0] for x in s) >= 32  # the 254th bit is used
    assert s == draw_seeds(np.random.default_rng(0), 200)

"""Secure aggregation's profiles: the key agreement, its public keys' encoding and the share cipher.

``[network.secagg] profile`` picks one (:data:`PROFILES`):

===========  ============================  ==========  ================================
profile      key agreement                 public key  share encryption (72-byte share)
===========  ============================  ==========  ================================
x25519       X25519 (RFC 7748)             32 bytes    AES-256-GCM: 100 bytes
flower       ECDH on P-384 (Flower's       215 bytes   Fernet: 184 bytes
             SecAgg+)                      (PEM)
ffdhe2048    finite-field DH, RFC 7919     256 bytes   AES-256-GCM: 100 bytes
             ffdhe2048 (before issue 31)
===========  ============================  ==========  ================================

``flower`` sends what Flower's SecAgg+ sends (P-384 keys through
``cryptography``, PEM SubjectPublicKeyInfo, shares as Fernet tokens);
``ffdhe2048`` gives the byte counts of results from before issue 31. Every
private key is derived from a 32-byte seed (:func:`~edgesim.network.secagg.crypto.draw_seeds`)
through HKDF-SHA256, so the seed is what is Shamir-shared whatever the group.
All arithmetic is the ``cryptography`` package's (OpenSSL), except
ffdhe2048's modular exponentiation (Python's ``pow``; no key is secret here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from edgesim.network.secagg.crypto import (
    AES_GCM_OVERHEAD_BYTES,
    aes_gcm_open,
    aes_gcm_seal,
    fernet_bytes,
    fernet_open,
    fernet_seal,
    hkdf_sha256,
    int_bytes,
)

if TYPE_CHECKING:  # imported where used: a run without secure aggregation never loads them
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

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
#: Bits of an ffdhe2048 secret exponent (RFC 7919 App. A.1 asks for at least 225).
FFDHE_SECRET_BITS = 254
#: Order of the P-384 group (FIPS 186-4 D.1.2.4).
P384_ORDER = int(
    "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973",
    16,
)


class Profile:
    """A key agreement with its public-key encoding and share cipher (subclasses: one per profile).

    ``name``; ``public_key_bytes``: one encoded public key on the wire. A
    private key is derived from a 32-byte seed (:meth:`private_key`); a peer's
    public key is parsed once (:meth:`load_public`) and agreed with
    (:meth:`agree`, the raw shared secret); shares are sealed with a 32-byte
    key (:meth:`seal`, :meth:`open`).
    """

    name = ""
    public_key_bytes = 0

    def private_key(self, seed: bytes) -> Any:
        """Return the private key derived from ``seed`` (32 bytes) by HKDF-SHA256."""
        raise NotImplementedError

    def public_bytes(self, private: Any) -> bytes:
        """Return the encoded public key of ``private`` (``public_key_bytes`` bytes)."""
        raise NotImplementedError

    def load_public(self, data: bytes) -> Any:
        """Return a peer's public key parsed from its encoding; ValueError if it is not one."""
        raise NotImplementedError

    def agree(self, private: Any, peer: Any) -> bytes:
        """Return the raw shared secret of ``private`` and the parsed ``peer`` key."""
        raise NotImplementedError

    def seal(self, key: bytes, nonce: bytes, plaintext: bytes) -> bytes:
        """Return ``plaintext`` encrypted and authenticated under ``key`` (32 bytes), AES-256-GCM.

        ``nonce``: 12 bytes, never reused under ``key``; sent before the ciphertext.
        """
        return aes_gcm_seal(key, nonce, plaintext)

    def open(self, key: bytes, sealed: bytes) -> bytes:
        """Return the plaintext of :meth:`seal`; ValueError if it does not verify."""
        return aes_gcm_open(key, sealed)

    def ciphertext_bytes(self, plaintext_bytes: int) -> int:
        """Return the bytes of :meth:`seal`'s output for a ``plaintext_bytes``-byte plaintext."""
        return int(plaintext_bytes) + AES_GCM_OVERHEAD_BYTES


class X25519Profile(Profile):
    """X25519 (RFC 7748), raw 32-byte public keys, AES-256-GCM shares: the default."""

    name = "x25519"
    public_key_bytes = 32

    def private_key(self, seed: bytes) -> X25519PrivateKey:
        """Return the X25519 key whose 32 private bytes are HKDF-SHA256(seed) (clamped by X25519)."""
        return self.private_from_bytes(hkdf_sha256(seed, b"edgesim/secagg/v2/x25519-private-key"))

    def private_from_bytes(self, raw: bytes) -> X25519PrivateKey:
        """Return the X25519 private key of 32 raw bytes (RFC 7748 Sec. 5: clamped when used)."""
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

        return X25519PrivateKey.from_private_bytes(raw)

    def public_bytes(self, private: X25519PrivateKey) -> bytes:
        """Return the 32-byte u-coordinate of ``private``'s public key."""
        return private.public_key().public_bytes_raw()

    def load_public(self, data: bytes) -> X25519PublicKey:
        """Return the X25519 public key of 32 raw bytes."""
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey

        return X25519PublicKey.from_public_bytes(data)

    def agree(self, private: X25519PrivateKey, peer: X25519PublicKey) -> bytes:
        """Return X25519(private, peer): 32 bytes (ValueError on a small-order peer)."""
        return private.exchange(peer)


class FlowerProfile(Profile):
    """ECDH on P-384 with PEM public keys (215 bytes) and Fernet shares, as Flower's SecAgg+."""

    name = "flower"
    public_key_bytes = 215

    def private_key(self, seed: bytes) -> ec.EllipticCurvePrivateKey:
        """Return the P-384 key d = HKDF-SHA256(seed, 64 bytes) mod (order - 1) + 1."""
        raw = hkdf_sha256(seed, b"edgesim/secagg/v2/p384-private-key", 64)
        d = int.from_bytes(raw, "big") % (P384_ORDER - 1) + 1
        from cryptography.hazmat.primitives.asymmetric import ec

        return ec.derive_private_key(d, ec.SECP384R1())

    def public_bytes(self, private: ec.EllipticCurvePrivateKey) -> bytes:
        """Return ``private``'s public key, PEM SubjectPublicKeyInfo (215 bytes)."""
        from cryptography.hazmat.primitives import serialization

        return private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def load_public(self, data: bytes) -> ec.EllipticCurvePublicKey:
        """Return the P-384 public key of a PEM block; ValueError for any other key."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        key = serialization.load_pem_public_key(data)
        if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp384r1":
            raise ValueError("not a P-384 public key")
        return key

    def agree(self, private: ec.EllipticCurvePrivateKey, peer: ec.EllipticCurvePublicKey) -> bytes:
        """Return the ECDH shared secret (the x-coordinate, 48 bytes)."""
        from cryptography.hazmat.primitives.asymmetric import ec

        return private.exchange(ec.ECDH(), peer)

    def seal(self, key: bytes, nonce: bytes, plaintext: bytes) -> bytes:
        """Return the Fernet token of ``plaintext`` under ``key`` (``nonce`` unused: Fernet draws its IV)."""
        return fernet_seal(key, plaintext)

    def open(self, key: bytes, sealed: bytes) -> bytes:
        """Return the plaintext of a Fernet token; ValueError if it does not verify."""
        return fernet_open(key, sealed)

    def ciphertext_bytes(self, plaintext_bytes: int) -> int:
        """Return the bytes of a Fernet token of ``plaintext_bytes`` bytes (184 for 72)."""
        return fernet_bytes(plaintext_bytes)


class Ffdhe2048Profile(Profile):
    """Finite-field DH in RFC 7919 ffdhe2048 (256-byte keys), AES-256-GCM shares: results before issue 31."""

    name = "ffdhe2048"
    public_key_bytes = 256

    def private_key(self, seed: bytes) -> int:
        """Return the exponent: HKDF-SHA256(seed) cut to :data:`FFDHE_SECRET_BITS` bits, top bit set."""
        raw = int.from_bytes(hkdf_sha256(seed, b"edgesim/secagg/v2/ffdhe2048-exponent"), "big")
        return (raw >> (256 - FFDHE_SECRET_BITS + 1)) | (1 << (FFDHE_SECRET_BITS - 1))

    def public_bytes(self, private: int) -> bytes:
        """Return g^x mod p as 256 big-endian bytes."""
        return int_bytes(pow(FFDHE2048_G, private, FFDHE2048_P), self.public_key_bytes)

    def load_public(self, data: bytes) -> int:
        """Return the public key as an integer; ValueError outside [2, p - 2] (RFC 7919 Sec. 5.1)."""
        y = int.from_bytes(data, "big")
        if len(data) != self.public_key_bytes or not 2 <= y <= FFDHE2048_P - 2:
            raise ValueError("invalid ffdhe2048 public key")
        return y

    def agree(self, private: int, peer: int) -> bytes:
        """Return peer^x mod p as 256 big-endian bytes."""
        return int_bytes(pow(peer, private, FFDHE2048_P), self.public_key_bytes)


#: The profiles by name (``[network.secagg] profile``).
PROFILES: dict[str, Profile] = {
    p.name: p for p in (X25519Profile(), FlowerProfile(), Ffdhe2048Profile())
}


def get_profile(name: str) -> Profile:
    """Return the :class:`Profile` called ``name``; ValueError naming the known ones otherwise."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown secagg profile {name!r}; known: {', '.join(PROFILES)}") from None

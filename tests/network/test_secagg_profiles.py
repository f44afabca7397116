"""Secure aggregation's profiles (edgesim/network/secagg/profiles.py): keys, sums and byte counts.

For every profile: the key agreement is symmetric and rejects bad keys, the
sum recovered with real masking equals the skip path's bit for bit, and a
DP-FFL run's secure-aggregation bytes over the complete graph at n = 10
follow the closed form of that profile's key and share sizes.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from edgesim.cli import main
from edgesim.mechanisms.protocol import HEADER_BYTES
from edgesim.network.secagg import (
    PROFILES,
    SecAggAborted,
    SecAggConfig,
    SecureAggregation,
    aggregate_plain,
    get_profile,
    protocol_messages,
)
from edgesim.scenario import from_dict
from edgesim.simulate import Simulation, run
from tests.helpers import write

#: (public key bytes K, encrypted 72-byte share C) by profile: the closed forms' inputs.
SIZES = {"x25519": (32, 100), "flower": (215, 184), "ffdhe2048": (256, 100)}


def test_every_profile_is_listed_with_its_sizes():
    assert set(PROFILES) == set(SIZES)
    for name, (key, share) in SIZES.items():
        prof = get_profile(name)
        assert prof.public_key_bytes == key
        assert prof.ciphertext_bytes(72) == share
    with pytest.raises(ValueError, match="known: x25519, flower, ffdhe2048"):
        get_profile("rsa")


@pytest.mark.parametrize("name", list(SIZES))
def test_agreement_is_symmetric_keys_have_their_size_and_bad_keys_fail(name):
    prof = get_profile(name)
    a, b = prof.private_key(bytes(32)), prof.private_key(bytes(range(32)))
    pa, pb = prof.public_bytes(a), prof.public_bytes(b)
    assert len(pa) == len(pb) == prof.public_key_bytes and pa != pb
    assert prof.agree(a, prof.load_public(pb)) == prof.agree(b, prof.load_public(pa))
    assert prof.public_bytes(prof.private_key(bytes(32))) == pa  # derived from the seed alone
    with pytest.raises(ValueError):
        prof.load_public(pa[: len(pa) // 2])
    key = bytes(range(32))
    sealed = prof.seal(key, bytes(12), b"a share of 72 bytes".ljust(72, b"."))
    assert len(sealed) == prof.ciphertext_bytes(72)
    assert prof.open(key, sealed) == b"a share of 72 bytes".ljust(72, b".")
    with pytest.raises(ValueError):
        prof.open(bytes(32), sealed)


def test_flower_keys_are_pem_p384():
    prof = get_profile("flower")
    pem = prof.public_bytes(prof.private_key(bytes(32)))
    assert pem.startswith(b"-----BEGIN PUBLIC KEY-----\n") and len(pem) == 215
    x25519_pem = get_profile("x25519").private_key(bytes(32)).public_key()
    from cryptography.hazmat.primitives import serialization

    other = x25519_pem.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    with pytest.raises(ValueError, match="P-384"):
        prof.load_public(other)


def _data(n, p, seed=1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, p)) * 3.0, rng.uniform(0.1, 2.0, n)


def _session_sum(cfg, n, p, alive, responders=None, seed=21):
    x, a = _data(n, p)
    sess = SecureAggregation(n, p, cfg, np.random.default_rng(seed))
    msgs = sess.advertise_keys() + sess.share_keys()
    mi = sess.masked_inputs(np.flatnonzero(alive), x[alive], a[alive], 0)
    msgs += [mi, *sess.unmask_messages(alive, responders)]
    return sess.unmask(alive, mi.vectors, 0, responders), [m.record() for m in msgs], sess


@pytest.mark.parametrize("name", list(SIZES))
@pytest.mark.parametrize("graph", ["complete", "k-regular"])
def test_real_masking_sum_equals_skip_sum_bit_for_bit(name, graph):
    n, p = (9, 17) if graph == "complete" else (16, 17)
    alive = np.ones(n, dtype=bool)
    alive[[2, 7]] = False  # dropped after sharing keys: their masking keys are reconstructed
    kw = {"graph": graph, "degree": 4, "profile": name}
    crypto, rec_c, sess = _session_sum(SecAggConfig(masking="crypto", **kw), n, p, alive)
    skip, rec_s, _ = _session_sum(SecAggConfig(masking="skip", **kw), n, p, alive)
    x, a = _data(n, p)
    ref, _ = aggregate_plain(a[alive], x[alive], n)
    assert crypto.tobytes() == skip.tobytes() == ref.tobytes()
    assert rec_c == rec_s
    assert rec_c[:4] == protocol_messages(n, p, alive, SecAggConfig(**kw))[:4]  # key stages
    assert sess.last_info["keys_reconstructed"] == 2 and sess.plan.masking == "crypto"


def test_a_wrong_reconstructed_key_is_caught():
    n, p = 6, 4
    alive = np.ones(n, dtype=bool)
    alive[1] = False
    x, a = _data(n, p)
    sess = SecureAggregation(n, p, SecAggConfig(masking="crypto"), np.random.default_rng(0))
    sess.advertise_keys()
    sess.share_keys()
    for j in sess._held:  # corrupt every share of client 1's key seed
        if 1 in j:
            j[1] = (j[1][0] + 1, j[1][1])
    mi = sess.masked_inputs(np.flatnonzero(alive), x[alive], a[alive], 0)
    with pytest.raises(RuntimeError, match="key of client 1 does not match"):
        sess.unmask(alive, mi.vectors, 0)
    assert not issubclass(RuntimeError, SecAggAborted)


# --- byte counts of a DP-FFL run, against the closed form ----------------------

DPFFL = {
    "seed": 3,
    "data": {"source": "synthetic", "samples": 300},
    "model": {"kind": "ridge", "l2": 0.1},
    "agents": {"count": 10},
    "mechanism": {"kind": "dp-ffl", "phase1_rounds": 2, "phase2_rounds": 1, "clusters": 2},
    "output": {"local_baseline": False},
    "network": {
        "radio": {"latency_s": 0.0, "bandwidth_bps": 1e30},
        "backhaul": {"hops": 0},
        "compute": {"seconds": 0.0},
        "fidelity": "events",
    },
}


def overhead_closed_form(n: int, key: int, share: int) -> int:
    """Secure-aggregation bytes of one round over the complete graph (k = n - 1), no dropout.

    Keys up 64 + 2K; their relay down 64 + k (4 + 2K); shares up and down 64 +
    k (4 + C) each; the survivors' bitmap 64 + ceil(k / 8); unmasking 64 +
    n (4 + 32) (a share for each of the n clients a client holds shares of).
    """
    k = n - 1
    per_client = (
        (HEADER_BYTES + 2 * key)
        + (HEADER_BYTES + k * (4 + 2 * key))
        + 2 * (HEADER_BYTES + k * (4 + share))
        + (HEADER_BYTES + -(-k // 8))
        + (HEADER_BYTES + n * (4 + 32))
    )
    return n * per_client


@pytest.mark.parametrize("name", list(SIZES))
def test_dp_ffl_secagg_bytes_follow_the_profile_closed_form(name):
    raw = copy.deepcopy(DPFFL)
    raw["network"]["secagg"] = {"graph": "complete", "masking": "skip", "profile": name}
    sc = from_dict(raw)
    sim = Simulation(sc)
    result = run(sc, sim)
    rows = sim.last_trace.rows
    keys = [
        (n, b)
        for stage, n, b in zip(
            rows["stage"], rows["participants"], rows["secagg_bytes"], strict=True
        )
        if stage == "keys"
    ]
    secure = [n for n, _ in keys]
    assert secure.count(10) >= 2  # Phase I's rounds among all 10 agents (the others: a cluster)
    key, share = SIZES[name]
    expected = sum(overhead_closed_form(n, key, share) for n in secure)
    assert sum(rows["secagg_bytes"]) == expected
    assert result["network"]["secagg_bytes"] == expected
    # the keys' exchange: n uploads of two public keys each, nothing else of secure aggregation's
    assert all(b == n * (HEADER_BYTES + 2 * key) for n, b in keys)


def test_x25519_round_against_ffdhe2048_and_flower():
    x, f, o = (overhead_closed_form(10, *SIZES[p]) for p in ("x25519", "flower", "ffdhe2048"))
    assert (x, f, o) == (32_940, 84_660, 77_740)  # 10 (128 + 676 + 2000 + 66 + 424), ...
    assert round(o / x, 2) == 2.36  # ffdhe2048 sent 2.36x the x25519 bytes per round


def test_bad_profile_exits_2_naming_the_key(tmp_path, capsys):
    path = write(tmp_path, "[agents]\ncount = 3\n[network.secagg]\nprofile = 'rsa'\n")
    code = main(["run", str(path), "--json", str(tmp_path / "out.json")])
    err = capsys.readouterr().err
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.startswith("edgesim: error:")]
    assert len(lines) == 1 and lines[0].startswith("edgesim: error: network.secagg.profile")
    assert "x25519" in lines[0] and not (tmp_path / "out.json").exists()

"""Secure aggregation: fixed point, primitives, graph, the masked protocol and its message counts."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from edgesim.mechanisms.protocol import HEADER_BYTES
from edgesim.network.secagg import (
    FFDHE2048_G,
    FFDHE2048_P,
    SHAMIR_PRIME,
    FixedPoint,
    NeighbourGraph,
    SecAggAborted,
    SecAggConfig,
    SecureAggregation,
    aggregate_plain,
    auto_degree,
    decode,
    encode,
    encode_with_saturation,
    fixed_point_params,
    get_profile,
    plan_secagg,
    prg,
    protocol_messages,
    shamir_reconstruct,
    shamir_share,
)

CRYPTO = SecAggConfig(masking="crypto")


def _data(n, p, seed=1, scale=3.0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, p)) * scale, rng.uniform(0.1, 2.0, n)


def _run(sess, values, weights, survivors, round_index=0, responders=None, setup=True):
    """Run one aggregation; return (sum, every StageMessages in order)."""
    msgs = []
    if setup:
        msgs += sess.advertise_keys()
        msgs += sess.share_keys()
    mi = sess.masked_inputs(np.arange(sess.n), values, weights, round_index)
    msgs.append(mi)
    msgs += sess.unmask_messages(survivors, responders)
    total = sess.unmask(survivors, mi.vectors[survivors], round_index, responders)
    return total, msgs


# --- fixed point ------------------------------------------------------------


def test_frac_bits_rule_is_tight_and_exact():
    assert fixed_point_params(1000, 2.0**20) == 33  # 1000 * 2^53 < 2^63 <= 1000 * 2^54
    assert fixed_point_params(1, 1.0) == 62
    assert fixed_point_params(2, 1.0) == 61  # 2 * 2^62 = 2^63 is not < 2^63
    for n, b in [(7, 0.3), (10**6, 2.0**20), (3, 1e-12), (123457, 987.65)]:
        f = fixed_point_params(n, b)
        x = Fraction(n) * Fraction(b)
        assert x * 2**f < 2**63 <= x * 2 ** (f + 1)
    with pytest.raises(ValueError):
        fixed_point_params(2**23, 2.0**40)


def test_plain_aggregate_within_quantisation_bound():
    n, m, p = 64, 50, 300
    rng = np.random.default_rng(3)
    x = rng.normal(size=(m, p)) * 100
    a = rng.uniform(0, 1, m)
    total, info = aggregate_plain(a, x, n)
    f = fixed_point_params(n, 2.0**20)
    assert info["frac_bits"] == f and info["saturated"] == 0
    assert info["quantisation_bound"] == m * 2.0 ** (-f - 1)
    prod = a[:, None] * x
    ref = np.array([math.fsum(prod[:, col]) for col in range(p)])
    err = np.abs(total - ref)
    # plus the rounding of one int64 -> float64 conversion of the sum
    assert np.all(err <= info["quantisation_bound"] + np.abs(ref) * 2.0**-52)
    assert err.max() > 0  # quantisation did happen: the check has teeth


def test_saturation_clips_counts_and_never_wraps():
    n, b = 4, 8.0
    f = fixed_point_params(n, b)
    assert f == 57  # 4 * 8 * 2^57 = 2^62 < 2^63 = 4 * 8 * 2^58
    fp = FixedPoint.for_clients(n, b)
    assert fp.max_code == 2**60 and fp.resolution == 2.0**-57
    codes, sat = encode_with_saturation([[10.0, -20.0, 3.5]], [1.0], f, b)
    assert sat == 2
    np.testing.assert_array_equal(decode(codes[0], f), [8.0, -8.0, 3.5])
    # n clients at +B and at -B: the largest possible sums decode without wrapping
    top, info = aggregate_plain(np.ones(n), np.full((n, 2), 1e9) * [1, -1], n, b)
    assert info["saturated"] == 2 * n
    np.testing.assert_array_equal(top, [n * b, -n * b])
    with pytest.raises(ValueError):
        encode([[np.nan]], [1.0], f, b)


def test_encode_is_twos_complement():
    f = 10
    codes = encode([[-1.0, 0.5, -0.25]], [2.0], f, 2.0**20)
    assert codes.dtype == np.uint64
    assert int(codes[0, 0]) == 2**64 - 2 * 2**10
    assert int(codes[0, 1]) == 2**10
    assert int(codes[0, 2]) == 2**64 - 2**9


# --- primitives -------------------------------------------------------------


def _is_probable_prime(n: int, bases=(2, 3, 5, 7, 11)) -> bool:
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in bases:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def test_ffdhe2048_is_the_rfc7919_safe_prime():
    e = sum(Fraction(1, math.factorial(k)) for k in range(400))
    floor_e = math.floor(e * 2**1918)
    assert FFDHE2048_P == 2**2048 - 2**1984 + (floor_e + 560316) * 2**64 - 1
    assert FFDHE2048_G == 2
    assert _is_probable_prime(FFDHE2048_P, (2, 3))
    assert _is_probable_prime((FFDHE2048_P - 1) // 2, (2, 3))
    assert _is_probable_prime(SHAMIR_PRIME)


def test_ffdhe2048_agreement_is_symmetric_and_checks_keys():
    prof = get_profile("ffdhe2048")
    x1, x2 = prof.private_key(bytes(32)), prof.private_key(bytes(range(32)))
    assert x1.bit_length() == 254 and x2.bit_length() == 254
    y1, y2 = prof.public_bytes(x1), prof.public_bytes(x2)
    assert int.from_bytes(y1, "big") == pow(FFDHE2048_G, x1, FFDHE2048_P)
    assert prof.agree(x1, prof.load_public(y2)) == prof.agree(x2, prof.load_public(y1))
    assert len(prof.agree(x1, prof.load_public(y2))) == 256
    for bad in (0, 1, FFDHE2048_P - 1, FFDHE2048_P):
        with pytest.raises(ValueError):
            prof.load_public(bad.to_bytes(256, "big"))


def test_shamir_any_t_shares_reconstruct_and_t_minus_1_do_not():
    rng = np.random.default_rng(5)
    secret = int.from_bytes(rng.bytes(31), "big")
    xs = [3, 4, 7, 8, 10, 11, 12, 13, 20]
    t = 5
    ys = shamir_share(secret, xs, t, rng)
    pts = list(zip(xs, ys, strict=True))
    for sub in itertools.combinations(pts, t):
        assert shamir_reconstruct(*zip(*sub, strict=True)) == secret
    for sub in itertools.combinations(pts, t - 1):
        assert shamir_reconstruct(*zip(*sub, strict=True)) != secret
    # t = 1: every share is the secret
    assert shamir_share(secret, [1, 2], 1, rng) == [secret, secret]


# --- graph and plan -----------------------------------------------------------


@pytest.mark.parametrize("n,k", [(31, 6), (20, 4), (9, 2), (7, 6), (6, 5)])
def test_graph_is_regular_symmetric_and_counts_neighbours(n, k):
    g = NeighbourGraph(n, k, np.random.default_rng(n))
    adj = g.adjacency()
    assert np.array_equal(adj, adj.T) and not adj.diagonal().any()
    assert np.all(adj.sum(axis=1) == k)
    assert g.edges().shape == (n * k // 2, 2)
    for i in range(n):
        np.testing.assert_array_equal(g.neighbours(i), np.flatnonzero(adj[i]))
    mask = np.random.default_rng(1).random(n) < 0.5
    np.testing.assert_array_equal(g.neighbour_counts(mask), adj.astype(int) @ mask)


def test_random_graphs_differ_by_seed():
    a = NeighbourGraph(50, 6, np.random.default_rng(0)).adjacency()
    b = NeighbourGraph(50, 6, np.random.default_rng(1)).adjacency()
    assert not np.array_equal(a, b)


def test_plan_rules():
    p = plan_secagg(100, 10)  # 9900 (10 + 2^15) > 2^24: no cryptography under "auto"
    assert p.complete and p.degree == 99 and p.threshold == 51 and p.masking == "skip"
    p = plan_secagg(101, 10)
    assert p.degree == auto_degree(101) == 14 and p.threshold == 8  # floor(15/2) + 1
    assert auto_degree(1000) == 20 and auto_degree(2) == 1 and auto_degree(1) == 0
    complete = SecAggConfig(graph="complete")
    assert plan_secagg(23, 100, complete).masking == "crypto"  # 506 (100 + 2^15) <= 2^24
    assert plan_secagg(24, 100, complete).masking == "skip"  # 552 (100 + 2^15) > 2^24
    p = plan_secagg(500, 100)  # SecAgg+, k = 18: 9000 (100 + 2^15) > 2^24
    assert p.degree == 18 and p.masking == "skip"
    ffdhe = SecAggConfig(graph="complete", profile="ffdhe2048")
    assert plan_secagg(4, 100, ffdhe).masking == "crypto"  # 12 (100 + 2^20) <= 2^24
    assert plan_secagg(5, 100, ffdhe).masking == "skip"  # 20 (100 + 2^20) > 2^24
    flower = SecAggConfig(graph="complete", profile="flower")
    assert plan_secagg(8, 100, flower).masking == "crypto"  # 56 (100 + 2^18) <= 2^24
    assert plan_secagg(9, 100, flower).masking == "skip"  # 72 (100 + 2^18) > 2^24
    p = plan_secagg(50, 3, SecAggConfig(graph="k-regular", degree=5, threshold=0.7))
    assert p.degree == 6 and p.threshold == 5  # floor(0.7 * 7) + 1
    assert plan_secagg(5, 3, SecAggConfig(graph="k-regular", degree=8)).complete
    assert plan_secagg(8, 3, SecAggConfig(graph="complete")).threshold == 5


def test_config_cross_check():
    assert SecAggConfig().cross_check(10**6) == []
    errs = SecAggConfig(value_bound=2.0**60).cross_check(16)
    assert [e.key for e in errs] == ["network.secagg.value_bound"]


# --- the protocol -------------------------------------------------------------


def test_crypto_sum_is_bit_identical_to_plain_without_dropouts():
    n, p = 8, 40
    x, a = _data(n, p)
    sess = SecureAggregation(n, p, CRYPTO, np.random.default_rng(11))
    alive = np.ones(n, dtype=bool)
    total, _ = _run(sess, x, a, alive)
    ref, _ = aggregate_plain(a, x, n)
    assert total.view(np.uint64).tobytes() == ref.view(np.uint64).tobytes()
    assert sess.last_info["keys_reconstructed"] == 0


def test_masks_cancel_pairwise_leaving_only_self_masks():
    n, p = 6, 16
    x, a = _data(n, p)
    sess = SecureAggregation(n, p, CRYPTO, np.random.default_rng(2))
    sess.advertise_keys()
    sess.share_keys()
    y = sess.masked_inputs(np.arange(n), x, a, 3).vectors
    enc = encode(x, a, sess.plan.frac_bits)
    self_masks = sum(prg(b, p, 3, b"self") for b in sess._b)
    np.testing.assert_array_equal(
        y.sum(axis=0, dtype=np.uint64) - enc.sum(axis=0, dtype=np.uint64), self_masks
    )


def test_crypto_dropouts_up_to_n_minus_t_are_exact_beyond_abort():
    n, p = 8, 24
    x, a = _data(n, p, seed=4)
    sess = SecureAggregation(n, p, CRYPTO, np.random.default_rng(12))
    t = sess.plan.threshold
    assert t == 5
    alive = np.ones(n, dtype=bool)
    alive[[1, 4, 6]] = False  # n - t = 3 dropouts
    total, _ = _run(sess, x, a, alive)
    ref, _ = aggregate_plain(a[alive], x[alive], n)
    np.testing.assert_array_equal(total, ref)
    assert sess.last_info["keys_reconstructed"] == 3
    assert sess.setup_due  # rekey = "round": keys are spent
    alive[2] = False  # n - t + 1 dropouts
    with pytest.raises(SecAggAborted) as err:
        _run(sess, x, a, alive, round_index=1)
    assert err.value.threshold == t and err.value.available == t - 1


def test_crypto_survivor_silent_at_unmasking():
    n, p = 8, 8
    x, a = _data(n, p, seed=6)
    sess = SecureAggregation(n, p, CRYPTO, np.random.default_rng(13))
    alive = np.ones(n, dtype=bool)
    alive[[0, 5]] = False
    responders = alive.copy()
    responders[3] = False  # sent its input, then went silent: 5 = t responders remain
    total, _ = _run(sess, x, a, alive, responders=responders)
    ref, _ = aggregate_plain(a[alive], x[alive], n)
    np.testing.assert_array_equal(total, ref)


def _kreg(masking, seed=21):
    cfg = SecAggConfig(graph="k-regular", degree=4, masking=masking)
    return SecureAggregation(14, 12, cfg, np.random.default_rng(seed))


def test_k_regular_crypto_exact_and_aborts_on_missing_key_shares():
    sess = _kreg("crypto")
    assert sess.plan.degree == 4 and sess.plan.threshold == 3
    x, a = _data(14, 12, seed=8)
    alive = np.ones(14, dtype=bool)
    alive[[2, 9]] = False
    total, _ = _run(sess, x, a, alive)
    np.testing.assert_array_equal(total, aggregate_plain(a[alive], x[alive], 14)[0])
    # find (in the same graph) a drop set where only a dropped client's key is short
    g = sess.graph
    found = None
    for d in range(14):
        nb = g.neighbours(d)
        s = np.ones(14, dtype=bool)
        s[d] = False
        r = s.copy()
        r[nb[:2]] = False
        c_r = g.neighbour_counts(r)
        if not (s & (c_r + r < 3)).any():
            found = (d, s, r)
            break
    assert found is not None
    d, s, r = found
    with pytest.raises(SecAggAborted) as err:
        _run(sess, x, a, s, round_index=1, responders=r)
    assert (err.value.client, err.value.secret, err.value.available) == (d, "key", 2)
    # a survivor losing 3 of its 4 neighbours keeps only 2 of its b shares
    s = np.ones(14, dtype=bool)
    s[g.neighbours(0)[:3]] = False
    with pytest.raises(SecAggAborted) as err:
        _run(sess, x, a, s, round_index=2)
    assert err.value.secret == "self-mask" and err.value.threshold == 3


def test_masked_vectors_differ_from_encodings_and_look_uniform():
    n, p = 4, 4096
    x, a = _data(n, p, seed=9)
    sess = SecureAggregation(n, p, CRYPTO, np.random.default_rng(14))
    sess.advertise_keys()
    sess.share_keys()
    y = sess.masked_inputs(np.arange(n), x, a, 0).vectors
    enc = encode(x, a, sess.plan.frac_bits)
    expected = np.full(256, p / 256)
    for i in range(n):
        assert np.all(y[i] != enc[i])
        top = (y[i] >> np.uint64(56)).astype(np.int64)
        assert stats.chisquare(np.bincount(top, minlength=256), expected).pvalue > 1e-3
        u = (y[i] >> np.uint64(11)).astype(np.float64) / 2.0**53
        assert stats.kstest(u, "uniform").pvalue > 1e-3
        # the unmasked encodings fail the same test: it has power
        u_enc = (enc[i] >> np.uint64(11)).astype(np.float64) / 2.0**53
        assert stats.kstest(u_enc, "uniform").pvalue < 1e-10


@pytest.mark.parametrize("kind", ["complete", "k-regular"])
def test_counted_messages_match_the_stage_outputs(kind):
    if kind == "complete":
        n, p, cfg = 7, 10, CRYPTO
        alive = np.array([1, 1, 0, 1, 1, 1, 1], dtype=bool)
    else:
        n, p = 14, 12
        cfg = SecAggConfig(graph="k-regular", degree=4, masking="crypto")
        alive = np.ones(n, dtype=bool)
        alive[5] = False
    responders = alive.copy()
    responders[np.flatnonzero(alive)[0]] = False
    x, a = _data(n, p)
    sess = SecureAggregation(n, p, cfg, np.random.default_rng(15))
    _, msgs = _run(sess, x, a, alive, responders=responders)
    produced = [m.record() for m in msgs]
    assert produced == protocol_messages(n, p, alive, cfg, True, responders)
    for m in msgs:  # real payloads: the sizes are measured, not assumed
        if m.payloads is not None:
            assert np.array_equal(m.nbytes, [HEADER_BYTES + len(b) for b in m.payloads])
    k = sess.plan.degree
    assert produced[2]["bytes_per_message"] == HEADER_BYTES + k * (4 + 4 + 4 + 32 + 32 + 28)
    skip = SecureAggregation(
        n,
        p,
        SecAggConfig(graph=cfg.graph, degree=cfg.degree, masking="skip"),
        np.random.default_rng(15),
    )
    _, msgs_skip = _run(skip, x, a, alive, responders=responders)
    assert [m.record() for m in msgs_skip] == produced


def test_protocol_messages_closed_form_and_session_rounds():
    recs = protocol_messages(10**6, 100, 900_000, SecAggConfig(), rekey_this_round=False)
    assert [(r["stage"], r["direction"]) for r in recs] == [
        ("masked_input", "up"),
        ("survivors", "down"),
        ("unmasking", "up"),
    ]
    k = auto_degree(10**6)
    assert k == 40
    assert recs[0]["bytes"] == 10**6 * (64 + 800) and recs[0]["replaces_upload"]
    assert recs[1]["bytes"] == 900_000 * (64 + 5)
    assert recs[2]["bytes"] == 900_000 * (64 + 41 * 36)
    full = protocol_messages(10, 3, None, SecAggConfig(), rekey_this_round=True)
    assert full[0]["bytes_per_message"] == 64 + 2 * 32  # two X25519 keys
    assert full[1]["bytes_per_message"] == 64 + 9 * (4 + 64)
    old = protocol_messages(10, 3, None, SecAggConfig(profile="ffdhe2048"), rekey_this_round=True)
    assert old[0]["bytes_per_message"] == 64 + 512
    assert old[1]["bytes_per_message"] == 64 + 9 * 516


def test_skip_gives_the_crypto_sum_and_leaves_the_parent_stream_alone():
    x, a = _data(14, 12, seed=10)
    alive = np.ones(14, dtype=bool)
    alive[[3, 11]] = False
    sums, states = [], []
    for masking in ("crypto", "skip"):
        rng = np.random.default_rng(21)
        sess = SecureAggregation(
            14, 12, SecAggConfig(graph="k-regular", degree=4, masking=masking), rng
        )
        sums.append(_run(sess, x, a, alive)[0])
        states.append(rng.bit_generator.state)
    assert sums[0].tobytes() == sums[1].tobytes()
    assert states[0] == states[1]
    # the same abort in both modes
    s = np.ones(14, dtype=bool)
    s[_kreg("skip").graph.neighbours(0)[:3]] = False
    with pytest.raises(SecAggAborted):
        _run(_kreg("skip"), x, a, s)


def test_same_seed_same_masks_other_seed_other_masks():
    x, a = _data(5, 8)

    def masked(seed):
        s = SecureAggregation(5, 8, CRYPTO, np.random.default_rng(seed))
        s.advertise_keys()
        s.share_keys()
        return s.masked_inputs(np.arange(5), x, a, 0).vectors

    m0 = masked(0)
    np.testing.assert_array_equal(m0, masked(0))
    assert not np.array_equal(m0, masked(1))


def test_session_rekey_reuses_keys_with_fresh_round_masks():
    n, p = 5, 6
    x, a = _data(n, p)
    sess = SecureAggregation(
        n, p, SecAggConfig(masking="crypto", rekey="session"), np.random.default_rng(3)
    )
    alive = np.ones(n, dtype=bool)
    alive[4] = False
    t0, msgs = _run(sess, x, a, alive, round_index=0)
    assert not sess.setup_due
    y0 = msgs[4].vectors
    y1 = sess.masked_inputs(np.arange(n), x, a, 1).vectors
    assert np.all(y0 != y1)  # same input, same keys, different round: different masks
    t1 = sess.unmask(alive, y1[alive], 1)
    np.testing.assert_array_equal(t0, t1)
    np.testing.assert_array_equal(t1, aggregate_plain(a[alive], x[alive], n)[0])
    with pytest.raises(ValueError, match="masks would repeat"):
        sess.masked_inputs(np.arange(n), x, a, 1)
    # rekey = "round" refuses inputs until the key stages run again
    rnd = SecureAggregation(n, p, SecAggConfig(masking="skip"), np.random.default_rng(3))
    _run(rnd, x, a, alive)
    with pytest.raises(RuntimeError):
        rnd.masked_inputs(np.arange(n), x, a, 1)


def test_per_client_inputs_and_bad_calls():
    n, p = 4, 5
    x, a = _data(n, p)
    sess = SecureAggregation(n, p, CRYPTO, np.random.default_rng(4))
    sess.advertise_keys()
    sess.share_keys()
    ys = [sess.masked_input(i, x[i], a[i], 0) for i in (0, 1, 2)]
    assert all(m.messages == 1 and m.nbytes[0] == HEADER_BYTES + 8 * p for m in ys)
    with pytest.raises(ValueError, match="one masked input"):
        sess.masked_input(1, x[1], a[1], 0)
    with pytest.raises(ValueError, match="sent no masked input"):
        sess.unmask(np.arange(n), np.zeros(p, np.uint64), 0)
    with pytest.raises(TypeError):
        sess.unmask([0, 1, 2], np.zeros(p), 0)
    total = sess.unmask([0, 1, 2], np.vstack([m.vectors for m in ys]), 0)
    np.testing.assert_array_equal(total, aggregate_plain(a[:3], x[:3], n)[0])


def test_single_client():
    x, a = _data(1, 3)
    sess = SecureAggregation(1, 3, CRYPTO, np.random.default_rng(0))
    total, _ = _run(sess, x, a, np.ones(1, dtype=bool))
    np.testing.assert_array_equal(total, aggregate_plain(a, x, 1)[0])


@pytest.mark.parametrize("n,k", [(200_000, 36), pytest.param(10**6, 40, marks=pytest.mark.slow)])
def test_skip_masking_scales_to_huge_sessions(n, k):
    p = 2
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, p))
    a = np.full(n, 1.0 / n)
    sess = SecureAggregation(n, p, SecAggConfig(), rng)
    assert sess.plan.masking == "skip" and sess.plan.degree == k
    alive = rng.random(n) < 0.9
    total, msgs = _run(sess, x, a, alive)
    np.testing.assert_array_equal(total, aggregate_plain(a[alive], x[alive], n)[0])
    assert [m.record() for m in msgs] == protocol_messages(n, p, alive)

"""Availability models: the Markov on/off chain against its closed forms, FedScale traces exactly."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from edgesim.errors import ScenarioError
from edgesim.network.availability import (
    AVAILABILITY_MODELS,
    NEVER_NS,
    AlwaysOn,
    AvailabilityConfig,
    MarkovOnOff,
    TraceAvailability,
    TraceError,
    build_availability,
    load_trace,
    register_availability,
)

S = 10**9
ON, OFF = 600.0, 60.0
P_ON = ON / (ON + OFF)
RATE = 1 / ON + 1 / OFF


def within_3se(values, target, se):
    return abs(np.mean(values) - target) < 3 * se


# ---------------------------------------------------------------------------- always


def test_always_on():
    m = build_availability(AvailabilityConfig(), 4, np.random.default_rng(0))
    assert isinstance(m, AlwaysOn)
    on, until = m.online_until(np.array([0, 3, 3]), np.array([0, 5, 1]))
    assert on.all() and (until == NEVER_NS).all()


# ---------------------------------------------------------------------------- markov


def test_stationary_start_probability_and_residuals():
    K = 100_000
    m = MarkovOnOff(K, ON, OFF, "stationary", np.random.default_rng(1))
    on, until = m.online_until(np.arange(K), 0)
    assert within_3se(on, P_ON, np.sqrt(P_ON * (1 - P_ON) / K))
    # memoryless residual of the initial state: Exp(mean of that state)
    res = until / S
    assert within_3se(res[on], ON, ON / np.sqrt(on.sum()))
    assert within_3se(res[~on], OFF, OFF / np.sqrt((~on).sum()))


def test_documented_construction_draws():
    K = 1000
    m = MarkovOnOff(K, ON, OFF, "stationary", np.random.default_rng(2))
    ref = np.random.default_rng(2)
    on = ref.random(K) < P_ON
    e = ref.standard_exponential(K)
    until = np.maximum(np.rint(e * np.where(on, ON, OFF) * 1e9).astype(np.int64), 1)
    got_on, got_until = m.online_until(np.arange(K), 0)
    np.testing.assert_array_equal(got_on, on)
    np.testing.assert_array_equal(got_until, until)
    # 'on' start: only the exponentials
    m = MarkovOnOff(K, ON, OFF, "on", np.random.default_rng(2))
    e = np.random.default_rng(2).standard_exponential(K)
    got_on, got_until = m.online_until(np.arange(K), 0)
    assert got_on.all()
    np.testing.assert_array_equal(got_until, np.rint(e * ON * 1e9).astype(np.int64))


def test_transition_probability_and_markov_property():
    # from 'on' at 0, P(on at tau) = p + (1 - p) exp(-(a + b) tau) (two-state chain)
    K, tau1, tau2 = 100_000, 20.0, 50.0
    m = MarkovOnOff(K, ON, OFF, "on", np.random.default_rng(3))
    a = np.arange(K)
    on1 = m.online(a, int(tau1 * S))
    on2 = m.online(a, int(tau2 * S))
    p11 = P_ON + (1 - P_ON) * np.exp(-RATE * tau1)
    assert within_3se(on1, p11, np.sqrt(p11 * (1 - p11) / K))
    # the path is Markov: P(on at tau1 and on at tau2) = P_on,on(tau1) P_on,on(tau2 - tau1)
    both = p11 * (P_ON + (1 - P_ON) * np.exp(-RATE * (tau2 - tau1)))
    assert within_3se(on1 & on2, both, np.sqrt(both * (1 - both) / K))
    p12 = P_ON + (1 - P_ON) * np.exp(-RATE * tau2)
    assert within_3se(on2, p12, np.sqrt(p12 * (1 - p12) / K))


def test_long_run_fraction_online():
    # times far apart (>> 1/(a+b) = 55 s): each answer is an independent Bernoulli(p)
    K, times = 20_000, (1e5, 2e5, 3e5)
    m = MarkovOnOff(K, ON, OFF, "on", np.random.default_rng(4))
    answers = np.concatenate([m.online(np.arange(K), int(t * S)) for t in times])
    assert within_3se(answers, P_ON, np.sqrt(P_ON * (1 - P_ON) / answers.size))


def test_periods_walked_at_switch_times():
    # querying each device exactly at its next switch walks every period of its path
    K, steps = 2000, 30
    m = MarkovOnOff(K, ON, OFF, "stationary", np.random.default_rng(5))
    a = np.arange(K)
    on, until = m.online_until(a, 0)
    on_periods, off_periods = [], []
    for _ in range(steps):
        t = until
        new_on, until = m.online_until(a, t)
        np.testing.assert_array_equal(new_on, ~on)  # every switch flips the state
        on = new_on
        on_periods.append((until - t)[on])
        off_periods.append((until - t)[~on])
    on_d = np.concatenate(on_periods) / S
    off_d = np.concatenate(off_periods) / S
    assert within_3se(on_d, ON, ON / np.sqrt(on_d.size))  # Exp: sd = mean
    assert within_3se(off_d, OFF, OFF / np.sqrt(off_d.size))
    assert within_3se(on_d**2, 2 * ON**2, np.sqrt(20 * ON**4) / np.sqrt(on_d.size))
    # fraction of walked time online, renewal-reward: p (delta-method SE of the ratio)
    n = min(on_d.size, off_d.size)
    x, y = on_d[:n], on_d[:n] + off_d[:n]
    r = x.sum() / y.sum()
    se = np.sqrt(np.var(x - r * y) / n) / y.mean()
    assert abs(r - P_ON) < 3 * se


def test_queries_must_be_non_decreasing():
    m = MarkovOnOff(5, ON, OFF, "on", np.random.default_rng(6))
    m.online(np.array([0, 1]), np.array([10 * S, 3 * S]))
    snap = (m._on.copy(), m._next.copy(), m._last.copy())
    with pytest.raises(
        ValueError, match=r"agent 0 asked at t_ns = 5000000000 after t_ns = 10000000000"
    ):
        m.online(np.array([1, 0]), np.array([4 * S, 5 * S]))
    with pytest.raises(ValueError, match="non-decreasing"):
        m.online(np.array([2, 2]), np.array([7 * S, 6 * S]))
    with pytest.raises(ValueError, match="non-decreasing"):
        m.online(np.array([3]), np.array([-1]))
    for before, after in zip(snap, (m._on, m._next, m._last), strict=True):
        np.testing.assert_array_equal(before, after)  # a refused call changes nothing
    m.online(np.array([0]), np.array([10 * S]))  # equal times are fine


def test_repeated_agent_in_one_call_equals_sequential_calls():
    times = np.array([5, 100, 400, 2000]) * S
    m1 = MarkovOnOff(3, ON, OFF, "stationary", np.random.default_rng(7))
    agents = np.array([1, 0, 1, 1, 2, 0, 1])
    t = np.array([times[0], times[0], times[1], times[2], times[0], times[3], times[3]])
    on1, until1 = m1.online_until(agents, t)
    # passes: first occurrences (agents 1, 0, 2), then second (1, 0), then third, fourth
    m2 = MarkovOnOff(3, ON, OFF, "stationary", np.random.default_rng(7))
    on2, until2 = np.empty(7, bool), np.empty(7, np.int64)
    for q in ([0, 1, 4], [2, 5], [3], [6]):
        on2[q], until2[q] = m2.online_until(agents[q], t[q])
    np.testing.assert_array_equal(on1, on2)
    np.testing.assert_array_equal(until1, until2)
    assert m1.rng.bit_generator.state == m2.rng.bit_generator.state


def test_markov_is_reproducible():
    def run(seed):
        m = build_availability(
            AvailabilityConfig(model="markov", mean_on_s=30.0, mean_off_s=10.0),
            500,
            np.random.default_rng(seed),
        )
        return np.concatenate([m.online(np.arange(500), t * S) for t in (0, 7, 40, 41, 300)])

    np.testing.assert_array_equal(run(8), run(8))
    assert not np.array_equal(run(8), run(9))


# ---------------------------------------------------------------------------- traces

TRACE = {
    2: {"active": [2.0], "inactive": [3.0], "finish_time": 10, "model": "x"},
    1: {"active": [0, 10], "inactive": [5, 20], "finish_time": 30, "duration": 30},
}
# K = 5 agents on 2 trace clients (sorted ids 1, 2): agents 0, 2, 4 -> id 1; 1, 3 -> id 2
GRID = [0, 1.5, 2, 2.5, 3, 4.999999999, 5, 9, 10, 19.5, 20, 29, 30, 31, 35, 42.5, 52]
EXPECT_REPEAT = {  # online on [active[i], inactive[i]), time wrapped modulo finish_time
    1: [1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0],
    2: [0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1],
}
EXPECT_ONCE = {
    1: [1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0],
    2: [0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
}


def _grid_answers(model):
    K = 5
    agents = np.repeat(np.arange(K), len(GRID))
    t = np.tile(np.rint(np.array(GRID) * S).astype(np.int64), K)
    return model.online(agents, t).reshape(K, len(GRID))


def _expected(table):
    rows = [table[1], table[2], table[1], table[2], table[1]]
    return np.array(rows, dtype=bool)


@pytest.mark.parametrize("fmt", ["json", "pkl", "pickle"])
def test_trace_file_replayed_exactly(tmp_path, fmt):
    path = tmp_path / f"trace.{fmt}"
    if fmt == "json":
        path.write_text(json.dumps(TRACE))
    else:
        path.write_bytes(pickle.dumps(TRACE))
    pickled = fmt != "json"  # a pickle is read only with the opt-in
    trace = load_trace(path, allow_pickle=pickled)
    rep = TraceAvailability(trace, 5, repeat=True)
    once = TraceAvailability(trace, 5, repeat=False)
    assert [str(c) for c in rep.client_ids] == ["1", "2"]
    np.testing.assert_array_equal(rep.client_of(np.arange(5)), [0, 1, 0, 1, 0])
    np.testing.assert_array_equal(_grid_answers(rep), _expected(EXPECT_REPEAT))
    np.testing.assert_array_equal(_grid_answers(once), _expected(EXPECT_ONCE))
    cfg = AvailabilityConfig(
        model="trace", trace_path=str(path), trace_repeat=True, trace_allow_pickle=pickled
    )
    assert cfg.cross_check(5) == []
    built = build_availability(cfg, 5, np.random.default_rng(0))
    np.testing.assert_array_equal(_grid_answers(built), _expected(EXPECT_REPEAT))


def test_trace_until_times():
    rep = TraceAvailability(TRACE, 2, repeat=True)
    once = TraceAvailability(TRACE, 2, repeat=False)
    a = np.array([0, 0, 0, 1, 1, 1])
    t = np.array([4, 7, 25, 2, 4, 12]) * S
    on, until = rep.online_until(a, t)
    np.testing.assert_array_equal(on, [1, 0, 0, 1, 0, 1])
    # end of interval, next start, end of period (30), end of interval, end of period, 10 + 3
    np.testing.assert_array_equal(until, np.array([5, 10, 30, 3, 10, 13]) * S)
    on, until = once.online_until(a, t)
    np.testing.assert_array_equal(on, [1, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(until[:2], np.array([5, 10]) * S)
    assert until[2] == until[4] == until[5] == NEVER_NS


def test_trace_ids_sorted_numerically_and_empty_clients():
    trace = {"10": {"active": [0], "inactive": [1]}, "9": {"active": [], "inactive": []}}
    m = TraceAvailability(trace, 3, repeat=True)
    assert m.client_ids == ["9", "10"]
    on = m.online(np.array([0, 1, 2, 1]), np.array([0, 0, 0, 1]) * S // 2)
    np.testing.assert_array_equal(on, [False, True, False, True])
    # without finish_time the period is the last inactive time (1 s)
    np.testing.assert_array_equal(m.online(np.array([1, 1]), np.array([S, S + S // 2])), [1, 1])


@pytest.mark.parametrize(
    "content, match",
    [
        ("{not json", "cannot read trace file .*JSONDecodeError"),
        ("[1, 2]", "expected a non-empty mapping"),
        ("{}", "expected a non-empty mapping"),
        (
            '{"1": {"active": [0, 5]}}',
            "client '1': expected a table with lists 'active' and 'inactive'",
        ),
        (
            '{"1": {"active": [0, 5], "inactive": [1]}}',
            "'active' has 2 entries but 'inactive' has 1",
        ),
        ('{"1": {"active": [0, 2], "inactive": [3, 4]}}', "intervals 0 and 1 overlap"),
        ('{"1": {"active": [4], "inactive": [3]}}', "interval 0 ends before it starts"),
        (
            '{"0": {"active": [], "inactive": []}, "1": {"active": [0, 4, 9], "inactive": [1, 5, 8]}}',
            r"client '1': interval 2 ends before it starts \(9 > 8\)",
        ),
        (
            '{"1": {"active": [0], "inactive": [1]}, "2": {"active": [0, 4], "inactive": [5, 6]}}',
            r"client '2': intervals 0 and 1 overlap or are out of order \(inactive\[0\] = 5 >",
        ),
        ('{"1": {"active": [0], "inactive": [2e9]}}', r"'inactive'\[0\] = 2e\+09 is not a finite"),
        (
            '{"1": {"active": [0], "inactive": [1], "finish_time": "x"}}',
            "'finish_time' must be a number",
        ),
        ('{"1": {"active": ["a"], "inactive": [3]}}', "'active' must be a list of numbers"),
        (
            '{"1": {"active": [0], "inactive": [3], "finish_time": 0}}',
            "'finish_time' must be in \\(0",
        ),
    ],
)
def test_bad_trace_files_give_one_clear_error(tmp_path, content, match):
    path = tmp_path / "t.json"
    path.write_text(content)
    with pytest.raises(TraceError, match=match):
        load_trace(path)
    errs = AvailabilityConfig(model="trace", trace_path=str(path)).cross_check(3)
    assert len(errs) == 1 and errs[0].key == "network.availability.trace_path"
    assert str(path) in errs[0].message


def test_missing_or_unknown_trace_files(tmp_path):
    errs = AvailabilityConfig(model="trace", trace_path=str(tmp_path / "no.pkl")).cross_check(3)
    assert len(errs) == 1 and "not found" in errs[0].message
    errs = AvailabilityConfig(model="trace").cross_check(3)
    assert len(errs) == 1 and "needs trace_path" in errs[0].message
    (tmp_path / "t.csv").write_text("1,2")
    with pytest.raises(TraceError, match="unknown format '.csv'"):
        load_trace(tmp_path / "t.csv")
    (tmp_path / "bad.pkl").write_bytes(b"not a pickle")
    with pytest.raises(TraceError, match="cannot read trace file"):
        load_trace(tmp_path / "bad.pkl", allow_pickle=True)
    with pytest.raises(ScenarioError, match="network.availability.trace_path: trace file"):
        build_availability(
            AvailabilityConfig(model="trace", trace_path=str(tmp_path / "no.json")), 3, None
        )


def test_registry_and_unknown_model():
    register_availability("test-off", lambda cfg, K, rng: type("Off", (), {"K": K})())
    try:
        cfg = AvailabilityConfig(model="test-off")
        assert cfg.cross_check(2) == []
        assert build_availability(cfg, 2, None).K == 2
    finally:
        del AVAILABILITY_MODELS["test-off"]
    errs = AvailabilityConfig(model="markof").cross_check(2)
    assert len(errs) == 1 and errs[0].key == "network.availability.model"
    assert "'markov'" in errs[0].message
    assert AvailabilityConfig(model="markov").cross_check(2) == []


def test_bad_queries_are_rejected():
    m = TraceAvailability(TRACE, 3)
    with pytest.raises(ValueError, match="0..2"):
        m.online(np.array([3]), np.array([0]))
    with pytest.raises(ValueError, match="integer nanoseconds"):
        m.online(np.array([0]), np.array([0.5]))

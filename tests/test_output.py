"""The typed records serialise to the output contract: order, optional fields, NaN as null."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from edgesim.output import AgentRecord, RunRecord, agent_dicts, clean


def test_optional_fields_are_left_out_when_unset_and_order_is_the_declared_one():
    run = RunRecord(name="x", payments=np.array([1.0, math.nan]), payment_error_max=None)
    out = run.to_json_dict()
    assert "vcg_payments" not in out and "network" not in out and "privacy" not in out
    assert "payment_error_max" in out and out["payment_error_max"] is None  # always present
    assert out["payments"] == [1.0, None]
    keys = list(out)
    assert keys.index("budget_total") < keys.index("mechanism_info") < keys.index("agents")
    run.network = {"fidelity": "events"}
    keys = list(run.to_json_dict())
    assert keys.index("budget_total") < keys.index("network") < keys.index("mechanism_info")


def test_agent_record_network_only_on_network_runs():
    a = AgentRecord(id=0, n=5, strategy="truthful", participates=True, payment=0.5)
    assert "network" not in a.to_json_dict()
    a.network = {"lost": 0}
    assert a.to_json_dict()["network"] == {"lost": 0}


def test_agent_dicts_are_the_records_json_objects():
    # the columnar builder against the record's own serialisation, with and without network
    columns = {
        "id": [0, 1],
        "n": [5, 7],
        "strategy": ["truthful", "amplify(gamma=4)"],
        "participates": [True, False],
        "payment": [0.5, None],
        "test_loss": [1.25, 2.0],
    }
    network = {"lost": [0, 3], "energy_j": [0.1, 0.2]}
    for net in (None, network):
        records = [
            AgentRecord(
                **{k: v[i] for k, v in columns.items()},
                network=None if net is None else {k: v[i] for k, v in net.items()},
            ).to_json_dict()
            for i in range(2)
        ]
        got = agent_dicts(columns, net)
        assert got == records and [list(d) for d in got] == [list(d) for d in records]
    with pytest.raises(ValueError, match="not agent fields"):
        agent_dicts({"id": [0], "loss": [1.0]})
    with pytest.raises(ValueError, match="every column must hold 2 values"):
        agent_dicts({"id": [0, 1], "n": [5]})


def test_clean_converts_numpy_and_non_finite():
    assert clean({"a": np.int64(3), "b": [np.float32(0.5), np.inf]}) == {"a": 3, "b": [0.5, None]}


# The JSON writer (edgesim.output.json_pieces): the stdlib's text, character for character.


def _random_value(rng, depth: int):
    """A random JSON-able value: scalars of every kind, lists (some long, some of dicts that
    share their keys, like the agents), dicts with str, int, float, bool and None keys."""
    scalars = [
        lambda: float(rng.normal() * 10.0 ** rng.integers(-30, 30)),
        lambda: float(rng.integers(-5, 5)),  # 0.0, -3.0 ...: repr with ".0"
        lambda: int(rng.integers(-(2**62), 2**62)),
        lambda: bool(rng.integers(2)),
        lambda: None,
        lambda: rng.choice(["", "a", 'q"uo\\te', "50%", "%s", "line\nbreak", "é€😀", "\x00\x1f"]),
        lambda: np.float64(rng.normal()),  # a float subclass: the stdlib writes float.__repr__
    ]
    kind = rng.integers(0, 6) if depth > 0 else 0
    if kind <= 1:
        return scalars[rng.integers(len(scalars))]()
    if kind == 2:  # a list of one scalar kind (a column), or of mixed kinds
        pick = [rng.integers(len(scalars))] if rng.random() < 0.5 else range(len(scalars))
        return [scalars[rng.choice(list(pick))]() for _ in range(rng.integers(0, 12))]
    if kind == 3:  # dicts sharing their keys, some nested, some not quite alike
        keys = [str(k) for k in rng.choice(["id", "x%", "net", "y", "z"], rng.integers(0, 4))]
        keys = list(dict.fromkeys(keys))
        rows = [{k: _random_value(rng, depth - 1) for k in keys} for _ in range(rng.integers(0, 9))]
        if rows and rng.random() < 0.3:
            rows[-1] = dict(reversed(list(rows[-1].items())))  # same keys, other order
        return rows
    if kind == 4:
        return tuple(_random_value(rng, depth - 1) for _ in range(rng.integers(0, 5)))
    key_kinds = [lambda: str(rng.integers(100)), lambda: int(rng.integers(-9, 9)), lambda: 0.5]
    key_kinds += [lambda: True, lambda: None]
    return {key_kinds[rng.integers(5)](): _random_value(rng, depth - 1) for _ in range(4)}


@pytest.fixture(params=["orjson digits", "float.__repr__ digits"])
def float_writer(request, monkeypatch):
    """The JSON writer with each of its two float writers (both must give the stdlib's text)."""
    from edgesim import json_text

    if request.param == "orjson digits":
        assert json_text._fast_floats() is not None  # orjson installed and agreeing: the default
    else:
        monkeypatch.setattr(json_text, "_fast_floats", lambda: None)
    return json_text


def test_json_writer_gives_the_stdlib_text_for_random_values(float_writer, monkeypatch):
    from edgesim.output import to_json

    rng = np.random.default_rng(32)
    for bulk, chunk in ((256, 1 << 14), (0, 3), (2, 1)):  # every list as blocks of columns too
        monkeypatch.setattr(float_writer, "BULK_ITEMS", bulk)
        monkeypatch.setattr(float_writer, "CHUNK_ITEMS", chunk)
        for _ in range(300):
            value = _random_value(rng, 4)
            assert to_json(value) == json.dumps(value, indent=1, allow_nan=False) + "\n"


def test_json_writer_floats_from_orjson_are_float_repr_across_all_exponents():
    """Every float as ``float.__repr__`` writes it (orjson's digits, laid out as repr lays
    them out): random bit patterns (every exponent, the subnormals), decimal-uniform
    magnitudes around each layout threshold, and the neighbours of 1e-5, 1e-4 and 1e16."""
    from edgesim import json_text

    assert json_text._fast_floats() is not None  # orjson installed and agreeing: the default
    rng, size = np.random.default_rng(7), 100_000
    bits = rng.integers(0, 2**64, size, dtype=np.uint64).view(np.float64)
    spread = 10.0 ** rng.uniform(-8, 18, size) * rng.choice([-1.0, 1.0], size)
    scale = 10.0 ** np.floor(np.log10(np.abs(spread)) - rng.integers(0, 4, size))
    short = np.round(spread / scale) * scale  # 1 to 4 digits: 0.25, 1e-05, 3e+16
    edges = [np.nextafter(t, d) for t in (1e-5, 1e-4, 1e16) for d in (0.0, np.inf)]
    values = np.concatenate([bits[np.isfinite(bits)], spread, short, edges, [0.0, -0.0]])
    items = values.tolist()
    text = json_text.json_pieces(items + [None])
    want = json.dumps(items + [None], indent=1, allow_nan=False)
    assert "".join(text) == want


def test_json_writer_agents_at_scale_are_the_stdlib_bytes(float_writer):
    import io

    from edgesim.output import dump_json

    rng = np.random.default_rng(0)
    K = float_writer.CHUNK_ITEMS + 1000  # two blocks
    loss = (rng.lognormal(size=K) * 10.0 ** rng.integers(-8, 20, K)).tolist()
    agents = [
        {
            "id": k,
            "strategy": "truthful" if k % 7 else "amplify(gamma=4)",
            "participates": k % 5 != 0,
            "payment": loss[k] if k % 5 else 0.0,
            "local_loss": None,
            "test_accuracy": None if k % 3 else 0.5,
            "network": {"messages_up": k % 11, "energy_j": loss[-k]},
        }
        for k in range(K)
    ]
    result = {"K": K, "payments": loss, "info": {"err": [None] + loss[1:]}, "agents": agents}
    buf = io.BytesIO()
    dump_json(result, buf)
    assert buf.getvalue() == (json.dumps(result, indent=1, allow_nan=False) + "\n").encode()


def test_json_writer_raises_what_the_stdlib_raises(float_writer):
    from edgesim.json_text import BULK_ITEMS
    from edgesim.output import to_json

    long_floats = [0.5] * BULK_ITEMS + [math.inf]
    rows = [{"a": 1.0}] * BULK_ITEMS + [{"a": math.nan}]
    loop: list = [1]
    loop.append(loop)
    for bad, error in (
        (long_floats, ValueError),
        (rows, ValueError),
        ({"x": [math.nan]}, ValueError),
        ([np.float32(1.0)] * (BULK_ITEMS + 1), TypeError),
        ({(1, 2): 0}, TypeError),
        (loop, ValueError),
    ):
        with pytest.raises(error) as ours:
            to_json(bad)
        with pytest.raises(error) as stdlib:
            json.dumps(bad, indent=1, allow_nan=False)
        assert str(ours.value) == str(stdlib.value)


def test_clean_in_bulk_is_clean_item_by_item():
    from edgesim.json_text import BULK_ITEMS

    def reference(x):  # clean's rules, one item at a time
        if isinstance(x, (list, tuple)):
            return [reference(v) for v in x]
        if isinstance(x, np.ndarray):
            return reference(x.tolist())
        if isinstance(x, (float, np.floating)):
            return None if not math.isfinite(x) else float(x)
        return int(x) if isinstance(x, np.integer) else x

    def kinds(x):  # the type of every item, nested lists flattened
        return [t for v in x for t in kinds(v)] if isinstance(x, list) else [type(x)]

    rng = np.random.default_rng(1)
    floats = rng.normal(size=BULK_ITEMS + 5)
    floats[[3, 7, 11]] = [math.nan, math.inf, -math.inf]
    cases = [
        floats,
        floats.tolist(),
        floats.astype(np.float32),
        np.arange(BULK_ITEMS + 1),
        np.arange(BULK_ITEMS + 1) % 2 == 0,
        floats.tolist() + [None, 1, True, "x"],
        floats.reshape(1, -1),
        [np.float64(1.5)] * BULK_ITEMS + [np.int64(2)],
        floats.astype(np.longdouble),  # its tolist() keeps numpy scalars: clean makes floats
    ]
    for case in cases:
        got, want = clean(case), reference(case)
        assert got == want  # NaN and infinities are None: plain equality holds
        assert kinds(got) == kinds(want)


def test_gc_paused_pauses_the_collector_and_restores_its_state():
    import gc

    from edgesim.output import gc_paused

    for before in (True, False):
        (gc.enable if before else gc.disable)()
        try:
            with gc_paused():
                assert not gc.isenabled()
            assert gc.isenabled() is before
            with pytest.raises(KeyError), gc_paused():
                raise KeyError("restored on an error too")
            assert gc.isenabled() is before
        finally:
            gc.enable()

"""The typed records serialise to the output contract: order, optional fields, NaN as null."""

from __future__ import annotations

import math

import numpy as np

from edgesim.output import AgentRecord, RunRecord, clean


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


def test_clean_converts_numpy_and_non_finite():
    assert clean({"a": np.int64(3), "b": [np.float32(0.5), np.inf]}) == {"a": 3, "b": [0.5, None]}

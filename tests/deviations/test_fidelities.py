"""Every deviation family that does not hold replies back gives the same run in events and batched."""

from __future__ import annotations

import json

import pytest

import edgesim
from edgesim.scenario import from_dict

FAMILIES = [
    {"kind": "amplify", "gamma": 3.0, "phases": "phase2", "problems": "others"},
    {"kind": "pretend-data", "target_shift": 0.5},
    {"kind": "pull", "lam": 0.5},
    {"kind": "loss-misreport", "loss_shift": 0.1},
    {"kind": "free-ride", "report": "first"},
    {"kind": "withhold", "probability": 0.5, "phases": "phase2"},
    {"kind": "claim-size", "factor": 2.0},
    {"kind": "sybil", "identities": 2},
    {"kind": "noisy", "noise_std": 0.1},
]


def result(fidelity: str, family: dict) -> dict:
    """Return the run's JSON data, less what only the fidelity names (its echo)."""
    sc = from_dict(
        {
            "seed": 4,
            "data": {"source": "synthetic", "samples": 160, "features": 3},
            "model": {"kind": "ridge", "l2": 0.1},
            "agents": {
                "count": 4,
                "weights": "claimed",
                "strategy": [{"agent": 1, **family}],
            },
            "mechanism": {
                "kind": "ffl",
                "phase1_rounds": 40,
                "phase2_rounds": 3,
                "phase2_check": False,  # T2 rounds exactly: a short run
            },
            "network": {"fidelity": fidelity},
        }
    )
    data = json.loads(edgesim.run(sc).to_json())
    data.pop("scenario")
    data["network"].pop("fidelity")
    return data


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f["kind"])
def test_events_equal_batched(family):
    events, batched = result("events", family), result("batched", family)
    assert events == batched
    assert events["communication"]["messages_up"] > 0

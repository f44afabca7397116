"""The output contract: one run's record and one agent's record, as typed dataclasses.

:func:`edgesim.simulate.run` fills a :class:`RunRecord`; :meth:`RunRecord.to_json_dict`
serialises it to the JSON that ``edgesim run --json`` writes (field names are
public: fields may be added, none renamed or removed). A field marked optional
is left out of the JSON when it is None (it only exists for some runs: a
network, DP-FFL, an audit ...). ``docs/output.md``'s field table is generated
from these declarations (:func:`output_markdown`), and a test keeps it current.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import io
import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from edgesim.json_text import BULK_ITEMS, json_pieces


def _f(doc: str, optional: bool = False, default: Any = None) -> Any:
    return field(default=default, metadata={"doc": doc, "optional": optional})


def clean(x):
    """Return ``x`` as JSON-ready plain data: numpy scalars and arrays converted, NaN -> None."""
    if isinstance(x, dict):
        return {str(k): clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        types = set(map(type, x)) if len(x) >= BULK_ITEMS else None
        if types is not None and types <= _PLAIN_TYPES:
            return _clean_plain(x, types)
        return [clean(v) for v in x]
    if isinstance(x, np.ndarray):
        plain = x.dtype.kind in "biu" or (x.dtype.kind == "f" and x.dtype.itemsize <= 8)
        if x.ndim == 1 and plain:  # a column: its list (Python numbers) and its NaN at once
            out = x.tolist()
            if x.dtype.kind == "f":
                for i in np.flatnonzero(~np.isfinite(x)).tolist():
                    out[i] = None
            return out
        return clean(x.tolist())
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return None if math.isnan(x) or math.isinf(x) else x
    return x


@contextlib.contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector in the ``with`` block (restored after).

    Forming K objects per run at large K (the agents' records, their JSON dicts) otherwise
    sets off full collections, each over every object alive: at K = 10^6, 10^6 AgentRecords
    took 2.8 s of CPU against 1.2 s, and their dicts 3.7 s against 0.7 s. Nothing formed
    there refers to itself, so no garbage waits for the collector.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_PLAIN_TYPES = frozenset({int, float, bool, str, type(None)})


def _clean_plain(x, types: set) -> list:
    """Return :func:`clean` of a list of plain ints, floats, bools, strs and None (``types``
    holds their types), in bulk: a copy with each NaN or infinity replaced by None."""
    if types == {float}:
        out = list(x)
        for i in np.flatnonzero(~np.isfinite(np.array(out, dtype=np.float64))).tolist():
            out[i] = None
        return out
    if float not in types:
        return list(x)
    isfinite = math.isfinite
    return [None if type(v) is float and not isfinite(v) else v for v in x]


def _as_dict(record) -> dict:
    out = {}
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if value is None and f.metadata["optional"]:
            continue
        out[f.name] = value
    return out


@dataclass
class AgentRecord:
    """One agent's outcome (the JSON's ``agents`` list, numbered from 0)."""

    id: int = _f("the agent's index (in paper-linear, agent 0 is the paper's agent 1, n = 50)")
    n: int = _f("its training samples n_k")
    strategy: str = _f("its strategy, e.g. truthful or amplify(gamma=4)")
    participates: bool = _f("false when it opted out (learns locally, pays nothing)")
    payment: float | None = _f("its payment P_k (loss units; 0 outside the federation)")
    train_loss: float | None = _f("F_k(w*): its training loss at the model it ends with")
    test_loss: float | None = _f("its test loss there: the estimate of its expected risk E_k")
    overall_loss: float | None = _f("payment + train_loss (Definition 1)")
    overall_test_loss: float | None = _f("payment + test_loss")
    local_loss: float | None = _f(
        "test loss of its own local-learning model (null: not trained); compare it with"
        " overall_test_loss"
    )
    local_train_loss: float | None = _f(
        "training loss of its local-learning model; compare it with overall_loss"
    )
    test_accuracy: float | None = _f("classification: its test accuracy at the model it ends with")
    local_test_accuracy: float | None = _f("classification: test accuracy of its local model")
    network: dict | None = _f(
        "network runs: messages_down, messages_up, bytes_down, bytes_up, transmissions, lost, cut,"
        " energy_j (J: transmit, receive, compute and idle; unless network.energy.model = 'none')",
        optional=True,
    )

    def to_json_dict(self) -> dict:
        """Return the agent's JSON object (its fields in order; ``network`` only when set)."""
        attrs = self.__dict__
        if tuple(attrs) != _AGENT_FIELDS:  # __init__ sets them in order: the common case
            return _as_dict(self)
        out = attrs.copy()  # one copy, not a getattr per field: K of them at large K
        for name in _AGENT_OPTIONAL:
            if out[name] is None:
                del out[name]
        return out


_AGENT_FIELDS = tuple(f.name for f in dataclasses.fields(AgentRecord))
_AGENT_OPTIONAL = tuple(f.name for f in dataclasses.fields(AgentRecord) if f.metadata["optional"])


def agent_dicts(columns: dict[str, list], network: dict[str, list] | None = None) -> list[dict]:
    """Return the JSON objects of K agents, as :meth:`AgentRecord.to_json_dict` makes them,
    from columns: ``columns`` maps AgentRecord's fields (``network`` aside) to K plain values
    each (a field left out is null); ``network`` maps its keys to K values each (None: no
    ``network`` object). One dict per agent from zipped columns: no record objects, no
    per-agent dict of fields (at K = 10^6 about 2 s against 8 s for AgentRecords)."""
    unknown = set(columns) - set(_AGENT_FIELDS) | ({"network"} & set(columns))
    if unknown:
        raise ValueError(f"not agent fields: {sorted(unknown)}")
    K = len(next(iter(columns.values()))) if columns else 0
    if any(len(c) != K for c in [*columns.values(), *(network or {}).values()]):
        raise ValueError(f"every column must hold {K} values")
    keys = [name for name in _AGENT_FIELDS if name != "network"]
    cols = [columns[name] if name in columns else itertools.repeat(None, K) for name in keys]
    with gc_paused():  # K new dicts
        if network:
            cols.append(map(_dict_maker(tuple(network)), *network.values()))
            keys.append("network")
        return list(map(_dict_maker(tuple(keys)), *cols))


@functools.lru_cache(maxsize=8)
def _dict_maker(keys: tuple[str, ...]):
    """Return a function of len(keys) arguments that returns the dict of ``keys`` to them, in
    order: a dict display of constant keys, compiled once (about 40 % faster per dict than
    ``dict(zip(keys, values))``, which counts at K = 10^6)."""
    if not all(type(key) is str for key in keys):
        raise TypeError(f"keys must be str, got {keys!r}")
    params = [f"v{i}" for i in range(len(keys))]
    items = ", ".join(f"{key!r}: {p}" for key, p in zip(keys, params, strict=True))
    return eval(f"lambda {', '.join(params)}: {{{items}}}")  # keys are str: their reprs


@dataclass
class RunRecord:
    """One run's outcome: the JSON object ``edgesim run --json`` writes."""

    edgesim_version: str = _f("the version of edgesim that ran it")
    name: str = _f("the scenario's name")
    scenario: dict = _f("the resolved scenario, defaults included")
    seed: int = _f("the seed of every random stream")
    mechanism: str = _f("mechanism.kind")
    K: int = _f("number of agents")
    participants: int = _f("agents in the federation (not opted out)")
    data: dict = _f("n (training samples), d (features), classes (0: regression)")
    constants: dict = _f("mu and L_g of the model class on this data")
    diverged: bool = _f("true when the mechanism's model or a payment stopped being finite")
    iterations: dict = _f(
        "phase1 (T1 as run), phase2_total, phase2_per_agent (the Phase II rounds of each"
        " agent's problem, or its cluster's in DP-FFL), phase2_problems"
    )
    communication: dict = _f(
        "messages_down (with network.downlink = 'broadcast': the copies sent, one per cell),"
        " messages_up, bytes_down, bytes_up, transmissions_up, retransmissions,"
        " dropped, rounds per phase, model_message_bytes (one model or gradient message as"
        " sent: network.model_bytes + 64) and learning_model_message_bytes (the learning"
        " model's own: 8 n_params + 64)"
    )
    sim_time_s: dict = _f(
        "simulated seconds: total, phase1, phase2 (zero without a network); by_direction:"
        " {phase1, phase2} each {downlink, computation, uplink, waiting}, the mean recipient's"
        " time summed over the phase's exchanges (they sum to the phase's seconds): until its"
        " request arrived, computing, from sending its reply until it landed (or the sender gave"
        " up), and idle the rest of the exchange (see Round time by direction)"
    )
    model: dict = _f(
        "global_loss (F(w*) over the participants), test_accuracy (classification),"
        " optimum_loss and optimality_gap (F(w*) - F(w^o); unless exact_vcg = false),"
        " exact_vcg ({computed, reason}), weights (with output.model_weights: w* in the"
        " model's shape)"
    )
    payments: list | None = _f(
        "one payment per agent (loss units), 0 for agents that opted out (output.per_agent ="
        " 'json' only; else the sidecar's payment column)",
        optional=True,
    )
    vcg_payments: list | None = _f("exact VCG payments, when computed", optional=True)
    payment_error_max: float | None = _f("max_k |P_k - P_k^VCG| (null without exact VCG)")
    payment_error_rel_max: float | None = _f(
        "max_k |P_k - P_k^VCG| / |P_k^VCG|, when exact VCG is computed", optional=True
    )
    budget_total: float | None = _f("sum of the payments (>= 0 by Proposition 7 for FFL)")
    network: dict | None = _f(
        "network runs: fidelity, round_policy, exchanges, transmissions, lost, cut,"
        " secagg_messages, secagg_bytes, secagg_aborted, energy (total_j, tx_j, rx_j, compute_j,"
        " idle_j, by_phase_j, batteries_emptied; unless network.energy.model = 'none'), handovers"
        " (moving devices)",
        optional=True,
    )
    privacy: dict | None = _f(
        "DP-FFL: alpha, beta, calibration, sigma, sigma_p, epsilon_accounted (tight; null"
        " when public_constants is false: no claim is made), epsilon_zcdp (the paper's"
        " conversion; null likewise), epsilon_noise_only (the noise's accounting alone, not a"
        " claim), releases ({label, sensitivity, sigma, count}), sensitivity_enforced,"
        " public_constants, smoothness ({L_g, source: bound | public | data,"
        " feature_bound}), note, clip_norm, loss_bound, clipped_fraction,"
        " loss_clipped_fraction",
        optional=True,
    )
    clipping: dict | None = _f(
        "other mechanisms with clipping set: clip_norm, loss_bound, clipped_fraction,"
        " loss_clipped_fraction",
        optional=True,
    )
    mechanism_info: dict = _f(
        "the mechanism's extras: step sizes, T2_target, gradient_bound_observed,"
        " phase2_capped, clusters, and FFL's phase2_restarts, phase2_eta2_final, and its"
        " payment error estimate (loss units, per agent id, each with its _max):"
        " payment_phase1_error, payment_truncation_error, payment_discretisation_error and"
        " their sum payment_error_estimate"
    )
    audit: dict | None = _f(
        "runs of edgesim audit: trial, neighbour, statistic, canary_agent, canary_gradient_norm",
        optional=True,
    )
    best_response: dict | None = _f(
        "with [best_response] enabled, the search's result: family, agent (an id, or a list for"
        " a coalition), objective_kind, parameters (the best found), objective, truthful"
        " (J with every agent truthful), regret (= gain: truthful - objective), gamma (amplify),"
        " opt_out (J when the agent leaves), bound and its terms (the faithfulness bound for"
        " that mechanism and setting, or null with a reason), curve (every evaluated point),"
        " evaluations, search (brackets, fixed options, grid, method, budget); the original"
        " gamma search also keeps its grid",
        optional=True,
    )
    economics: dict | None = _f(
        "the paper's properties (Sec. II): E1, E2, E3, E4, each with property (its name),"
        " holds (true, false, or null: not checked, reason says why) and reason. Tolerance tol:"
        " mechanism.epsilon for ffl and dp-ffl, else 1e-3 (loss units; tolerance_source says"
        " which). E1 efficiency: gap = F(w*) - F(w^o) (model.optimality_gap), holds when"
        " gap <= tol. E2 faithful implementation (only with a best-response search): agent,"
        " family, parameters, objective_kind, regret (J truthful - J of the best deviation"
        " found), bound (the search's, or null), opt_out_gain; holds when regret <= bound, null"
        " without a bound. E3 voluntary participation, over the participants: an agent fails"
        " when overall_test_loss - local_loss > tol; failing_count, failing_agents (the first"
        " 20 ids), above_local_count (excess > 0), excess_max, excess_max_agent,"
        " undetermined_count (no test sample or payment); null without output.local_baseline."
        " E4 weak budget balance: budget_total >= -tolerance (1e-9 sum_k |P_k|: rounding)"
    )
    sybil: list | None = _f(
        "with a sybil strategy, one object per owner: owner, identities (their agent ids, the"
        " owner's first), samples, weights p_i and payments P_i of each, money (sum p_i P_i),"
        " weight_truthful (p_k), J (money / p_k + F_k(w*)), truthful (money and J when the owner"
        " is one truthful agent) and gain (truthful J - J)",
        optional=True,
    )
    claims: dict | None = _f(
        "with a claim-size strategy: weights (agents.weights), read (whether the server weighted"
        " the claims), agents (per claimant: agent, samples, claimed, weight, weight_truthful,"
        " payment, money = weight x payment, J)",
        optional=True,
    )
    per_agent: dict | None = _f(
        "output.per_agent npz, parquet or none: format, file (the sidecar's name, beside the"
        " JSON; null: not written), rows (K), columns, strategy_labels (the strategy column's"
        " codes), summary (per column: count of finite values, sum, mean, min, q01, q05, q25,"
        " median, q75, q95, q99, max)",
        optional=True,
    )
    agents: list = field(
        default_factory=list,
        metadata={
            "doc": "one object per agent (see the agent fields); empty unless output.per_agent ="
            " 'json'",
            "optional": False,
        },
    )

    def to_json_dict(self) -> dict:
        """Return the run's JSON object: plain data, NaN as null, optional fields only when set."""
        out = clean({k: v for k, v in _as_dict(self).items() if k != "agents"})
        with gc_paused():  # K new dicts
            out["agents"] = [
                a.to_json_dict() if isinstance(a, AgentRecord) else a for a in self.agents
            ]
        return out


def output_markdown() -> str:
    """Return the field tables of docs/output.md (Markdown), generated from the dataclasses."""
    lines = []
    for cls, title in ((RunRecord, "The run"), (AgentRecord, "Each agent (`agents[k]`)")):
        lines += [f"### {title}", "", "| field | present | meaning |", "|---|---|---|"]
        for f in dataclasses.fields(cls):
            when = "when it applies" if f.metadata["optional"] else "always"
            lines.append(f"| `{f.name}` | {when} | {f.metadata['doc']} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(output_markdown(), end="")


def to_json(result: dict) -> str:
    """Return the result as JSON text (stable key order, no NaN; byte-identical for a seed).

    The text of ``json.dumps(result, indent=1, allow_nan=False)`` plus a newline, built
    by :func:`edgesim.json_text.json_pieces`. Raises ``ValueError`` on a NaN or infinity,
    ``TypeError`` on a value JSON cannot hold, like ``json.dumps``.
    """
    return "".join(json_pieces(result)) + "\n"


def dump_json(result: dict, fh) -> None:
    """Write :func:`to_json`'s text, UTF-8 encoded, to the binary file ``fh`` chunk by chunk.

    The same bytes without the whole text in memory (at K = 10^6 the text would be
    600 MB): a long list is formatted ``json_text.CHUNK_ITEMS`` items at a time. Raises
    ``ValueError`` on a NaN, like ``to_json``.
    """
    out = io.TextIOWrapper(fh, encoding="utf-8", newline="\n", write_through=False)
    try:
        for piece in json_pieces(result):
            out.write(piece)
        out.write("\n")
        out.flush()
    finally:
        out.detach()

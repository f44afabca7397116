"""Who an agent claims to be: a claimed sample count (``claim-size``), Sybil identities (``sybil``).

The paper's weights p_k = n_k / n set the objective, yet a real server cannot
check n_k, nor that two devices are not one owner (Faithful Federated
Learning, Sec. II sets p_k from the agents' sample counts). Both deviations
are properties of the agent known before the run, not answers to requests:

- ``claim-size``: the agent claims ``factor`` n_k samples
  (:meth:`ClaimSize.claimed_samples`). With ``agents.weights = "claimed"`` the
  server's weights come from the claimed sizes, p_k = claimed n_k / sum of the
  claims (:func:`edgesim.simulate.weights_for`); with ``"samples"`` or
  ``"equal"`` a claim changes nothing.
- ``sybil``: the agent's samples are split over ``identities`` agents
  (:func:`split_owner`), each a device of its own to the mechanism and the
  network, all of one owner. The Simulation applies the split to the data
  before the run (:func:`sybil_split`); identity 0 keeps the owner's index,
  the others are appended after the last agent, so every other agent keeps
  its index.

Both report truthfully in every request (subclasses of
:class:`~edgesim.agents.Truthful`: no report hook is called for them, and an
otherwise truthful population keeps the truthful fast paths). How their owner
scores a run (J with its true data, the money it pays at its claimed or split
weights) is :meth:`edgesim.simulate.Simulation.objective`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from edgesim.agents import Truthful, make_strategy, register_strategy
from edgesim.config import option, resolved_options
from edgesim.errors import ScenarioError
from edgesim.learning.data import FederatedDataset


@dataclass(frozen=True)
class ClaimSize(Truthful):
    """Claim ``factor`` n_k training samples; report truthfully otherwise."""

    factor: float = 1.0
    kind = "claim-size"

    def claimed_samples(self, n_k: float) -> float:
        """Return the sample count the agent claims for its true ``n_k`` (samples): factor n_k."""
        return self.factor * n_k

    def describe(self) -> str:
        """Return ``claim-size(factor=...)``."""
        return f"claim-size(factor={self.factor:g})"


@dataclass(frozen=True)
class Sybil(Truthful):
    """Split the agent's samples over ``identities`` agents of one owner; report truthfully."""

    identities: int = 2
    kind = "sybil"

    def describe(self) -> str:
        """Return ``sybil(identities=...)``."""
        return f"sybil(identities={self.identities})"


@dataclass(frozen=True)
class SybilIdentity(Truthful):
    """One of a Sybil owner's extra identities (not configured: made by the split)."""

    owner: int = 0
    kind = "sybil-identity"

    def describe(self) -> str:
        """Return ``sybil-identity(owner=...)``."""
        return f"sybil-identity(owner={self.owner})"


@dataclass(frozen=True)
class ClaimSizeOptions:
    """The ``claim-size`` strategy's option, written inline in its ``[[agents.strategy]]`` table."""

    factor: float = option(
        1.0,
        "claim-size: the agent claims factor n_k training samples (read by the server with"
        " agents.weights = 'claimed'; no effect with 'samples' or 'equal')",
        gt=0.0,
    )


@dataclass(frozen=True)
class SybilOptions:
    """The ``sybil`` strategy's option, written inline in its ``[[agents.strategy]]`` table."""

    identities: int = option(
        2,
        "sybil: the number m of identities the agent's samples are split over (m near-equal"
        " contiguous parts of its training and test rows; identity 0 keeps the agent's index,"
        " the others are appended after the last agent)",
        ge=2,
    )


@dataclass(frozen=True)
class SybilSplit:
    """Where a split put each owner's identities.

    ``owners``: the owners' indices (in the scenario's numbering); ``identities``:
    for each owner, its identities' indices after the split (the owner's own
    index first); ``K_before``: the number of agents before the split.
    """

    owners: tuple[int, ...]
    identities: tuple[tuple[int, ...], ...]
    K_before: int

    def identities_of(self, agent: int) -> tuple[int, ...] | None:
        """Return ``agent``'s identities (its own index first) if it is an owner, else None."""
        for owner, ids in zip(self.owners, self.identities, strict=True):
            if owner == agent:
                return ids
        return None

    def original(self, agents: np.ndarray) -> np.ndarray:
        """Return ``agents`` (indices after the split) without the added identities, in order."""
        agents = np.asarray(agents, dtype=np.int64)
        return agents[agents < self.K_before]


def _part_ids(block: np.ndarray, owner: int, first_new: int, m: int) -> np.ndarray:
    """Return the new agent index of each row of a ``block`` of ``owner``'s rows: m near-equal
    contiguous parts (``np.array_split``: the first n mod m parts one row longer), part 0
    keeping ``owner``, part j becoming ``first_new + j - 1``."""
    sizes = np.array([len(part) for part in np.array_split(np.arange(block.size), m)])
    labels = np.array([owner, *range(first_new, first_new + m - 1)], dtype=block.dtype)
    return np.repeat(labels, sizes)


def split_owner(data: FederatedDataset, owner: int, m: int) -> FederatedDataset:
    """Return ``data`` with agent ``owner``'s samples split over ``m`` identities (K grows m - 1).

    The owner's training rows (and, separately, its test rows) are cut into m
    near-equal contiguous parts in their stored order (the first n_k mod m parts
    one row longer); part 0 stays agent ``owner``, part j becomes agent
    K + j - 1, so every other agent keeps its index. The arrays keep their dtype.
    """
    K = data.K
    arrays = {}
    for X, y, agent, suffix in (
        (data.X, data.y, data.agent, ""),
        (data.X_test, data.y_test, data.agent_test, "_test"),
    ):
        lo, hi = np.searchsorted(agent, [owner, owner + 1])
        labels = agent.copy()
        labels[lo:hi] = _part_ids(agent[lo:hi], owner, K, m)
        order = np.argsort(labels, kind="stable")  # the new identities' rows move to the end
        arrays[f"X{suffix}"] = X[order]
        arrays[f"y{suffix}"] = y[order]
        arrays[f"agent{suffix}"] = labels[order]
    return FederatedDataset(
        **arrays, K=K + m - 1, n_classes=data.n_classes, description=data.description
    )


def sybil_split(
    data: FederatedDataset, owners: dict[int, int]
) -> tuple[FederatedDataset, SybilSplit]:
    """Return ``data`` with each owner's samples split over its identities, and where they went.

    ``owners`` maps an owner's index to its number of identities m >= 2. Owners
    are split in increasing index order, each appending its m - 1 new
    identities after the agents already there. Raises ValueError when an owner
    has fewer training samples than identities (an identity would hold none).
    """
    K0, n_k = data.K, data.n_k
    ids = []
    for owner, m in sorted(owners.items()):
        if n_k[owner] < m:
            raise ValueError(
                f"agent {owner} holds {int(n_k[owner])} training samples:"
                f" too few for {m} identities"
            )
        first = data.K
        data = split_owner(data, owner, m)
        ids.append((owner, *range(first, first + m - 1)))
    split = SybilSplit(tuple(sorted(owners)), tuple(ids), K0)
    return data, split


def split_sybils(
    data: FederatedDataset, strategies: dict, scenario
) -> tuple[FederatedDataset, SybilSplit | None]:
    """Return ``data`` with every Sybil owner's samples split over its identities, and the
    split (None, and ``data`` itself, without a ``sybil`` strategy).

    ``strategies`` (agent index -> Strategy, the scenario's ``[[agents.strategy]]``)
    gains a :class:`SybilIdentity` for every added identity. Raises ScenarioError
    naming the owner's ``agents.strategy[i].identities`` when it has fewer
    training samples than identities.
    """
    owners = {k: s.identities for k, s in strategies.items() if isinstance(s, Sybil)}
    if not owners:
        return data, None
    try:
        data, split = sybil_split(data, owners)
    except ValueError as err:
        i = next(
            i
            for i, s in enumerate(scenario.agents.strategy)
            if s.agent in owners and str(err).startswith(f"agent {s.agent} ")
        )
        raise ScenarioError(f"agents.strategy[{i}].identities", str(err)) from None
    for owner, ids in zip(split.owners, split.identities, strict=True):
        strategies.update({i: SybilIdentity(owner) for i in ids[1:]})
    return data, split


def claimed_counts(
    weights: str, population, participants: np.ndarray, n_k: np.ndarray
) -> np.ndarray | None:
    """Return the training sample counts the server is told, float (m,) in ``participants``' order
    (``n_k``: their true counts), or None when it reads none: ``weights`` (``agents.weights``)
    is not ``"claimed"``, or no participant of ``population`` has a ``claimed_samples``."""
    if weights != "claimed":
        return None
    claims = [
        (k, s)
        for k, s in population.assigned.items()
        if callable(getattr(s, "claimed_samples", None))
    ]
    if not claims:
        return None
    pos = np.searchsorted(participants, [k for k, _ in claims])
    out, told = n_k.astype(np.float64), False
    for i, (k, s) in zip(pos.tolist(), claims, strict=True):
        if i < participants.size and participants[i] == k:
            out[i], told = float(s.claimed_samples(float(n_k[i]))), True
    return out if told else None


def truthful_weight(sim, run, agent: int) -> float:
    """Return p_k, the weight ``agent`` has when every participant of ``run`` tells its true
    sample count with one identity (the owner's weight in the truthful run).

    ``sim``: an :class:`edgesim.simulate.Simulation` and ``run`` its MechanismRun
    (passed in: this layer does not import them). Equal weights: 1/K over the
    original participants; otherwise n_k / n on the data as built.
    """
    part = run.participants if sim.sybil is None else sim.sybil.original(run.participants)
    if sim.scenario.agents.weights == "equal":
        return 1.0 / part.size
    n = sim.original_data.n_k
    return float(n[agent] / n[part].sum())


def weights_all(sim, run) -> np.ndarray:
    """Return the server's weight p_i of every agent of ``run`` (K,), 0 outside the federation."""
    p = np.zeros(sim.data.K)
    p[run.participants] = run.p
    return p


def owner_objective(sim, run, agent: int, kind: str, W: np.ndarray) -> float | None:
    """Return ``agent``'s objective J when its identity or its weight is not what it holds, else
    None (the agent's own P_k and F_k score it: :meth:`Simulation.objective`).

    J = (sum_i p_i P_i) / p_k + F_k(w*) over the agent's identities i (a Sybil
    owner's m, or the agent alone when the server weighted claimed counts):
    the money it pays at the server's weights p_i, per unit of its truthful
    weight p_k (:func:`truthful_weight`), plus its loss on all of its true data
    (the identities' losses weighted by their sample counts). ``kind``:
    'overall' (train loss F_k), 'overall-test' (test loss E_k) or 'test' (E_k
    alone). In loss units; inf when the money or the loss is not finite.
    ``W``: each agent's model (K, n_params).
    """
    ids = sim.sybil.identities_of(agent) if sim.sybil is not None else None
    if ids is None and run.claimed is None:
        return None
    ids = np.asarray(ids or (agent,), dtype=np.int64)
    money = float(weights_all(sim, run)[ids] @ sim.payments_all(run)[ids])
    pay = money / truthful_weight(sim, run, agent)
    test = kind != "overall"
    losses = sim.model.agent_losses_each(W, sim.design, test=test)[ids]
    counts = (sim.design.n_k_test if test else sim.design.n_k)[ids]
    if ids.size == 1:
        loss = float(losses[0])
    else:  # each identity's mean loss, weighted by its samples: the mean over the owner's data
        loss = float(np.where(counts > 0, losses, 0.0) @ counts / counts.sum())
    value = loss if kind == "test" else pay + loss
    return value if math.isfinite(value) and math.isfinite(pay) else math.inf


def identity_report(sim, run) -> dict:
    """Return the run JSON's identity sections: ``sybil`` (one record per Sybil owner) and
    ``claims`` (the ``claim-size`` agents); empty when there is neither.

    A Sybil record: owner, identities (their indices, the owner's first), samples,
    weights p_i and payments P_i of each, money (sum p_i P_i), weight_truthful
    (p_k), J ('overall': money / p_k + F_k(w*)), and the run in which the owner is
    one truthful agent on the data as built (``truthful``: money, J; run once,
    cached as ``sim.counterpart``) with gain = J truthful - J. A claims record:
    weights (``agents.weights``), read (whether the server weighted the claims),
    and per claimant: agent, samples, claimed, weight (the server's p_k),
    weight_truthful, payment P_k, money (p_k P_k) and J.
    """
    out: dict = {}
    if sim.sybil is not None:
        out["sybil"] = [_sybil_record(sim, run, o) for o in sim.sybil.owners]
    claimants = {k: s for k, s in sim.population.assigned.items() if isinstance(s, ClaimSize)}
    if claimants:
        p, P, n = weights_all(sim, run), sim.payments_all(run), sim.data.n_k
        out["claims"] = {
            "weights": sim.scenario.agents.weights,
            "read": run.claimed is not None,
            "agents": [
                {
                    "agent": k,
                    "samples": int(n[k]),
                    "claimed": s.claimed_samples(float(n[k])),
                    "weight": float(p[k]),
                    "weight_truthful": truthful_weight(sim, run, k),
                    "payment": float(P[k]),
                    "money": float(p[k] * P[k]),
                    "J": sim.objective(run, k, "overall"),
                }
                for k, s in sorted(claimants.items())
            ],
        }
    return out


def _sybil_record(sim, run, owner: int) -> dict:
    ids = list(sim.sybil.identities_of(owner))
    p, P = weights_all(sim, run)[ids], sim.payments_all(run)[ids]
    J = sim.objective(run, owner, "overall")
    base = counterpart(sim)
    t_run = base.run_mechanism()
    t_money = float(weights_all(base, t_run)[owner] * base.payments_all(t_run)[owner])
    t_J = base.objective(t_run, owner, "overall")
    return {
        "owner": owner,
        "identities": ids,
        "samples": sim.data.n_k[ids].tolist(),
        "weights": p.tolist(),
        "payments": P.tolist(),
        "money": float(p @ P),
        "weight_truthful": truthful_weight(sim, run, owner),
        "J": J,
        "truthful": {"money": t_money, "J": t_J},
        "gain": t_J - J,
    }


def counterpart(sim):
    """Return ``sim``'s Simulation with every Sybil owner one truthful agent on the data as built
    (the other agents' strategies kept), built once and cached on ``sim``."""
    if sim.counterpart is None:
        sc = sim.scenario
        kept = [s for s in sc.agents.strategy if not isinstance(make_strategy(s), Sybil)]
        base = dataclasses.replace(sc, agents=dataclasses.replace(sc.agents, strategy=kept))
        sim.counterpart = type(sim)(base, data=sim.original_data)
    return sim.counterpart


def _claim_size(cfg) -> ClaimSize:
    return ClaimSize(resolved_options(cfg, "options").factor)


def _sybil(cfg) -> Sybil:
    return Sybil(int(resolved_options(cfg, "options").identities))


register_strategy("claim-size", _claim_size, options=ClaimSizeOptions)
register_strategy("sybil", _sybil, options=SybilOptions)

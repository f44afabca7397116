"""What every mechanism shares: its configuration, its context, its outcome, the registry."""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from edgesim.config import option, part_options
from edgesim.learning.models import Model
from edgesim.mechanisms.protocol import Gather, Replies
from edgesim.registry import register

ROUNDS = (int, str)

#: The mechanisms by name (see :func:`register_mechanism`); a mechanism may carry an ``options`` class.
MECHANISMS: dict[str, Mechanism] = {}


@dataclass(frozen=True)
class MechanismConfig:
    """The ``[mechanism]`` table."""

    kind: str = option("ffl", "mechanism: fedavg, ffl, dp-ffl, local or vcg (or a registered name)")
    phase1_rounds: int | str = option(
        200,
        "Phase I rounds T1, or 'theory' for Theorem 1's rule (Proposition 9 for dp-ffl)",
        kinds=ROUNDS,
        choices=("theory",),
        ge=0,
    )
    phase2_rounds: int | str = option(
        20,
        "Phase II rounds T2 per payment problem (minimum; see phase2_check), or 'theory'"
        " (Theorem 1 for ffl, Proposition 9 for dp-ffl)",
        kinds=ROUNDS,
        choices=("theory",),
        ge=0,
    )
    eta1: float | str = option(
        "theory",
        "Phase I step size, or 'theory' for 1/L_g (Lemma 1)",
        kinds=(float, int, str),
        choices=("theory",),
        gt=0,
    )
    eta2: float | str = option(
        "theory",
        "Phase II step size on the p-weighted objective, or 'theory' for 1/((1-p_k) L_g)"
        " (Theorem 1 with slip 3 in docs/paper.md)",
        kinds=(float, int, str),
        choices=("theory",),
        gt=0,
    )
    epsilon: float = option(
        1e-3,
        "Phase II stopping target (Alg. 1, line 10; see phase2_check): each problem iterates"
        " until the optimisation error of its payment, (Phi_k(w[t]) - min Phi_k) / p_k with"
        " Phi_k = sum_{j!=k} p_j F_j, is certified <= epsilon (payment units). It does not"
        " bound the payment rule's discretisation error"
        " (estimated in mechanism_info.payment_discretisation_error) nor Phase I's; Theorem 1's"
        " 'theory' rounds aim at |P_k - P_k^VCG| <= epsilon",
        gt=0,
    )
    theory_delta: float = option(
        1.0,
        "Theorem 1's distance tolerance Delta: T1 makes ||w* - w^o|| <= Delta/K",
        gt=0,
    )
    payment_rule: str = option(
        "trapezoid",
        "Phase II payment accumulation: 'paper' (left Riemann sum, eq. payment-2 with slip 1)"
        " or 'trapezoid' (slip 4, docs/paper.md)",
        choices=("paper", "trapezoid"),
    )
    phase2_check: bool = option(
        True,
        "after T2 rounds keep iterating until |sum_{j!=k} p_j grad F_j|^2/(2 mu') <= p_k epsilon"
        " (Alg. 1 line 10, slip 5)",
    )
    phase2_max_rounds: int = option(
        100000, "cap on Phase II rounds per problem (the JSON reports problems that hit it)", ge=1
    )
    clusters: int | str = option(
        "sqrt",
        "dp-ffl: number L of random balanced clusters (Definition 2): an integer,"
        " 'sqrt' (ceil(sqrt K)), 'theory' (Theorem 3) or 'all' (L = K); vcg: an integer"
        " below K computes scalable VCG, anything else exact VCG",
        kinds=ROUNDS,
        choices=("sqrt", "theory", "all"),
        ge=1,
    )
    alpha: float = option(0.1, "dp-ffl: differential privacy target alpha (epsilon)", gt=0)
    beta: float = option(0.01, "dp-ffl: differential privacy target beta (delta)", gt=0, lt=1)
    calibration: str = option(
        "paper",
        "dp-ffl noise: 'paper' (sigma^2, sigma_P^2 as written) or 'accountant' (tight, actual schedule)",
        choices=("paper", "accountant"),
    )
    gradient_bound: float = option(
        1.0,
        "dp-ffl: L_f, the per-sample gradient bound (Definition 4); alias of clip_norm, used"
        " as the clipping norm C when clip_norm = 'auto'",
        gt=0,
    )
    clip_norm: float | str = option(
        "auto",
        "clip every per-sample data gradient to this L2 norm C on the agent's side before it"
        " is averaged (as Opacus and TF Privacy do): a number, 'auto' (gradient_bound for"
        " dp-ffl, no clipping otherwise) or 'off' (no clipping: dp-ffl's privacy figures are"
        " then assumed, not enforced)",
        kinds=(float, int, str),
        choices=("auto", "off"),
        gt=0,
    )
    loss_bound: float | str = option(
        "auto",
        "clip every per-sample data loss to [0, B] in loss reports (dp-ffl's payments,"
        " vcg-federated): a number B, 'auto' (1 for dp-ffl, the paper's bound; no clipping"
        " otherwise) or 'off'",
        kinds=(float, int, str),
        choices=("auto", "off"),
        gt=0,
    )
    public_smoothness: float | str = option(
        "auto",
        "the smoothness constant L_g the server uses for its step sizes and for the 'theory'"
        " rules (Theorem 1, Theorem 3, Proposition 9): a number known in public (it must not be"
        " below the true L_g), 'auto' (dp-ffl: the public bound c (R^2 + 1) + l2 that the"
        " agents' feature clip R = feature_bound makes true, c = 1 ridge, 1/2 logistic, the 1"
        " for the intercept; other mechanisms: estimated from the data) or 'data' (estimated"
        " from the agents' data: dp-ffl then makes no privacy claim, docs/privacy.md)",
        kinds=(float, int, str),
        choices=("auto", "data"),
        gt=0,
    )
    feature_bound: float | str = option(
        "auto",
        "clip every sample's feature vector (the intercept excluded) to this L2 norm R on the"
        " agent's side before anything is computed from it: a number R, 'auto' (1 for dp-ffl"
        " with public_smoothness = 'auto', whose public L_g rests on it, as in Chaudhuri,"
        " Monteleoni and Sarwate's private ERM; no clipping otherwise) or 'off'",
        kinds=(float, int, str),
        choices=("auto", "off"),
        gt=0,
    )
    secure_aggregation: bool | str = option(
        "auto",
        "the server receives only sums of gradients (secure aggregation): true, false or"
        " 'auto' (on for dp-ffl, Alg. 2; off otherwise). fedavg and ffl aggregate Phase I"
        " only (FFL's payments need each agent's report)",
        kinds=(bool, str),
        choices=("auto",),
    )
    exact_vcg: str | bool = option(
        "auto",
        "also compute exact VCG payments centrally for reference (K + 1 solves): true, false"
        " (nor the optimum w^o) or 'auto': only for a mechanism with payments (not fedavg,"
        " local, or a registered one with has_payments = False) and only when its predicted"
        " cost is at most half of the run's or under 2 s (edgesim.reference); else w^o alone",
        kinds=(bool, str),
        choices=("auto",),
    )
    local_rounds: int = option(
        5000, "cap on gradient steps of each agent's local learning (accelerated GD)", ge=1
    )
    missing: str = option(
        "reweight",
        "what the server does about a round's missing replies: 'reweight' (rescale the"
        " replies that arrived), 'retry' (ask the missing agents again at the same model, up"
        " to retry_max times, then reweight) or 'stale' (use each missing agent's latest"
        " earlier report). Securely aggregated steps are always reweighted (a retry's sum over"
        " a few agents would reveal their reports)",
        choices=("reweight", "retry", "stale"),
    )
    phase2_schedule: str = option(
        "sequential",
        "how the Phase II problems (ffl: one per agent; dp-ffl: one per cluster;"
        " vcg-federated: one training per agent) share the network: 'sequential' (one after"
        " another: sum_k T2_k round trips) or 'parallel' (round t of every problem in one"
        " exchange, each agent receiving the iterates it is needed at: max_k T2_k round trips,"
        " the same bytes)",
        choices=("sequential", "parallel"),
    )
    retry_max: int = option(
        3, "missing = 'retry': the most retries of one round before it is reweighted", ge=0
    )
    options: Any = part_options(
        "kind",
        MECHANISMS,
        "the chosen mechanism's own options: the [mechanism.<kind>] sub-table (a mechanism"
        " reads them with edgesim.config.resolved_options(ctx.cfg, 'options'))",
    )


#: Mechanisms whose agents send gradient reports (clip_norm applies), and loss reports (loss_bound).
CLIPS_GRADIENTS = ("fedavg", "ffl", "dp-ffl", "vcg-federated")
CLIPS_LOSSES = ("dp-ffl", "vcg-federated")


def clip_norm(cfg: MechanismConfig) -> float | None:
    """Return the per-sample gradient clipping norm C the agents enforce, or None for none.

    ``'auto'`` is ``gradient_bound`` for dp-ffl (its sensitivity needs a bound that holds)
    and no clipping for every other mechanism; ``'off'`` never clips.
    """
    if cfg.clip_norm == "off":
        return None
    if cfg.clip_norm == "auto":
        return float(cfg.gradient_bound) if cfg.kind == "dp-ffl" else None
    return float(cfg.clip_norm)


def loss_bound(cfg: MechanismConfig) -> float | None:
    """Return B, the bound per-sample losses in loss reports are clipped to ([0, B]), or None.

    ``'auto'`` is 1 for dp-ffl (the paper's payment sensitivity 2 / n_(1) assumes losses in
    [0, 1]) and no clipping otherwise; ``'off'`` never clips.
    """
    if cfg.loss_bound == "off":
        return None
    if cfg.loss_bound == "auto":
        return 1.0 if cfg.kind == "dp-ffl" else None
    return float(cfg.loss_bound)


def feature_bound(cfg: MechanismConfig) -> float | None:
    """Return R, the L2 norm every sample's features are clipped to on the device, or None.

    ``'auto'`` is 1 for dp-ffl when its L_g is the public bound (``public_smoothness =
    'auto'``), the normalisation private ERM assumes (Chaudhuri, Monteleoni and Sarwate,
    JMLR 2011), and no clipping otherwise; ``'off'`` never clips.
    """
    if cfg.feature_bound == "off":
        return None
    if cfg.feature_bound == "auto":
        return 1.0 if cfg.kind == "dp-ffl" and cfg.public_smoothness == "auto" else None
    return float(cfg.feature_bound)


def smoothness_source(cfg: MechanismConfig) -> str:
    """Return where the server's L_g comes from: 'public' (a stated number), 'bound' (the
    feature clip's public bound) or 'data' (estimated from the agents' data)."""
    if cfg.public_smoothness == "data":
        return "data"
    if cfg.public_smoothness != "auto":
        return "public"
    return "bound" if cfg.kind == "dp-ffl" else "data"


def secure_aggregation(cfg: MechanismConfig) -> bool:
    """Return whether the mechanism's aggregates go through secure aggregation."""
    if cfg.secure_aggregation == "auto":
        return cfg.kind == "dp-ffl"
    return bool(cfg.secure_aggregation)


@dataclass(eq=False)
class ServerContext:
    """What the server knows when it runs a mechanism (never the agents' data).

    ``p``: the weights p_k (K,), summing to one; ``n_k``: sample counts
    (public, the paper's n_(1) uses them); ``mu``, ``L_g``: the constants of
    the model class; ``w0``: the initial model; ``rng``: the server's own
    random stream (noise, clusters).
    """

    model: Model
    cfg: MechanismConfig
    p: np.ndarray
    n_k: np.ndarray
    d: int
    mu: float
    L_g: float
    w0: np.ndarray
    rng: np.random.Generator

    @property
    def K(self) -> int:
        """Number of participating agents."""
        return int(self.p.size)


@dataclass(eq=False)
class Outcome:
    """A mechanism's result.

    ``model``: w* (n_params,). ``payments``: P_k per agent (K,) (zeros for
    mechanisms without payments). ``phase1_rounds``: T1 as run;
    ``phase2_rounds``: rounds of each Phase II problem (one per agent for
    ffl, one per cluster for dp-ffl). ``info``: mechanism-specific extras
    merged into the JSON (step sizes, noise, clusters, ...).
    """

    model: np.ndarray
    payments: np.ndarray
    phase1_rounds: int = 0
    phase2_rounds: list[int] = field(default_factory=list)
    phase2_per_agent: list[int] = field(default_factory=list)
    info: dict = field(default_factory=dict)
    local_models: np.ndarray | None = None


Mechanism = Callable[[ServerContext], Generator[Gather, Replies, Outcome]]


def register_mechanism(name: str, mechanism: Mechanism, *, replace: bool = False) -> None:
    """Register a mechanism generator function under ``name``; returns nothing.

    A name already taken raises ValueError unless ``replace`` is true
    (:func:`edgesim.check_mechanism` tests a new mechanism before you use it).
    """
    register(MECHANISMS, "mechanism", name, mechanism, replace)


def make_mechanism(name: str) -> Mechanism:
    """Return the mechanism registered under ``name`` (KeyError if unknown)."""
    return MECHANISMS[name]


def weighted_total(
    replies: Replies, weights: np.ndarray, target: float, noise: Callable | None = None
) -> np.ndarray:
    """Return sum_i w_i r_i over the repliers, rescaled to total weight ``target``.

    ``weights`` are the weights of the repliers (aligned with ``replies.agents``);
    when some agents did not reply, the sum is renormalised so it still
    estimates the same objective (documented round policy). ``noise``, when
    given, maps the sum as aggregated to its noisy release *before* that
    rescaling (DP-FFL's Gaussian mechanism: the rescaling is then
    post-processing and the sensitivity stays the enforced one). A driver's
    ``replies.sum_of`` (a step with ``sum_weights``, whose entries at the
    repliers are ``weights``) gives the sum without the per-agent reports.
    """
    got = np.add.reduce(weights).item()  # float(weights.sum()), without its Python wrappers
    if replies.total is not None:
        total = replies.total
    elif replies.sum_of is not None:  # the step's sum_weights are the repliers' ``weights``
        total = replies.sum_of(replies.agents)
    else:
        total = weights @ replies.values
    if noise is not None:
        total = noise(total)
    if got == 0:
        return np.zeros_like(total)
    if got != target:
        total = total * (target / got)
    return total

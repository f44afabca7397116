"""The paper's bounds and parameter rules, as pure functions.

Every function here evaluates one formula of Zhang, Wei and Berry, "Faithful
Edge Federated Learning: Scalability and Privacy": floats in, floats (or ints)
out, no randomness, no state, one module per part of the paper:
:mod:`~edgesim.theory.risk` (Sec. III, the risk bounds),
:mod:`~edgesim.theory.ffl` (Sec. IV, FFL's bounds),
:mod:`~edgesim.theory.theorem1` (Theorem 1's rounds and step sizes) and
:mod:`~edgesim.theory.scalable` (Sec. V, scalable VCG and DP-FFL); what they
share is :mod:`~edgesim.theory.common`. Every public name is importable from
``edgesim.theory``. Each docstring names the result it implements, says what
the number means and in which units, and records where the printed statement
and its proof disagree (see also docs/paper.md, "known slips").

Units. Losses (F, E, payments P, the tolerance ``epsilon``) are in the units of
the per-sample loss l; model distances (``G``, ``delta_tol``) in the units of w;
``mu`` and ``L_g`` are curvatures (loss / w^2), ``L_f`` and ``L_ell`` gradient
norms (loss / w). Iteration counts are plain integers; step sizes have units
w^2 / loss (1 / curvature).

Notation: K agents with weights p_k (sum 1; the paper's Sec. IV-VI use
p_k = 1/K), n_k samples, d the model dimension, mu the strong convexity and
L_g the smoothness of the per-sample loss, L_ell the largest per-sample
gradient norm at w^o, L_f the gradient bound of Definition 2 (Def. "Gradient
Bound"), delta in (0, 1) a failure probability. Agents are numbered from 0.

Two different deltas appear in the paper and are kept apart here: ``delta``
is the failure probability of the risk bounds (Props. 1-3, 3.5, 5);
``delta_tol`` is the distance tolerance Delta of Theorem 1 and its proof
(App. "Proof of Theorem 1": T1 makes ||w* - w^o|| <= Delta / K). Neither is
the non-i.i.d. parameter Delta of Sec. VII.
"""

from __future__ import annotations

from edgesim.theory.ffl import (
    lemma1_gap,
    lemma2_distance,
    phi_bound,
    prop4_bound,
    prop5_epsilon_tilde,
)
from edgesim.theory.risk import (
    amplified_weights,
    corollary1_bound,
    prop1_bound,
    prop2_bound,
    prop3_bound,
)
from edgesim.theory.scalable import (
    prop9_A_rederived,
    prop9_bound,
    prop9_bound_closed_form,
    prop9_constants,
    prop9_objective,
    prop9_rounds,
    theorem3_clusters,
)
from edgesim.theory.theorem1 import (
    StepSizes,
    phase1_rounds,
    phase2_rounds,
    phase2_rounds_upper,
    theorem1_feasible,
    theorem1_K_T2_bound,
    theorem1_K_T2_bound_corrected,
    theorem1_step_sizes,
)

__all__ = [
    "StepSizes",
    "amplified_weights",
    "corollary1_bound",
    "lemma1_gap",
    "lemma2_distance",
    "phase1_rounds",
    "phase2_rounds",
    "phase2_rounds_upper",
    "phi_bound",
    "prop1_bound",
    "prop2_bound",
    "prop3_bound",
    "prop4_bound",
    "prop5_epsilon_tilde",
    "prop9_A_rederived",
    "prop9_bound",
    "prop9_bound_closed_form",
    "prop9_constants",
    "prop9_objective",
    "prop9_rounds",
    "theorem1_K_T2_bound",
    "theorem1_K_T2_bound_corrected",
    "theorem1_feasible",
    "theorem1_step_sizes",
    "theorem3_clusters",
]

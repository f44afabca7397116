"""Local learning: no federation; each agent keeps the model it trains on its own data."""

from __future__ import annotations

import numpy as np

from edgesim.mechanisms.base import Outcome, ServerContext, register_mechanism
from edgesim.mechanisms.protocol import Gather, LocalModelAsk


def local(ctx: ServerContext):
    """Agents learn alone (eq. Eq-P1). Nothing is sent; the driver reads the local models.

    Returns an :class:`Outcome` whose ``local_models`` holds w_k^L (K, n_params)
    and whose ``model`` is their p-weighted average (reported, never used).
    """
    r = yield Gather(None, ask=LocalModelAsk, phase="phase1")
    W = r.values
    return Outcome(ctx.p @ W, np.zeros(ctx.K), local_models=W, info={"local_rounds": r.rounds})


register_mechanism("local", local)

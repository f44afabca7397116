"""The sums of a step answered truthfully but for a few deviators (the driver's
:class:`MostlyTrueSums`): the data's moments give the truthful sum, each deviator's report
as sent replaces its true gradient."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from edgesim.learning.models import Design, Model
from edgesim.mechanisms.protocol import Gather


@dataclass(eq=False)
class MostlyTrueSums:
    """The reports of one step answered truthfully but for a few deviators, without the (m, p)
    array: the data's moments give the truthful sum, and each deviator's report as sent
    replaces its true gradient.

    ``dev``: the deviators that replied (sorted); ``true`` and ``sent``: their true gradients
    and their reports as sent, rows aligned with ``dev``. :meth:`merged` joins the sums of
    a retry of the same step, so that a deviator whose reply a retry recovered counts with
    its report as sent.
    """

    model: Model
    design: Design
    step: Gather
    moments: object  # the model's gradient moments for step.sum_weights
    dev: np.ndarray
    true: np.ndarray
    sent: np.ndarray

    def sum_of(self, a: np.ndarray) -> np.ndarray:
        """Return sum_i c_{a_i} report_i over the agents ``a`` (c = ``step.sum_weights``), (p,)."""
        c = self.step.sum_weights
        total = self.model.weighted_gradient_sum(self.step.model, self.design, self.moments, a)
        rows = np.searchsorted(self.dev, a[np.isin(a, self.dev)])
        return total + c[self.dev[rows]] @ (self.sent[rows] - self.true[rows])

    def values_of(self, a: np.ndarray) -> np.ndarray:
        """Return the reports of the agents ``a`` as sent, (len(a), p)."""
        ids = np.sort(a)
        out = self.model.agent_grads(self.step.model, self.design, agents=ids)
        out = out[np.searchsorted(ids, a)]
        is_dev = np.isin(a, self.dev)
        out[is_dev] = self.sent[np.searchsorted(self.dev, a[is_dev])]
        return out

    def merged(self, other: MostlyTrueSums) -> MostlyTrueSums:
        """Return the sums of this step's replies and ``other``'s (a retry's): both sets of
        deviators, sorted, so a sum over every replier adds the deviations in the order a
        lossless round does (the same bits)."""
        dev = np.concatenate([self.dev, other.dev])
        order = np.argsort(dev, kind="stable")
        return dataclasses.replace(
            self,
            dev=dev[order],
            true=np.concatenate([self.true, other.true])[order],
            sent=np.concatenate([self.sent, other.sent])[order],
        )

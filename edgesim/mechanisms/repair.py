"""What the server does about a round's missing replies (``mechanism.missing``).

The paper assumes every reply arrives; a wireless edge never promises it. A
repair policy wraps any mechanism generator (:func:`with_repair`), so every
mechanism, built in or registered, and both drivers get it. It knows no time:
it only yields more :class:`~edgesim.mechanisms.protocol.Gather` steps, which the
driver answers (and counts: messages, bytes and simulated seconds) like any other.

- ``reweight`` (default): pass the replies that arrived; the mechanism
  rescales their weighted sum to the objective's weight
  (:func:`~edgesim.mechanisms.base.weighted_total`). The default is today's
  behaviour: it costs nothing, and the lossy-faithfulness study measures what it loses.
- ``retry``: ask again only the agents whose replies are missing, at the same
  model, up to ``mechanism.retry_max`` times; then fall back to reweight over
  what arrived. An agent whose device never comes back is given up on after
  ``retry_max`` retries, so a permanently offline device cannot hang a run.
  When every reply eventually arrives, the mechanism sees exactly the replies
  of a lossless round (same agents, same order, same values): the model and
  payments are the lossless run's, bit for bit; only time and messages grow.
- ``stale``: fill each missing reply with that agent's most recent report of
  the same kind (SAG-style, Schmidt, Le Roux and Bach, 2017), taken at an
  earlier model: its report to the same Phase II problem (the nearest earlier
  point, the problem's previous iterate) when it has one, else its latest
  report of that kind anywhere. An agent that never replied stays missing
  (reweighted). Only the problems of the current exchange keep their own
  reports (one problem sequentially; every active one in parallel). In FFL's Phase II a stale gradient g_j(w[t'])
  with t' < t enters sum_{j != k} p_j grad F_j, so the trapezoid rule
  integrates a gradient field lagging by t - t' steps: the error of P_k grows
  with eta2 L_g (t - t') p_j |g| per stale term (measured in the study).

A policy never changes a round in which every reply arrived. Steps asking for
data or local models (evaluation only) are passed through, and so are
securely aggregated steps: a retry's sum over the few missing agents would
reveal their reports to the server (one agent's sum is its report), and the
server never sees individual reports to keep stale ones. Those steps are
reweighted under every policy (DP-FFL's noise is added before the rescaling).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from edgesim.mechanisms.protocol import Ask, Gather, GatherMany, Replies

POLICIES = ("reweight", "retry", "stale")


class Repair:
    """One run's repair policy and its state: counts, and the latest report per agent (stale)."""

    def __init__(self, policy: str, retry_max: int, K: int):
        if policy not in POLICIES:
            raise ValueError(f"unknown missing-reply policy {policy!r}; allowed: {POLICIES}")
        self.policy, self.retry_max, self.K = policy, int(retry_max), int(K)
        self.retries = 0  # extra exchanges
        self.recovered = 0  # replies that arrived on a retry
        self.stale = 0  # replies filled from an earlier report
        self.given_up = 0  # replies still missing after the policy
        # (ask, problem or None) -> (each agent's latest report, whether it has one)
        self._latest: dict[tuple[Ask, int | None], tuple[np.ndarray, np.ndarray]] = {}

    def gather(self, step: Gather | GatherMany):
        """Yield ``step`` (and its retries); return the :class:`Replies` the policy makes of them.

        For a :class:`GatherMany`, a list of Replies (one per part); a retry is then
        one exchange re-asking each part's missing agents.
        """
        got = yield step
        if type(got) is Replies and not got.missing.size and self.policy != "stale":
            return got  # (the common case, on its own: nothing to repair or remember)
        return (yield from self._repaired(step, got))

    def _repaired(self, step: Gather | GatherMany, got):
        """:meth:`gather` after the first exchange (``got``: its replies)."""
        many = isinstance(step, GatherMany)
        parts = list(step.parts) if many else [step]
        rs = list(got) if many else [got]
        lacking = [i for i, r in enumerate(rs) if r.missing.size and _repairable(parts[i])]
        if lacking and self.policy == "retry":
            for _ in range(self.retry_max):
                retry = [_retry_step(parts[i], rs[i].missing) for i in lacking]
                again = yield (
                    GatherMany(tuple(retry), step.phase, step.problem) if many else retry[0]
                )
                again = list(again) if many else [again]
                self.retries += 1
                for i, a in zip(lacking, again, strict=True):
                    self.recovered += int(a.agents.size)
                    rs[i] = _merge(parts[i], rs[i], a, self.K)
                lacking = [i for i in lacking if rs[i].missing.size]
                if not lacking:
                    break
        elif lacking and self.policy == "stale":
            for i in lacking:
                rs[i] = self._fill(parts[i], rs[i])
        for part, r in zip(parts, rs, strict=True):
            self.given_up += int(r.missing.size)
            self.remember(part, r)
        if self.policy == "stale":  # keep the current exchange's problems only (and every kind's)
            live = {(g.ask, g.problem) for g in parts}
            self._latest = {
                key: v for key, v in self._latest.items() if key[1] is None or key in live
            }
        return rs if many else rs[0]

    def remember(self, step: Gather, r: Replies) -> None:
        """Keep each replier's report as its latest of this kind, and of this problem (``stale``)."""
        if self.policy != "stale" or not _repairable(step) or r.reports() is None:
            return
        keys = [(step.ask, None)] + ([(step.ask, step.problem)] if step.problem >= 0 else [])
        for key in keys:
            if key not in self._latest:
                shape = (self.K, *r.values.shape[1:])
                self._latest[key] = (np.zeros(shape), np.zeros(self.K, dtype=bool))
            values, known = self._latest[key]
            values[r.agents] = r.values
            known[r.agents] = True

    def _fill(self, step: Gather, r: Replies) -> Replies:
        """Return ``r`` with each missing agent's latest report added, in the order asked.

        The agent's report to the same problem first, else its latest of that kind.
        """
        for key in ((step.ask, step.problem), (step.ask, None)):
            if key not in self._latest or r.missing.size == 0 or r.reports() is None:
                continue
            values, known = self._latest[key]
            filled = r.missing[known[r.missing]]
            if filled.size:
                self.stale += int(filled.size)
                stale = Replies(filled, values=values[filled])
                r = _merge(step, r, stale, self.K, missing=r.missing[~known[r.missing]])
        return r

    def info(self) -> dict:
        """Return what the policy did, for ``mechanism_info.repair``."""
        return {
            "policy": self.policy,
            "retry_max": self.retry_max,
            "retries": self.retries,
            "recovered_replies": self.recovered,
            "stale_replies": self.stale,
            "given_up_replies": self.given_up,
        }


def _repairable(step: Gather) -> bool:
    """Whether a policy may repair ``step``: an open report (not data, a local model, or a sum)."""
    return step.ask.repairable and step.aggregate is None


def _retry_step(step: Gather, missing: np.ndarray) -> Gather:
    """Return ``step`` addressed to ``missing`` only (same model)."""
    return dataclasses.replace(step, agents=missing)


def _positions(step: Gather, agents: np.ndarray, K: int) -> np.ndarray:
    """Return where ``agents`` stand in the step's list of recipients."""
    if step.agents is None:
        return np.asarray(agents)
    lookup = np.full(K, -1, dtype=np.int64)
    lookup[np.asarray(step.agents)] = np.arange(len(step.agents))
    return lookup[agents]


def _merge(step: Gather, first: Replies, extra: Replies, K: int, missing=None) -> Replies:
    """Return the replies of ``first`` and ``extra`` together, in the order the step asked.

    The order matters: the mechanism's weighted sum then adds the reports in
    the same order as a lossless round, so a fully recovered round is bit for
    bit a lossless one. Replies that only know their weighted sum
    (:attr:`Replies.sum_of`) merge into one that sums over the merged agents:
    bit for bit the lossless round's sum too.
    """
    agents = np.concatenate([first.agents, extra.agents])
    order = np.argsort(_positions(step, agents, K), kind="stable")
    missing = extra.missing if missing is None else missing
    if first.values is None and first.sum_of is not None and extra.sum_of is not None:
        # Both sums of the same step (a retry): the merged sum, still without the reports.
        # Sums that carry deviations (a bound method of an object with ``merged``: the
        # driver's MostlyTrueSums) join them, so a recovered deviator counts as it sent.
        owner = getattr(first.sum_of, "__self__", None)
        if hasattr(owner, "merged"):
            sums = owner.merged(extra.sum_of.__self__)
            return Replies(
                agents[order], missing=missing, sum_of=sums.sum_of, values_of=sums.values_of
            )
        return Replies(
            agents[order], missing=missing, sum_of=first.sum_of, values_of=first.values_of
        )
    values = np.concatenate([first.reports(), extra.reports()])[order]
    return Replies(agents[order], values=values, missing=missing)


def with_repair(mechanism_gen, policy: Repair):
    """Run ``mechanism_gen`` with ``policy`` between it and the driver; returns its Outcome.

    A generator like any mechanism: it yields the mechanism's steps (and the
    policy's retries) and sends the repaired replies back. When the policy did
    anything (``retry`` or ``stale`` with a missing reply), the Outcome's
    ``info`` gains ``repair`` (:meth:`Repair.info`); otherwise it is untouched.
    """
    try:
        step = next(mechanism_gen)
        while True:
            replies = yield from policy.gather(step)
            step = mechanism_gen.send(replies)
            replies = None  # not held while the next step is answered (they can be K x p)
    except StopIteration as stop:
        outcome = stop.value
    acted = policy.policy != "reweight" and (policy.retries or policy.stale or policy.given_up)
    if acted and isinstance(getattr(outcome, "info", None), dict):
        outcome.info["repair"] = policy.info()
    return outcome

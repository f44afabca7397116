"""A securely-aggregated mechanism round over the network: the protocol's stages as exchanges.

A :class:`~edgesim.mechanisms.protocol.Gather` with ``aggregate`` weights
runs the secure aggregation of :mod:`edgesim.network.secagg` among its
recipients (session client i = the step's i-th recipient). Each stage is one
down/up exchange through the server, timed and counted like any round:

=========  ============================================  =========================================
exchange   down (server -> each client)                  up (each client -> server)
=========  ============================================  =========================================
keys       the model (with the request)                  AdvertiseKeys: two public keys
shares     AdvertiseKeys: its neighbours' public keys    ShareKeys: encrypted shares
input      ShareKeys: the shares addressed to it         MaskedInput (after computing)
unmask     the survivors among its neighbours            Unmasking: shares for survivors/dropouts
=========  ============================================  =========================================

With ``rekey = "session"`` the first two exchanges run once per recipient
set; later rounds send the model in the ``input`` exchange. Overhead (the
trace's ``secagg_*`` columns) is every message except the model download
and the masked input, which stand for the plain round's messages.

A client lost during the key stages (lost message, offline, cut) takes no
further part and counts as a dropout at the masked input (the session's
shares let the server remove its masks). If the unmasking gets fewer than t
shares of a needed secret (:class:`~edgesim.network.secagg.SecAggAborted`),
the round's aggregate is lost: the mechanism receives no replies.
"""

from __future__ import annotations

import numpy as np

from edgesim.mechanisms.protocol import Gather, Replies
from edgesim.network.secagg import SecAggAborted, SecAggConfig, SecureAggregation


def _per_client(messages, n: int, key: str) -> np.ndarray:
    """Return the bytes each session client sends/receives in one StageMessages, (n,) int64."""
    out = np.zeros(n, dtype=np.int64)
    np.add.at(out, getattr(messages, key), messages.nbytes)
    return out


class SecureRounds:
    """Runs secure-aggregation rounds for one network run; counts aborted rounds.

    ``rng``: the network's ``secagg`` stream (graph permutations, session seeds).
    """

    def __init__(self, cfg: SecAggConfig, rng: np.random.Generator):
        self.cfg = cfg
        self.rng = rng
        self.sessions: dict[bytes, SecureAggregation] = {}
        self.round = 0
        self.aborted = 0

    def _session(self, agents: np.ndarray, dim: int) -> SecureAggregation:
        if self.cfg.rekey == "round":
            return SecureAggregation(agents.size, dim, self.cfg, self.rng)
        key = agents.tobytes()
        if key not in self.sessions:
            self.sessions[key] = SecureAggregation(agents.size, dim, self.cfg, self.rng)
        return self.sessions[key]

    def gather(self, server, step: Gather, agents: np.ndarray, silent=None, delay_ns=None):
        """Run ``step`` securely over ``server``'s network (SimPy generator returning Replies).

        ``silent`` (bool, (n,)): clients whose strategy withholds their reply: they take
        part in the key stages but send no masked input, so the session treats them as
        dropouts (their masks are recovered from the others' shares), exactly as a lost
        masked input; ``delay_ns`` (int64, (n,)): how long each holds its masked input back.
        """
        side = server.side
        n = agents.size
        dim = side.model.n_params(side.design.data.d)
        session = self._session(agents, dim)
        alive = np.ones(n, dtype=bool)  # session clients still taking part
        model_bytes = side.download_bytes(step)
        phase, problem = step.phase, step.problem

        def run(stage, down, up, compute=False, overhead=(True, True), deviating=(None, None)):
            ids = np.flatnonzero(alive)
            quiet, late = (None if a is None else a[ids] for a in deviating)
            got = yield from server.exchange(
                agents[ids],
                np.asarray(down)[ids],
                np.asarray(up)[ids],
                phase,
                problem,
                stage,
                compute,
                overhead,
                silent=quiet,
                delay_ns=late,
            )
            alive[:] = False
            alive[np.searchsorted(agents, got)] = True

        if session.setup_due:
            adv_up, adv_down = session.advertise_keys()
            share_up, share_down = session.share_keys()
            full = np.full(n, model_bytes, dtype=np.int64)
            yield from run("keys", full, _per_client(adv_up, n, "sender"), overhead=(False, True))
            yield from run(
                "shares", _per_client(adv_down, n, "receiver"), _per_client(share_up, n, "sender")
            )
            input_down, input_over = _per_client(share_down, n, "receiver"), True
        else:
            input_down, input_over = np.full(n, model_bytes, dtype=np.int64), False
        upload = side.upload_bytes(step, agents)
        yield from run(
            "masked_input", input_down, upload, True, (input_over, False), (silent, delay_ns)
        )
        survivors = np.flatnonzero(alive)
        self.round += 1
        values = side.reports(step, agents[survivors])
        weights = side.aggregate_weights(step, agents[survivors])
        masked = session.masked_inputs(survivors, values, weights, self.round)
        notice, unmasking = session.unmask_messages(survivors)
        yield from run(
            "unmask", _per_client(notice, n, "receiver"), _per_client(unmasking, n, "sender")
        )
        responders = np.flatnonzero(alive)
        try:
            total = session.unmask(survivors, masked.vectors, self.round, responders)
        except SecAggAborted:
            self.aborted += 1
            empty = np.zeros(0, dtype=np.int64)
            return Replies(empty, total=np.zeros(dim), missing=agents)
        return Replies(agents[survivors], total=total, missing=np.delete(agents, survivors))

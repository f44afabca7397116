"""Proportional fair scheduling of a cell's resource blocks, slot by slot, under Rayleigh fading.

Pure numpy (no SimPy); the ``proportional-fair`` access scheme
(:mod:`edgesim.network.access.proportional_fair`) calls it while the server
plans an exchange, as the other schemes call :func:`edgesim.network.medium.finish_ns`.

Each slot (``slot_s``, 1 ms by default: an LTE subframe), every device with
data draws an independent Rayleigh power gain h ~ Exp(1) on every resource
block, so its rate on block b is r = B log2(1 + SNR h) with SNR its mean SNR
per block. Each block goes to the device with the largest r / T, T being its
average throughput, an exponential moving average with time constant t_c
slots (``window_slots``): T <- (1 - 1/t_c) T + (1/t_c) (bits this slot /
slot length), updated for the devices with data (Jalali, Padovani and
Pankaj, VTC 2000; the LTE form of Capozzi et al., IEEE Commun. Surveys
2013). T starts at the device's mean rate on one block. A device's message
is through when the bits it was served reach its size; it finishes within
its last slot, in proportion to the bits it still needed. Blocks it does
not need in its last slot stay unused (they are not handed on).

With independent fading, proportional fair gives every backlogged device
about the same share of the block-slots whatever its mean SNR, and each of
them the rate of its own good moments: the multi-user diversity gain that
round robin lacks.
"""

from __future__ import annotations

import numpy as np


def proportional_fair_ns(
    arrive_ns: np.ndarray,
    bits: np.ndarray,
    mean_snr: np.ndarray,
    group: np.ndarray,
    *,
    blocks: int,
    block_hz: float,
    slot_ns: int,
    window_slots: float,
    rng: np.random.Generator,
    horizon_ns: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Schedule the messages of each group (cell) slot by slot; returns (finish_ns, block_slots).

    ``arrive_ns`` (m,): when each message reaches the cell's scheduler;
    ``bits`` (m,): what it must deliver; ``mean_snr`` (m,): its sender's mean
    SNR per block (linear); ``group`` (m,): its cell. Returns the instant each
    is through (int64 ns) and how many block-slots it was given (int64).
    With ``horizon_ns`` (a round's deadline) scheduling stops at that instant:
    a message not through by then gets finish -1.
    Draw order: groups in increasing order, then per slot one (n, ``blocks``)
    array of standard exponentials for the n messages in service, in message
    order.
    """
    arrive = np.asarray(arrive_ns, dtype=np.int64).reshape(-1)
    need = np.asarray(bits, dtype=np.float64).reshape(-1)
    snr = np.asarray(mean_snr, dtype=np.float64).reshape(-1)
    g = np.asarray(group).reshape(-1)
    finish = np.empty(arrive.size, dtype=np.int64)
    won = np.zeros(arrive.size, dtype=np.int64)
    for cell in np.unique(g).tolist():
        idx = np.flatnonzero(g == cell)
        finish[idx], won[idx] = _one_cell(
            arrive[idx],
            need[idx],
            snr[idx],
            blocks,
            block_hz,
            slot_ns,
            window_slots,
            rng,
            horizon_ns,
        )
    return finish, won


def _one_cell(arrive, need, snr, blocks, block_hz, slot_ns, window, rng, horizon):
    """Proportional fair in one cell (see :func:`proportional_fair_ns`)."""
    m = arrive.size
    left = need.copy()
    finish = np.zeros(m, dtype=np.int64)
    won = np.zeros(m, dtype=np.int64)
    average = block_hz * np.log2(1.0 + snr)  # bit/s: the mean rate on one block
    slot_s = slot_ns / 1e9
    pending = left > 0
    finish[~pending] = arrive[~pending]
    t = int(arrive.min()) if m else 0
    while pending.any():
        if horizon is not None and t >= horizon:
            finish[pending] = -1
            break
        active = np.flatnonzero(pending & (arrive <= t))
        if active.size == 0:  # nobody has data: skip to the next arrival
            t = max(t, int(arrive[pending].min()))
            continue
        h = rng.standard_exponential((active.size, blocks))
        rate = block_hz * np.log2(1.0 + snr[active, None] * h)
        best = np.argmax(rate / average[active, None], axis=0)
        got = np.zeros(active.size)
        np.add.at(got, best, rate[best, np.arange(blocks)] * slot_s)
        np.add.at(won, active[best], 1)
        done = got >= left[active]
        share = np.where(done, left[active] / np.where(got > 0, got, 1.0), 1.0)
        finish[active[done]] = t + np.rint(share[done] * slot_ns).astype(np.int64)
        left[active] -= got
        pending[active[done]] = False
        average[active] += (got / slot_s - average[active]) / window
        t += slot_ns
    return finish, won

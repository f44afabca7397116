"""The datasets this process has built, kept for the next run that asks for the same data.

A sweep's runs in one worker process, repeated ``edgesim.run`` calls and an audit's
trials often share their ``[data]`` table, agent count and seed: each then builds the
same dataset (the same draws from the same seed) and computes the same constants from
it. :func:`dataset` builds it once per process; :func:`derived` keeps what is computed
from the dataset alone (L_g, the agents' local models) beside it, for the runs whose
data is that very dataset (not clipped, split or changed after it was built).

Bounded: at most :data:`MAX_ENTRIES` datasets and ``EDGESIM_DATA_CACHE_MB`` MiB of
arrays (default :data:`DEFAULT_BUDGET_MB`, or a sixteenth of the machine's memory if
less; 0 turns the cache off), the least recently used evicted first; a dataset larger
than the whole budget is not kept (so a large run holds nothing back), and a worker of a
sweep holds at most the budget beyond its run's own memory. A kept
dataset's arrays are read-only: a run that wrote into them would change the next
run's data, so it fails loudly instead (a run clips a copy: ``Simulation``). The key
is the ``[data]`` table as plain data, K, the task and the seed, and for a file source
(``npz``) the file's size and modification time, so an edited file is read again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from edgesim.learning.data.dataset import FederatedDataset

#: Datasets kept at most (each with its derived values).
MAX_ENTRIES = 8
#: The cache's default size in MiB (``EDGESIM_DATA_CACHE_MB`` overrides; 0: no cache).
DEFAULT_BUDGET_MB = 256


@dataclasses.dataclass
class Entry:
    """One kept dataset, its size in bytes and the values derived from it (name -> value)."""

    data: FederatedDataset
    nbytes: int
    derived: dict = dataclasses.field(default_factory=dict)


_ENTRIES: OrderedDict[str, Entry] = OrderedDict()


def budget_bytes() -> int:
    """Return the cache's budget in bytes: ``EDGESIM_DATA_CACHE_MB`` MiB, else the default,
    :data:`DEFAULT_BUDGET_MB` or a sixteenth of the machine's memory if less (an unreadable
    value counts as the default)."""
    text = os.environ.get("EDGESIM_DATA_CACHE_MB", "").strip()
    try:
        return max(0, int(float(text) * 2**20))
    except ValueError:
        pass
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        memory = 2**40
    return min(DEFAULT_BUDGET_MB * 2**20, memory // 16)


def data_key(cfg, K: int, task: str, seed: int) -> str:
    """Return the cache key of the dataset ``build_dataset(cfg, K, task, streams(seed)["data"])``
    builds: the ``[data]`` table ``cfg`` as plain data, K, the task and the seed (and an npz
    file's size and modification time)."""
    from edgesim.config import as_data

    stamp = None
    if cfg.source == "npz" and cfg.path:
        try:
            st = Path(cfg.path).expanduser().stat()
            stamp = [st.st_size, st.st_mtime_ns]
        except OSError:
            stamp = "missing"
    parts = [as_data(cfg), int(K), task, int(seed), stamp]
    return json.dumps(parts, sort_keys=True, default=str)


def digest(values: np.ndarray) -> str:
    """Return the SHA-256 of an array's bytes, as hex: a key of what a value derived from the
    data also depends on (the agents federated, their weights)."""
    return hashlib.sha256(np.ascontiguousarray(values)).hexdigest()


def _arrays(data: FederatedDataset) -> list[np.ndarray]:
    """Return the dataset's arrays."""
    return [data.X, data.y, data.agent, data.X_test, data.y_test, data.agent_test]


def _nbytes(value: Any) -> int:
    """Return the bytes of the arrays in ``value`` (an array, a tuple of them, or other: 0)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, tuple | list):
        return sum(_nbytes(v) for v in value)
    return 0


def dataset(
    cfg, K: int, task: str, seed: int, build: Callable[[], FederatedDataset]
) -> tuple[FederatedDataset, Entry | None]:
    """Return (the dataset ``build()`` makes of the ``[data]`` table ``cfg`` for K agents, the
    task and the seed; its cache entry): the kept one when this process built it before,
    else ``build()``'s, kept when it fits the budget (its arrays then made read-only). The
    entry is None when the dataset is not kept (no cache, or larger than the budget)."""
    key = data_key(cfg, K, task, seed)
    entry = _ENTRIES.get(key)
    if entry is not None:
        _ENTRIES.move_to_end(key)
        return entry.data, entry
    data = build()
    budget = budget_bytes()
    size = sum(a.nbytes for a in _arrays(data))
    if budget == 0 or size > budget:
        return data, None
    for array in _arrays(data):
        array.flags.writeable = False
    entry = _ENTRIES[key] = Entry(data, size)
    _evict(budget)
    return data, entry if key in _ENTRIES else None


def derived(entry: Entry | None, name: tuple, compute: Callable[[], Any]) -> Any:
    """Return the value ``compute()`` derives from ``entry``'s dataset alone, computed once while
    the entry is kept (``name``: what it is and what else it depends on, e.g. the model's
    table); without an entry, ``compute()`` each time. Arrays in it count against the budget
    and are made read-only."""
    if entry is None:
        return compute()
    if name not in entry.derived:
        value = compute()
        for array in value if isinstance(value, tuple | list) else (value,):
            if isinstance(array, np.ndarray):
                array.flags.writeable = False
        entry.derived[name] = value
        entry.nbytes += _nbytes(value)
        _evict(budget_bytes())
    return entry.derived[name]


def _evict(budget: int) -> None:
    """Drop the least recently used entries until at most :data:`MAX_ENTRIES` remain within
    ``budget`` bytes."""
    while _ENTRIES and (
        len(_ENTRIES) > MAX_ENTRIES or sum(e.nbytes for e in _ENTRIES.values()) > budget
    ):
        _ENTRIES.popitem(last=False)


def clear() -> None:
    """Forget every kept dataset; returns None."""
    _ENTRIES.clear()


def kept() -> tuple[int, int]:
    """Return (the datasets kept, their bytes with their derived values)."""
    return len(_ENTRIES), sum(e.nbytes for e in _ENTRIES.values())

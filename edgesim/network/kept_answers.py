"""Answers kept from exchange to exchange, within a budget (no SimPy, no numpy)."""

from __future__ import annotations


class KeptAnswers:
    """Computed answers kept by key, at most ``budget`` units in all (the caller says what a
    unit is: an answer, or an int64 number of its key and value). Keeping one that would pass
    the budget first drops every other: what is kept is what repeats from one exchange to the
    next, so nothing finer is needed. An answer larger than the budget is kept alone."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._answers: dict = {}
        self._used = 0

    def get(self, key):
        """Return the answer kept under ``key``, or None."""
        return self._answers.get(key)

    def keep(self, key, value, size: int = 1) -> None:
        """Keep ``value`` under ``key``, ``size`` units of the budget."""
        if self._used + size > self.budget:
            self._answers.clear()
            self._used = 0
        self._answers[key] = value
        self._used += size

    def __len__(self) -> int:
        return len(self._answers)

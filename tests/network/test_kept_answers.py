"""KeptAnswers: answers kept within a budget, all dropped when the next would pass it."""

from __future__ import annotations

from edgesim.network.kept_answers import KeptAnswers


def test_answers_are_kept_until_the_budget_is_full_then_all_dropped():
    kept = KeptAnswers(10)
    kept.keep("a", 1, size=4)
    kept.keep("b", 2, size=6)
    assert (kept.get("a"), kept.get("b"), len(kept)) == (1, 2, 2)  # 10 of 10 units
    kept.keep("c", 3)  # an 11th unit: the others go
    assert (kept.get("a"), kept.get("b"), kept.get("c"), len(kept)) == (None, None, 3, 1)
    kept.keep("big", 4, size=25)  # larger than the budget: kept alone
    assert (kept.get("c"), kept.get("big"), len(kept)) == (None, 4, 1)
    kept.keep("d", 5)
    assert (kept.get("big"), kept.get("d")) == (None, 5)

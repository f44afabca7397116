"""The sweeps' error: a sweep that cannot start or a bad table or plot request."""

from __future__ import annotations

from edgesim.errors import ScenarioError


class SweepError(ScenarioError):
    """A sweep cannot start (folder in use, bad executor settings): bad input, exit code 2."""

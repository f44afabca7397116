"""How error messages write values and options (the scenario's names for the helpers of
:mod:`edgesim.config`, where the one field validator lives)."""

from __future__ import annotations

from edgesim.config import _TYPE_NAMES as _TYPE_NAMES
from edgesim.config import allowed as _allowed
from edgesim.config import or_list as _or_list
from edgesim.config import range_text as _range_text
from edgesim.config import show as _show
from edgesim.config import suggest as _suggest

__all__ = ["_TYPE_NAMES", "_allowed", "_or_list", "_range_text", "_show", "_suggest"]

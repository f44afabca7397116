"""Declarative configuration fields: type, unit, range and allowed values.

Every scenario section is a frozen dataclass whose fields are declared with
:func:`option`. The scenario loader (``edgesim.scenario``) checks each value
against this metadata generically, so a section only writes the cross-field
rules that metadata cannot express (its ``cross_check`` method). docs/reference.md's
scenario reference is generated from the same metadata.
"""

from __future__ import annotations

import dataclasses
from typing import Any


def option(
    default: Any,
    doc: str,
    *,
    unit: str | None = None,
    choices: tuple | None = None,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
    kinds: tuple[type, ...] | None = None,
) -> Any:
    """Declare one scenario key.

    Returns a ``dataclasses.field`` whose metadata holds the documentation,
    the unit, the allowed values (``choices``), numeric bounds (``ge`` >=,
    ``gt`` >, ``le`` <=, ``lt`` <) and, when the annotation is not enough,
    the accepted Python types (``kinds``, e.g. ``(int, str)`` for a value that
    is a round count or ``"theory"``).
    """
    meta = {
        "doc": doc,
        "unit": unit,
        "choices": choices,
        "ge": ge,
        "gt": gt,
        "le": le,
        "lt": lt,
        "kinds": kinds,
    }
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def section(default_factory: Any, doc: str) -> Any:
    """Declare a nested section (itself a dataclass) with its documentation."""
    return dataclasses.field(
        default_factory=default_factory, metadata={"doc": doc, "section": True}
    )

"""Researchers' own parts, named in a scenario as ``"package.module:Name"``.

A key that names a registered kind (a strategy, a mechanism, a link or loss
model, a compute or availability model) may instead name an object in the
researcher's own module; :func:`import_object` imports it, and the section
that owns the key registers it under that string through the same registry
the built-in kinds use, so it is validated and run like them.
"""

from __future__ import annotations

import importlib

from edgesim.errors import ScenarioError


def import_object(spec: str, key: str):
    """Import ``"package.module:Name"`` and return the object (a class or function).

    Raises :class:`ScenarioError` for ``key`` when the import fails or the
    object is not callable.
    """
    module, _, name = spec.partition(":")
    try:
        obj = getattr(importlib.import_module(module), name)
    except Exception as err:  # ImportError, AttributeError, or the module's own failure
        detail = " ".join(f"{type(err).__name__}: {err}".split())
        raise ScenarioError(key, f"cannot import {spec!r} ({detail})") from None
    if not callable(obj):
        raise ScenarioError(key, f"{spec!r} is {type(obj).__name__}, not a class or function")
    return obj


def register_from_spec(spec: str, key: str, registry: dict) -> list[ScenarioError]:
    """Register ``spec`` in ``registry`` under its own name when it is ``"module:Name"``.

    Returns the errors (at most one); nothing to do for a name already
    registered or without a colon (the registry's own check reports it).
    """
    if spec in registry or ":" not in spec:
        return []
    try:
        registry[spec] = import_object(spec, key)
    except ScenarioError as err:
        return [err]
    return []

"""One rule for every registry of named parts (mechanisms, strategies, links, losses, ...)."""

from __future__ import annotations


def register(registry: dict, kind: str, name: str, obj, replace: bool = False) -> None:
    """Put ``obj`` in ``registry`` under ``name``; returns nothing.

    Registering the same object again is harmless; a different object under a
    name already taken raises ValueError unless ``replace`` is true, so that a
    researcher's part never silently shadows a built-in one (``kind`` names
    the registry in the message, e.g. ``"mechanism"``).
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"a {kind} name must be a non-empty string, got {name!r}")
    if not replace and name in registry and registry[name] is not obj:
        raise ValueError(f"{kind} {name!r} is already registered; pass replace=True to replace it")
    registry[name] = obj

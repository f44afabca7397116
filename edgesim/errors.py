"""User-facing errors: one line naming the key, the value and what is allowed."""

from __future__ import annotations


def one_line(text) -> str:
    """Return ``text`` (or an exception's message) with every run of whitespace as one space."""
    return " ".join(str(text).split())


class ScenarioError(ValueError):
    """A bad user-supplied value.

    ``key`` is the dotted scenario path (``"agents.count"``); ``message`` says
    what was given and what is allowed. The CLI prints ``str(err)`` as one line
    and exits with code 2.
    """

    def __init__(self, key: str, message: str):
        self.key = key
        self.message = message
        super().__init__(f"{shown_key(key)}: {one_line(message)}")


def shown_key(key) -> str:
    """Return ``key`` as an error prints it: control characters escaped (a key read from a
    file may hold a newline), so the error stays one line."""
    key = str(key)
    return key if key.isprintable() else key.encode("unicode_escape").decode("ascii")


class ScenarioErrors(ValueError):
    """Several :class:`ScenarioError` found in one pass over a scenario."""

    def __init__(self, errors: list[ScenarioError]):
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))

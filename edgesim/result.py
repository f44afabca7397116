"""One run's result in Python: :class:`RunResult`, the JSON of ``edgesim run --json`` with attributes.

The attributes are not declared a second time: each is generated from a field of
the output contract (:class:`edgesim.output.RunRecord`), with that field's
documentation, so ``res.payments`` and ``res["payments"]`` are one value and
docs/output.md, docs/api.md and ``help(RunResult)`` say the same. A field that is
a JSON object (``model``, ``sim_time_s``, ``network`` ...) comes back as a
:class:`Section`: a read-only view of that dict with its keys as attributes
(``res.model.global_loss``), equal to the dict (``res.model == res["model"]``).
The ``agents`` list comes back as one :class:`Section` per agent. An optional
field the run did not produce (``privacy`` outside DP-FFL) is None.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

from edgesim.output import RunRecord, to_json


class Section(Mapping):
    """A read-only view of one JSON object of a result: ``sec.key`` is ``sec["key"]``.

    Nested objects are views too, lists of objects lists of views; other
    values (numbers, strings, lists of numbers) are returned as stored. It
    equals the dict it views (``Mapping`` equality), and :meth:`to_dict`
    returns that dict itself.
    """

    __slots__ = ("_values",)

    def __init__(self, values: dict):
        object.__setattr__(self, "_values", values)

    def __getitem__(self, key: str) -> Any:
        return view(self._values[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)  # copy, pickle and friends probe dunders
        try:
            return view(self._values[name])
        except KeyError:
            keys = ", ".join(self._values) or "none"
            raise AttributeError(f"no field {name!r} here (the fields: {keys})") from None

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError("a result is read-only: copy it with to_dict() to change it")

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *(k for k in self._values if k.isidentifier())})

    def to_dict(self) -> dict:
        """Return the viewed dict itself (plain data, not a copy)."""
        return self._values

    def __reduce__(self):
        return (Section, (self._values,))

    def __repr__(self) -> str:
        return f"Section({self._values!r})"


def view(value: Any) -> Any:
    """Return ``value`` as a result shows it: a dict as a :class:`Section`, a list of dicts as a list of them."""
    if isinstance(value, dict):
        return Section(value)
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [view(v) for v in value]
    return value


def attribute_type(annotation: str) -> str:
    """Return the type a :class:`RunResult` attribute has for a contract field annotated ``annotation``.

    ``dict`` becomes ``Section``, the list of agents ``list[Section]``; other
    annotations (``int``, ``float | None`` ...) are unchanged.
    """
    return str(annotation).replace("dict", "Section")


def contract_fields() -> list[dataclasses.Field]:
    """Return the output contract's top-level fields (:class:`edgesim.output.RunRecord`), in JSON order."""
    return list(dataclasses.fields(RunRecord))


def _attribute(f: dataclasses.Field) -> property:
    name, doc = f.name, f.metadata["doc"]
    kind = "list[Section]" if name == "agents" else attribute_type(f.type)
    if f.metadata["optional"]:
        doc += " (None when the run has none)"

    def get(self: RunResult) -> Any:
        return view(self.to_dict().get(name))

    get.__name__ = name
    get.__doc__ = f"{doc}."
    get.__annotations__ = {"return": kind}
    return property(get, doc=get.__doc__)


class RunResult:
    """The result of one run: the output-contract dict of ``edgesim run --json``, with attributes.

    Index it like the dict (``res["payments"]``, ``"privacy" in res``), or read
    a field as an attribute (``res.payments``, ``res.sim_time_s.total``,
    ``res.agents[3].payment``): one attribute per field of
    :class:`edgesim.output.RunRecord` (docs/output.md), a JSON object as a
    read-only :class:`Section`. :meth:`to_dict` returns the dict itself and
    :meth:`to_json` the byte-stable JSON text.
    """

    def __init__(self, data: dict):
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def keys(self):
        """Return the top-level field names."""
        return self._data.keys()

    def to_dict(self) -> dict:
        """Return the result as plain data (the dict itself, not a copy)."""
        return self._data

    def to_json(self) -> str:
        """Return the JSON text ``edgesim run --json`` writes (byte-identical for a seed)."""
        return to_json(self._data)

    def __repr__(self) -> str:
        d = self._data
        return (
            f"RunResult(name={d.get('name')!r}, mechanism={d.get('mechanism')!r}, K={d.get('K')})"
        )


for _field in contract_fields():
    if hasattr(RunResult, _field.name):
        raise TypeError(f"output field {_field.name!r} clashes with a RunResult method")
    setattr(RunResult, _field.name, _attribute(_field))
del _field

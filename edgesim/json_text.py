"""JSON text as ``json.dumps(value, indent=1, allow_nan=False)`` writes it, at large K fast.

``edgesim run --json`` and a sweep's ``results.jsonl`` write a run's result dict
(:mod:`edgesim.output`) as that text. The stdlib writes it with its pure-Python
encoder when indenting (the C encoder only writes without indent before Python
3.13): about 35 s for the 600 MB of lossy FFL at K = 10^6, most of it per value.
:func:`json_pieces` gives the same text, character for character, but formats a
long list as blocks: a column of floats at once (its digits from orjson when
installed, laid out as ``float.__repr__`` lays them out, which is what the stdlib
writes), and a list of dicts with the same keys (the agents) column by column, the
columns' texts interleaved with the constant text between them and joined once.
Everything else follows the stdlib encoder's rules (json/encoder.py,
``_make_iterencode``): key conversion, NaN refused, cycle check.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import operator
from collections.abc import Iterator

import numpy as np

#: A list at least this long is formatted as blocks of columns (shorter: item by item).
BULK_ITEMS = 256
#: Items formatted at once: bounds the text held in memory (a few MB per block).
CHUNK_ITEMS = 1 << 14
_COLUMN_DEPTH = 16  # dicts nested deeper than this go item by item (and meet the cycle check)
_ENCODE_STR = json.encoder.encode_basestring_ascii
_NONE_TYPE = type(None)
_FLOAT_COLUMN_TYPES = frozenset({float, np.float64, _NONE_TYPE})


def _float_text(x: float) -> str:
    """Return ``x`` as JSON text (``float.__repr__``); a NaN or infinity raises ValueError."""
    if x != x or x == math.inf or x == -math.inf:
        raise ValueError("Out of range float values are not JSON compliant: " + repr(x))
    return float.__repr__(x)


_SCALAR_TEXT = {
    str: _ENCODE_STR,
    _NONE_TYPE: lambda v: "null",
    bool: lambda v: "true" if v else "false",
    int: int.__repr__,
    float: _float_text,
    np.float64: _float_text,
}
_ONE_TYPE_TEXT = {
    int: int.__repr__,
    str: _ENCODE_STR,
    bool: {True: "true", False: "false"}.__getitem__,
}


def json_pieces(value) -> Iterator[str]:
    """Yield the text of ``json.dumps(value, indent=1, allow_nan=False)`` in pieces.

    Joined, the pieces are that text exactly (the same bytes for the same value); a long
    list comes as a few pieces of :data:`CHUNK_ITEMS` items each. Raises what ``json.dumps``
    raises: ValueError for a NaN or infinity or a circular reference, TypeError for a value
    or a key JSON cannot hold.
    """
    return _pieces(value, 0, set())


def _pieces(o, level: int, markers: set) -> Iterator[str]:
    if isinstance(o, str):
        yield _ENCODE_STR(o)
    elif o is None:
        yield "null"
    elif o is True:
        yield "true"
    elif o is False:
        yield "false"
    elif isinstance(o, int):
        yield int.__repr__(o)
    elif isinstance(o, float):
        yield _float_text(o)
    elif isinstance(o, (list, tuple)):
        yield from _list_pieces(o, level, markers)
    elif isinstance(o, dict):
        yield from _dict_pieces(o, level, markers)
    else:
        raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def _enter(o, markers: set) -> None:
    if id(o) in markers:
        raise ValueError("Circular reference detected")
    markers.add(id(o))


def _list_pieces(items, level: int, markers: set) -> Iterator[str]:
    if not items:
        yield "[]"
        return
    _enter(items, markers)
    inner = "\n" + " " * (level + 1)
    sep = "," + inner
    yield "[" + inner
    if len(items) >= BULK_ITEMS:
        for start in range(0, len(items), CHUNK_ITEMS):
            if start:
                yield sep
            yield _block_text(items[start : start + CHUNK_ITEMS], level + 1, markers)
    else:
        for i, v in enumerate(items):
            if i:
                yield sep
            yield from _pieces(v, level + 1, markers)
    yield "\n" + " " * level + "]"
    markers.discard(id(items))


def _key_text(key) -> str:
    """Return a dict key as the stdlib encoder converts it (before quoting)."""
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float_text(key)
    if key is True or key is False or key is None:
        return {True: "true", False: "false", None: "null"}[key]
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def _dict_pieces(d: dict, level: int, markers: set) -> Iterator[str]:
    if not d:
        yield "{}"
        return
    _enter(d, markers)
    inner = "\n" + " " * (level + 1)
    for i, (key, value) in enumerate(d.items()):
        yield ("{" if i == 0 else ",") + inner + _ENCODE_STR(_key_text(key)) + ": "
        yield from _pieces(value, level + 1, markers)
    yield "\n" + " " * level + "}"
    markers.discard(id(d))


def _texts(items, level: int, markers: set, types: set | None = None) -> list[str]:
    """Return each item's JSON text at nesting ``level`` (a block of a long list, or a column);
    ``types``: the items' types when the caller has them."""
    types = set(map(type, items)) if types is None else types
    if types <= _FLOAT_COLUMN_TYPES and not types <= {_NONE_TYPE}:
        return _float_texts(items)
    if types == {_NONE_TYPE}:
        return ["null"] * len(items)
    if len(types) == 1 and types <= _ONE_TYPE_TEXT.keys():  # ints, strs, bools
        return list(map(_ONE_TYPE_TEXT[next(iter(types))], items))
    if types <= _SCALAR_TEXT.keys():
        text = _SCALAR_TEXT
        return [text[type(v)](v) for v in items]
    return ["".join(_pieces(v, level, markers)) for v in items]


def _float_texts(items) -> list[str]:
    """Return the texts of floats and Nones (None: "null"), as ``float.__repr__`` writes them.

    The digits come from orjson when it passes :func:`_fast_floats`'s check (in C, about
    20x faster than ``float.__repr__``); its layout differs only below 1e-4 and from 1e16
    on, where :func:`_python_layout` rewrites it. Raises ValueError for a NaN or infinity.
    """
    values = np.array(items, dtype=np.float64)  # None -> NaN
    finite = np.isfinite(values)
    if not finite.all():
        for i in np.flatnonzero(~finite).tolist():
            if items[i] is not None:
                _float_text(items[i])  # raises
    engine = _fast_floats()
    if engine is None and finite.all():
        return list(map(float.__repr__, items))
    if engine is None:
        text = _SCALAR_TEXT
        return [text[type(v)](v) for v in items]
    texts = engine(values)
    _python_layout(texts, values)
    return texts


def _orjson_texts(values: np.ndarray) -> list[str]:
    """Return orjson's text of each float64 in ``values`` (NaN: "null")."""
    import orjson

    return orjson.dumps(values, option=orjson.OPT_SERIALIZE_NUMPY)[1:-1].decode().split(",")


def _python_layout(texts: list[str], values: np.ndarray) -> None:
    """Rewrite, in place, orjson's texts of the floats below 1e-4 and from 1e16 on in
    ``float.__repr__``'s layout: ``0.0000349`` (orjson's fixed point from 1e-5 to 1e-4) as
    ``3.49e-05``, and ``1.5e-7`` as ``1.5e-07`` (an exponent of at least two digits)."""
    size = np.abs(values)
    fixed = (size >= 1e-5) & (size < 1e-4)
    for sign, head in (("", 6), ("-", 7)):  # "0.0000349" -> "3.49e-05", "-0.00001" -> "-1e-05"
        where = np.flatnonzero(fixed & ((values < 0) == (sign == "-"))).tolist()
        new = [
            f"{sign}{t[head]}.{t[head + 1 :]}e-05" if len(t) > head + 1 else f"{sign}{t[head]}e-05"
            for t in map(texts.__getitem__, where)
        ]
        for i, text in zip(where, new, strict=True):
            texts[i] = text
    where = np.flatnonzero(((size < 1e-5) & (size > 0)) | (size >= 1e16)).tolist()
    new = [  # "1.5e-7" -> "1.5e-07"
        f"{t[:-1]}0{t[-1]}" if t[-2] in "+-" else t for t in map(texts.__getitem__, where)
    ]
    for i, text in zip(where, new, strict=True):
        texts[i] = text


@functools.cache
def _fast_floats():
    """Return :func:`_orjson_texts` when orjson is installed and its texts, laid out by
    :func:`_python_layout`, are ``float.__repr__``'s on :func:`_probe_floats`; else None
    (then every float is written by ``float.__repr__``: the same text, slower)."""
    try:
        import orjson  # noqa: F401
    except ImportError:
        return None
    probe = _probe_floats()
    texts = _orjson_texts(probe)
    _python_layout(texts, probe)
    return _orjson_texts if texts == list(map(float.__repr__, probe.tolist())) else None


def _probe_floats() -> np.ndarray:
    """Return floats that exercise a float writer: both sides of each layout threshold (1e-4,
    1e-5, 1e16), zeros, the extremes, subnormals, integers, and 4 000 random bit patterns."""
    edges = [0.0, -0.0, 1.0, 0.1, 0.2 + 0.1, 1 / 3, 100.0, 123456.789, 2.0**53, 2.0**53 + 2]
    for t in (1e-4, 1e-5, 1e15, 1e16, 1e17, 1e-10, 1e-100, 1e100):
        edges += [t, np.nextafter(t, 0.0), np.nextafter(t, np.inf), 1.5 * t, 9.87654321 * t]
    edges += [5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308]
    bits = np.random.default_rng(0).integers(0, 2**63, 4000, dtype=np.uint64)
    random = bits.view(np.float64)
    random = np.abs(random[np.isfinite(random)])
    return np.concatenate([edges, -np.asarray(edges), random, -random * 1e-300])


def _block_text(items, level: int, markers: set) -> str:
    """Return the text of consecutive items of a list at nesting ``level``, with the list's
    separators between them (a block of :data:`CHUNK_ITEMS` items of a long list).

    Dicts that share their keys (the agents) are laid out by :func:`_dict_layout`: the
    text is the constants and the columns' texts interleaved, joined once.
    """
    sep = ",\n" + " " * level
    layout, types = None, set(map(type, items))
    if level < _COLUMN_DEPTH and types == {dict}:
        layout = _dict_layout(items, level, markers)
    if layout is None:
        return sep.join(_texts(items, level, markers, types))
    constants, columns, tail = layout
    n, width = len(items), 2 * len(columns) + 1
    pieces = [tail + sep] * (width * n)
    for i, (constant, texts) in enumerate(zip(constants, columns, strict=True)):
        pieces[2 * i :: width] = [constant] * n
        pieces[2 * i + 1 :: width] = texts
    pieces[-1] = tail
    return "".join(pieces)


def _dict_layout(items, level: int, markers: set) -> tuple[list, list, str] | None:
    """Return the text of dicts that share their keys (in order), as (constants, columns,
    tail): each dict's text is constants[0] + columns[0][k] + constants[1] + ... + tail,
    a column the texts of one key's values (a dict-valued key laid out in turn). None when
    the dicts do not share their keys, or a key is not a str."""
    keysets = set(map(tuple, items))
    if len(keysets) != 1:
        return None
    (keys,) = keysets
    if not all(type(k) is str for k in keys):
        return None
    if not keys:
        return [], [], "{}"
    inner = "\n" + " " * (level + 1)
    constants, columns, pending = [], [], "{"
    for key, values in zip(keys, _columns(items, keys), strict=True):
        prefix = pending + inner + _ENCODE_STR(key) + ": "
        sub, types = None, set(map(type, values))
        if level + 1 < _COLUMN_DEPTH and types == {dict}:
            sub = _dict_layout(values, level + 1, markers)
        if sub is None:
            constants.append(prefix)
            columns.append(_texts(values, level + 1, markers, types))
            pending = ","
        elif sub[1]:  # a dict-valued key: its constants and columns join ours
            constants += [prefix + sub[0][0], *sub[0][1:]]
            columns += sub[1]
            pending = sub[2] + ","
        else:  # every value the same constant text ({} or dicts of {})
            pending = prefix + sub[2] + ","
    return constants, columns, pending[:-1] + "\n" + " " * level + "}"


def _columns(items, keys: tuple) -> list[list]:
    """Return each key's values over the dicts ``items`` (one pass over the dicts)."""
    if len(keys) == 1:
        return [list(map(operator.itemgetter(keys[0]), items))]
    flat = list(itertools.chain.from_iterable(map(operator.itemgetter(*keys), items)))
    return [flat[i :: len(keys)] for i in range(len(keys))]

"""Frozen result dataclasses to JSON-ready dicts and back, by their type hints.

The door's results are frozen dataclasses; their JSON form (the CLI's ``--json``, the
reports the app caches in the library) is a dict with one key per field, in field order.
`plain` writes that dict: nested results become dicts, tuples lists, and a field whose
metadata is `OMIT_WHEN_NONE` is left out while it is ``None`` (a part not asked for).
`build` reads it back by the dataclass's type hints, checking as it goes, so a stored
report of another shape is refused with the path of the first field that does not fit
(`ResultFormatError`) instead of turning into a half-read result. Numbers are kept as they
came (an ``int`` stays an ``int`` in a ``float`` field), so a result written again gives
the same JSON text.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import types
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")

_OMIT = "omit_when_none"
# The metadata of a field (default None) that the JSON form leaves out while it is None:
# ``field(default=None, metadata=OMIT_WHEN_NONE)``.
OMIT_WHEN_NONE: Mapping[str, bool] = types.MappingProxyType({_OMIT: True})


class ResultFormatError(ValueError):
    """A dict does not fit a result type; the message names the path that does not fit."""


def plain(value: Any) -> Any:
    """`value` as JSON-ready data: results become dicts in field order, tuples lists.

    Mappings are copied (their keys kept as they are), so the caller may change the answer
    without touching the result.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if item is None and f.metadata.get(_OMIT):
                continue
            out[f.name] = plain(item)
        return out
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def build(cls: type[T], data: Any, where: str = "") -> T:
    """The `cls` result that `data` (its `plain` form) describes; `ResultFormatError` when
    a field is missing, unknown or of the wrong kind."""
    return _read(cls, data, where or cls.__name__)


def finite_or_null(value: Any) -> Any:
    """`value` with every infinite or NaN float replaced by None: JSON has no number for
    them, and a reader of strict JSON must not meet ``Infinity``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_null(v) for v in value]
    return value


class JsonResult:
    """What every result of the door can do: its dict, its JSON text and back.

    `JSON_DEFAULT` is handed to `json.dumps` as ``default`` for values JSON cannot hold (the
    CLI's training JSON turns them into floats, its cost JSON into text).
    """

    JSON_DEFAULT: Callable[[Any], Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict: one key per field, in field order, unasked parts left out."""
        return plain(self)

    def to_json(self) -> str:
        """The JSON text the CLI prints for ``--json`` (two-space indent): strict JSON, so
        a figure with no finite value (an infinite time, say) is ``null``."""
        return json.dumps(
            finite_or_null(self.to_dict()),
            indent=2,
            default=type(self).JSON_DEFAULT,
            allow_nan=False,
        )

    @classmethod
    def from_dict(cls: type[T], data: Any) -> T:
        """The result `data` (a `to_dict` answer, e.g. read back from JSON) describes."""
        return build(cls, data)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _fail(where: str, message: str) -> ResultFormatError:
    return ResultFormatError(f"{where}: {message}")


def _read(tp: Any, data: Any, where: str) -> Any:
    if tp is Any:
        return data
    if dataclasses.is_dataclass(tp):
        return _read_dataclass(tp, data, where)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        if len(options) != 1:
            raise _fail(where, f"cannot read a union of {len(options)} types")
        return _read(options[0], data, where)
    if origin is tuple:
        return _read_tuple(args, data, where)
    if origin in (dict, Mapping):
        if not isinstance(data, Mapping):
            raise _fail(where, f"expected an object, got {type(data).__name__}")
        key_type, value_type = args or (Any, Any)
        return {
            _key(key_type, k, where): _read(value_type, v, f"{where}.{k}") for k, v in data.items()
        }
    return _read_scalar(tp, data, where)


def _read_dataclass(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, Mapping):
        raise _fail(where, f"expected an object, got {type(data).__name__}")
    hints = _hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = [k for k in data if k not in known]
    if unknown:
        raise _fail(where, f"unknown field(s) {', '.join(map(str, unknown))}")
    values = {}
    for name, f in known.items():
        if name in data:
            values[name] = _read(hints[name], data[name], f"{where}.{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise _fail(where, f"missing field {name}")
    return cls(**values)


def _read_tuple(args: tuple[Any, ...], data: Any, where: str) -> tuple[Any, ...]:
    if not isinstance(data, list | tuple):
        raise _fail(where, f"expected a list, got {type(data).__name__}")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_read(args[0], v, f"{where}[{i}]") for i, v in enumerate(data))
    if len(args) != len(data):
        raise _fail(where, f"expected {len(args)} items, got {len(data)}")
    return tuple(
        _read(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, data, strict=True))
    )


def _key(tp: Any, key: Any, where: str) -> Any:
    if tp is int and isinstance(key, str):  # JSON keeps every object key as text
        try:
            return int(key)
        except ValueError:
            raise _fail(where, f"key {key!r} is not a whole number") from None
    return key


def _read_scalar(tp: Any, data: Any, where: str) -> Any:
    if tp is float:
        ok = isinstance(data, numbers.Real) and not isinstance(data, bool)
    elif tp is int:
        ok = isinstance(data, numbers.Integral) and not isinstance(data, bool)
    elif tp in (str, bool):
        ok = isinstance(data, tp)
    else:
        raise _fail(where, f"cannot read a field of type {tp!r}")
    if not ok:
        raise _fail(where, f"expected {tp.__name__}, got {type(data).__name__}")
    return data

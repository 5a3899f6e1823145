"""The decorators every library method goes through, so no ``sqlite3`` error escapes it.

A method marked `reads` or `writes` turns any ``sqlite3`` error into the library's
`LibraryError` (through the library's own `_explain`, which knows the file, the wait and
whether a newer FabricLab wrote it), text that is not UTF-8, which Python's sqlite3
meets reading a damaged row, into the damage it is, and asked-for text that cannot be
Unicode (a lone surrogate from a command line's stray bytes) into a clear refusal. They
live apart from the store so the scenario methods (`engine.library.store`) and the
measurement methods (`engine.library.measurements`) share them.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar

from engine.library.errors import LibraryError, not_utf8

F = TypeVar("F", bound=Callable[..., Any])


def guard(doing: str) -> Callable[[F], F]:
    """Turn any ``sqlite3`` error of the method (or text that is not UTF-8) into the
    library's `LibraryError`; `doing` ("read" or "write") words the message."""

    def wrap(method: F) -> F:
        @functools.wraps(method)
        def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except sqlite3.Error as exc:
                raise self._explain(exc, doing) from None
            except UnicodeDecodeError:
                raise not_utf8(self.path) from None
            except UnicodeEncodeError as exc:  # text asked for (a name, a search) that
                # cannot be Unicode: a command line's bytes that were not UTF-8
                raise LibraryError(
                    f"{exc.object[exc.start : exc.end]!r} in {exc.object!r} is not text "
                    "(bytes that are not UTF-8); type the name or search again"
                ) from None

        return guarded  # type: ignore[return-value]

    return wrap


reads = guard("read")
writes = guard("write")

"""Pickling for the small slotted dataclasses that cross to worker processes a row at a time."""

from __future__ import annotations

import dataclasses
import operator
from typing import Any, TypeVar

T = TypeVar("T")


def pickled_by_fields(cls: type[T]) -> type[T]:
    """Pickle a ``@dataclass(slots=True)`` class as the tuple of its fields' values.

    The same state dataclasses gives such a class, made without calling
    ``dataclasses.fields`` for each object (about 3 us an object, paid on the engine's
    event loop for every row it sends to a worker or reads back). Apply it above
    ``@dataclass``::

        @pickled_by_fields
        @dataclass(frozen=True, slots=True)
        class Point: ...
    """
    names = tuple(field.name for field in dataclasses.fields(cls))  # type: ignore[arg-type]
    read = operator.attrgetter(*names)
    single = len(names) == 1

    def __getstate__(self: Any) -> tuple[Any, ...]:
        return (read(self),) if single else read(self)

    def __setstate__(self: Any, state: tuple[Any, ...]) -> None:
        for name, value in zip(names, state, strict=True):
            object.__setattr__(self, name, value)  # frozen classes too

    cls.__getstate__ = __getstate__  # type: ignore[method-assign]
    cls.__setstate__ = __setstate__  # type: ignore[attr-defined]
    return cls

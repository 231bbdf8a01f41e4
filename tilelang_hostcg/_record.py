"""Immutable records that cost nothing to define.

``@dataclass(frozen=True, slots=True)`` generates and compiles six or more methods per
class when the module is imported (about 0.8 ms each, on the first-use path of every
process). The internal records derive from :class:`Record` instead: a ``__slots__``
class whose fields are its ``__slots__``, in order, with the same behaviour as a
frozen dataclass: equality and hashing over the compared fields (same class only),
a ``Name(field=value, ...)`` repr, ``dataclasses.FrozenInstanceError`` on assignment,
and pickling. Each subclass writes its own ``__init__`` (type-checked) and sets the
fields through :func:`init_fields`. The public ``HostCodegen`` and
``HostCodegenHook`` stay dataclasses, as TileLang's are.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError  # dataclasses is imported by TVM anyway

TYPE_CHECKING = False  # typing costs import time on the first-use path; checkers read True
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Record", "init_fields"]

_set = object.__setattr__


def init_fields(record: Record, *values: object) -> None:
    """Set the fields of a freshly made ``record`` to ``values``, in ``__slots__`` order."""
    for name, value in zip(type(record).__slots__, values, strict=True):
        _set(record, name, value)


class Record:
    """Base of the internal immutable records (see the module docstring).

    ``_compare`` names the fields that equality and hashing use (default: all).
    """

    __slots__: tuple[str, ...] = ()
    _compare: tuple[str, ...] | None = None

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in (self._compare or self.__slots__))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__qualname__}({fields})"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), tuple(getattr(self, name) for name in self.__slots__))

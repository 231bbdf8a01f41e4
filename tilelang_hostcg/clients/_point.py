"""An integration point of a compiler (:class:`Point`): a function, dict or field that a client of
ours replaces or reads, checked in the compiler the program imported by its shape: what its callers
can call, as they call it (so many arguments by position, these by keyword), decorators followed
through ``__wrapped__``. Whether the point is on the compiler's path is shown by a build, never by
reading code: reading the callers' code only gives a :meth:`Point.hint`. Cheap to import."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from contextlib import suppress
from importlib import import_module
from types import CodeType
from typing import Literal, NamedTuple

Shape = tuple[str, ...] | Literal["dict", "field", "mapping", "callable"]
"""A function's arguments as its callers pass them by position (their names only say what they are:
a parameter renamed is the same shape); ``dict`` (a module's dict); ``field`` (a class's);
``mapping`` (a function of no parameters that returns a mapping); ``callable`` (any function: a link
in the chain of callers)."""


class Point(NamedTuple):
    """``module``'s ``path`` (through a class for a method), of ``shape``, called with ``keywords`` by
    name too; ``called_by`` (``module:qualname``): the compiler's own functions that call it, read for
    a hint only."""

    module: str
    path: str
    shape: Shape
    called_by: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.module}.{self.path}"

    def _owner_and_value(self) -> tuple[object, object]:
        owner: object = import_module(self.module)
        *owners, name = self.path.split(".")
        for part in owners:
            owner = getattr(owner, part, None)
        if isinstance(owner, type):
            return owner, vars(owner).get(name)
        return owner, getattr(owner, name, None)

    def value(self) -> object:
        """The point's object in the imported compiler (``None``: missing or not importable)."""
        try:
            return self._owner_and_value()[1]
        except Exception:  # no such module, or the compiler's own module fails
            return None

    def problem(self) -> str | None:
        """What is wrong with this point in the imported compiler (missing, or its callers' call
        would not bind to it), else ``None``."""
        try:
            owner, value = self._owner_and_value()
        except Exception as exc:  # no such module, or the compiler's own module fails: not usable
            return f"{self} ({type(exc).__name__}: {exc})"
        if self.shape == "field":
            name = self.path.rpartition(".")[2]
            found = name in (getattr(owner, "__dataclass_fields__", None) or {}) or hasattr(owner, name)
            return None if found else f"{self} (no such field)"
        if value is None:
            return f"{self} (missing)"
        if self.shape == "dict":
            return None if isinstance(value, dict) else f"{self} (not a dict)"
        return self._function_problem(value)

    def _function_problem(self, value: object) -> str | None:
        try:
            signature = inspect.signature(value, follow_wrapped=True)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            if callable(value) and isinstance(self.shape, tuple) and not self.keywords:
                return None  # a compiled function (an FFI one): its callers call it by position
            return f"{self} (not a function: {type(value).__name__})"
        if self.shape == "callable":
            return None
        params = list(signature.parameters.values())
        if self.shape == "mapping":
            return self._mapping_problem(value) if not params else f"{self} (takes parameters: {_listed(params)})"
        assert isinstance(self.shape, tuple)
        try:
            signature.bind(*self.shape, **{name: name for name in self.keywords})
        except TypeError as exc:
            return f"{self} (parameters ({_listed(params)}) where its callers pass {self.calls()}: {exc})"
        return None

    def calls(self) -> str:
        """How the compiler's callers call the point: ``(self, target_host)``, keywords as ``name=``."""
        assert isinstance(self.shape, tuple)
        return f"({', '.join([*self.shape, *(f'{k}=' for k in self.keywords)])})"

    def _mapping_problem(self, value: object) -> str | None:
        try:
            result = value()  # type: ignore[operator]
        except Exception as exc:  # the compiler's own function fails: not usable
            return f"{self} (raised {type(exc).__name__}: {exc})"
        return None if isinstance(result, Mapping) else f"{self} (returns a {type(result).__name__}, not a mapping)"

    def hint(self) -> str | None:
        """Where reading the callers' code (decorators followed) does not find the point's name: a
        hint for a build that did not call it; never a verdict."""
        name = self.path.rpartition(".")[2]
        for caller in self.called_by:
            module, _, qualname = caller.partition(":")
            try:
                func: object = import_module(module)
                for part in qualname.split("."):
                    func = inspect.getattr_static(func, part)
            except Exception:  # the caller itself is gone
                return f"{self}: its caller {module}.{qualname} is missing"
            codes = _codes(func)
            if codes and not any(_names(code, name) for code in codes):
                return f"{self}: the code of {module}.{qualname} does not name it (a renamed or leftover point?)"
        return None


def _codes(func: object) -> list[CodeType]:
    """The code of ``func`` and of each function it wraps (``__wrapped__``, a few levels)."""
    out = []
    for _ in range(8):
        func = getattr(func, "__func__", func)  # a staticmethod or classmethod
        code = getattr(func, "__code__", None)
        if isinstance(code, CodeType):
            out.append(code)
        inner = None
        with suppress(Exception):
            inner = getattr(func, "__wrapped__", None)
        if inner is None:
            break
        func = inner
    return out


def _listed(params: list[inspect.Parameter]) -> str:
    """The parameters as a signature writes them (a ``*`` before keyword-only ones)."""
    return str(inspect.Signature(params))[1:-1]


def _names(code: CodeType, name: str) -> bool:
    """Whether ``code`` (or a function nested in it) looks ``name`` up."""
    if name in code.co_names:
        return True
    return any(isinstance(const, CodeType) and _names(const, name) for const in code.co_consts)

"""An integration point of a compiler (:class:`Point`): a function, dict or field that a client of
ours replaces or reads, checked in the compiler the program imported by its exact shape and by use:
the functions of the compiler that must call it still do. Cheap to import."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from importlib import import_module
from types import CodeType
from typing import Literal, NamedTuple

Shape = tuple[str, ...] | Literal["dict", "field", "mapping", "callable"]
"""A function's parameters (exactly, unless the point is not ``exact``: then its leading ones);
``dict`` (a module's dict); ``field`` (a class's); ``mapping`` (a function of no parameters that
returns a mapping); ``callable`` (any function: a link in the chain of callers)."""


class Point(NamedTuple):
    """``module``'s ``path`` (through a class for a method), of ``shape``, called (by name) from each
    function of ``called_by`` (``module:qualname``): the compiler's own code that must reach it."""

    module: str
    path: str
    shape: Shape
    called_by: tuple[str, ...] = ()
    exact: bool = True

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

    def problem(self) -> str | None:
        """What is wrong with this point in the imported compiler (missing, of another shape, or no
        longer called where the compiler must call it), else ``None``."""
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
        return self._function_problem(value) or self._caller_problem()

    def _function_problem(self, value: object) -> str | None:
        try:
            params = list(inspect.signature(value).parameters.values())  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return f"{self} (not a function: {type(value).__name__})"
        if self.shape == "callable":
            return None
        if self.shape == "mapping":
            return self._mapping_problem(value) if not params else f"{self} (takes parameters: {_listed(params)})"
        if self.exact and [p.name for p in params] == list(self.shape) and all(_plain(p) for p in params):
            return None
        named = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if not self.exact and named[:len(self.shape)] == list(self.shape):
            return None
        wanted = "exactly " if self.exact else ""
        return f"{self} (parameters ({_listed(params)}) where {wanted}({', '.join(self.shape)}) are called)"

    def _mapping_problem(self, value: object) -> str | None:
        try:
            result = value()  # type: ignore[operator]
        except Exception as exc:  # the compiler's own function fails: not usable
            return f"{self} (raised {type(exc).__name__}: {exc})"
        return None if isinstance(result, Mapping) else f"{self} (returns a {type(result).__name__}, not a mapping)"

    def _caller_problem(self) -> str | None:
        name = self.path.rpartition(".")[2]
        for caller in self.called_by:
            module, _, qualname = caller.partition(":")
            try:
                func: object = import_module(module)
                for part in qualname.split("."):
                    func = inspect.getattr_static(func, part)
            except Exception:  # the caller itself is gone: the point is not on the compiler's path
                return f"{self} (its caller {module}.{qualname} is missing)"
            code = getattr(func, "__code__", None)
            if not isinstance(code, CodeType) or not _names(code, name):
                return f"{self} (not called by {module}.{qualname}: a leftover or renamed point)"
        return None


def _plain(param: inspect.Parameter) -> bool:
    """Whether ``param`` is an ordinary positional-or-keyword parameter."""
    return param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


def _listed(params: list[inspect.Parameter]) -> str:
    """The parameters as a signature writes them (a ``*`` before keyword-only ones)."""
    return str(inspect.Signature(params))[1:-1]


def _names(code: CodeType, name: str) -> bool:
    """Whether ``code`` (or a function nested in it) looks ``name`` up."""
    if name in code.co_names:
        return True
    return any(isinstance(const, CodeType) and _names(const, name) for const in code.co_consts)

"""Value types of the registry: codegens, hooks, their provenance and callables."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import FrozenInstanceError, dataclass  # dataclasses: TVM imports it anyway
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    from tvm.ir import IRModule
    from tvm.runtime import Module
    from tvm.target import Target

__all__ = [
    "CODE_ORIGIN",
    "Frozen",
    "HostCodegen",
    "HostCodegenFunc",
    "HostCodegenHook",
    "HostCodegenHookFunc",
    "Origin",
    "SourceState",
    "TargetPredicate",
    "Verdict",
    "init_fields",
]

HostCodegenFunc: TypeAlias = Callable[["IRModule", "Target"], "Module"]
"""Build a host ``IRModule`` for a host ``Target`` into a runtime ``Module``."""

HostCodegenHookFunc: TypeAlias = Callable[["IRModule", "Target", "Target"], "IRModule"]
"""Prepare a host ``IRModule`` given ``(mod, target_host, target)``; returns the module."""

TargetPredicate: TypeAlias = Callable[["Target"], bool]
"""Decide whether a codegen or hook serves a given target."""

SourceState = Literal["lazy", "loading", "loaded", "broken", "disabled", "incompatible"]
"""The state of a lazy source: not imported yet (or failed transiently), being imported,
loaded, failed, skipped by a control, or not compatible with the installed versions."""

Verdict = Literal["match", "no-match", "raised", "not-bool", "missing-build"]
"""A candidate's verdict for a target: it serves; its predicate returned ``False``, raised,
or returned something other than a bool; its TVM build function is missing."""

# ------------------------------------------------------------------ internal records
# ``@dataclass(frozen=True, slots=True)`` generates and compiles six or more methods per
# class when its module is imported (about 0.5 ms each here, on the first-use path of
# every process). The internal records derive from Frozen instead: a ``__slots__``
# class whose fields are its ``__slots__``, in order, that behaves as a frozen
# dataclass: equality and hashing over the compared fields (same class only), a
# ``Name(field=value, ...)`` repr, ``FrozenInstanceError`` on assignment, pickling.
# Each subclass writes its own ``__init__`` (type-checked) and sets its fields with
# init_fields(). The public HostCodegen and HostCodegenHook stay dataclasses, as
# TileLang's are.

_set = object.__setattr__


def init_fields(record: Frozen, *values: object) -> None:
    """Set the fields of a freshly made ``record`` to ``values``, in ``__slots__`` order."""
    for name, value in zip(type(record).__slots__, values, strict=True):
        _set(record, name, value)


class Frozen:
    """Base of the internal immutable records (see the comment above).

    ``_compare`` names the fields that equality and hashing use (default: all).
    """

    __slots__: tuple[str, ...] = ()
    _compare: tuple[str, ...] | None = None

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in (self._compare or self.__slots__))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Frozen)
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


def _check_fields(cls_name: str, name: object, func: object, func_field: str, priority: object,
                  supports_target: object) -> None:
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"{cls_name}.name must be a non-empty string, got {name!r}")
    if not callable(func):
        raise TypeError(f"{cls_name}.{func_field} must be callable, got {func!r}")
    if supports_target is not None and not callable(supports_target):
        raise TypeError(f"{cls_name}.supports_target must be callable or None, got {supports_target!r}")
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise TypeError(f"{cls_name}.priority must be an int, got {priority!r}")


@dataclass(frozen=True, slots=True)
class HostCodegen:
    """A host code generator for one host target variant.

    ``build(mod, target_host)`` produces the runtime module. ``supports_target``
    narrows the variant to some targets of its kind (``None``: all of them).
    Among matching codegens of one kind the highest ``priority`` wins.
    Bad field values raise ``TypeError`` at construction.
    """

    name: str
    build: HostCodegenFunc
    supports_target: TargetPredicate | None = None
    priority: int = 0

    def __post_init__(self) -> None:
        _check_fields("HostCodegen", self.name, self.build, "build", self.priority,
                      self.supports_target)

    def matches(self, target_host: Target) -> bool:
        """Whether this codegen serves ``target_host``."""
        return self.supports_target is None or bool(self.supports_target(target_host))

    def lower(self, mod: IRModule, target_host: Target) -> Module:
        """Build ``mod`` for ``target_host``."""
        return self.build(mod, target_host)


@dataclass(frozen=True, slots=True)
class HostCodegenHook:
    """A device backend's preparation of the host module before host codegen.

    ``apply(mod, target_host, target)`` returns the (possibly new) host module.
    Hooks of one device kind run by ``priority``, highest first, then in
    registration order. Bad field values raise ``TypeError`` at construction.
    """

    name: str
    apply: HostCodegenHookFunc
    supports_target: TargetPredicate | None = None
    priority: int = 0

    def __post_init__(self) -> None:
        _check_fields("HostCodegenHook", self.name, self.apply, "apply", self.priority,
                      self.supports_target)

    def matches(self, target: Target) -> bool:
        """Whether this hook applies to the device ``target``."""
        return self.supports_target is None or bool(self.supports_target(target))

    def lower(self, mod: IRModule, target_host: Target, target: Target) -> IRModule:
        """Apply the hook to ``mod``."""
        return self.apply(mod, target_host, target)


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a registration came from (immutable).

    ``distribution`` is ``None`` for a registration made in code. ``entry_point``
    is written ``kind = value``; ``group`` is the entry-point group.
    """

    distribution: str | None = None
    version: str | None = None
    group: str | None = None
    entry_point: str | None = None

    def describe(self) -> str:
        """One human-readable phrase, e.g. ``distribution 'x' 1.0, entry point 'k = m'``."""
        if self.distribution is None:
            if self.entry_point is None:
                return "registered in code"
            return f"lazy module registered in code ({self.entry_point})"
        text = f"distribution {self.distribution!r} {self.version or '?'}"
        if self.entry_point is not None:
            text += f", entry point '{self.entry_point}' in group {self.group!r}"
        return text


CODE_ORIGIN = Origin()
"""The origin of a registration made in code."""

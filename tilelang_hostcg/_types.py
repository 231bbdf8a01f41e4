"""Value types of the registry: codegens, hooks, their provenance and callables."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ._record import Record, init_fields

TYPE_CHECKING = False  # typing costs import time on the first-use path; checkers read True
if TYPE_CHECKING:
    from typing import TypeAlias

    from tvm.ir import IRModule
    from tvm.runtime import Module
    from tvm.target import Target

    from ._hooktype import HostCodegenHook

__all__ = [
    "CODE_ORIGIN",
    "CODEGEN_GROUP",
    "HOOK_GROUP",
    "HostCodegen",
    "HostCodegenFunc",
    "HostCodegenHook",
    "HostCodegenHookFunc",
    "Origin",
    "TargetPredicate",
]

HostCodegenFunc: TypeAlias = Callable[["IRModule", "Target"], "Module"]
"""Build a host ``IRModule`` for a host ``Target`` into a runtime ``Module``."""

HostCodegenHookFunc: TypeAlias = Callable[["IRModule", "Target", "Target"], "IRModule"]
"""Prepare a host ``IRModule`` given ``(mod, target_host, target)``; returns the module."""

TargetPredicate: TypeAlias = Callable[["Target"], bool]
"""Decide whether a codegen or hook serves a given target."""

CODEGEN_GROUP = "tilelang.host_codegen"
HOOK_GROUP = "tilelang.host_codegen_hooks"


def __getattr__(name: str) -> object:
    # HostCodegenHook is defined in ._hooktype, imported when first asked for: resolving
    # a host codegen never needs it, and generating a dataclass costs most of a millisecond.
    if name != "HostCodegenHook":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ._hooktype import HostCodegenHook

    globals()[name] = HostCodegenHook  # later lookups skip this function
    return HostCodegenHook


def hook_type() -> type[HostCodegenHook]:
    """:class:`HostCodegenHook`, importing its module on first use."""
    from ._hooktype import HostCodegenHook

    return HostCodegenHook


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


class Origin(Record):
    """Where a registration came from (immutable).

    ``distribution`` is ``None`` for a registration made in code. ``entry_point``
    is written ``kind = value``; ``group`` is the entry-point group.
    """

    __slots__ = (  # noqa: RUF023  # fields in order
        "distribution", "version", "group", "entry_point",
    )
    distribution: str | None
    version: str | None
    group: str | None
    entry_point: str | None

    def __init__(self, distribution: str | None = None, version: str | None = None,
                 group: str | None = None, entry_point: str | None = None) -> None:
        init_fields(self, distribution, version, group, entry_point)

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

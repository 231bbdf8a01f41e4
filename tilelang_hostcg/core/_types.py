"""Value types of the registry: codegens, hooks, their provenance and callables; the TVM in use, described."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeAlias

from ._names import APACHE_TVM, TILELANG

if TYPE_CHECKING:
    from tvm.ir import IRModule
    from tvm.runtime import Module
    from tvm.target import Target

    TargetLike: TypeAlias = Target | str | dict[str, Any]  # a Target, kind name, dict or JSON text

HostCodegenFunc: TypeAlias = Callable[["IRModule", "Target"], "Module"]
"""Build a host ``IRModule`` for a host ``Target`` into a runtime ``Module``."""

HostCodegenHookFunc: TypeAlias = Callable[["IRModule", "Target", "Target"], "IRModule"]
"""Prepare a host ``IRModule`` given ``(mod, target_host, target)``; returns the module."""

TargetPredicate: TypeAlias = Callable[["Target"], bool]
"""Decide whether a codegen or hook serves a given target."""


Verdict = Literal["match", "no-match", "raised", "not-bool", "missing-build"]  # of a candidate for a target


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
    """A host code generator: ``build(mod, target_host)``, narrowed by ``supports_target``; the highest
    ``priority`` among matches wins. ``global_funcs``: TVM global functions ``build`` calls unseen."""

    name: str
    build: HostCodegenFunc
    supports_target: TargetPredicate | None = None
    priority: int = 0
    _: KW_ONLY
    global_funcs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_fields("HostCodegen", self.name, self.build, "build", self.priority, self.supports_target)
        funcs = self.global_funcs
        if isinstance(funcs, str) or not isinstance(funcs, Iterable):
            raise TypeError(f"HostCodegen.global_funcs must be a sequence of TVM global function names, "
                            f"such as ('target.build.llvm',), got {funcs!r}")
        names = tuple(funcs)
        bad = [n for n in names if not isinstance(n, str) or not n.strip()]
        if bad:
            raise TypeError(f"HostCodegen.global_funcs must hold non-empty strings, got {bad[0]!r}")
        object.__setattr__(self, "global_funcs", names)

    def matches(self, target_host: Target) -> bool:
        """Whether this codegen serves ``target_host``."""
        return self.supports_target is None or bool(self.supports_target(target_host))

    def lower(self, mod: IRModule, target_host: Target) -> Module:
        """Build ``mod`` for ``target_host``."""
        return self.build(mod, target_host)


@dataclass(frozen=True, slots=True)
class HostCodegenHook:
    """A device backend's preparation of the host module, ``apply(mod, target_host, target)``, by ``priority``."""

    name: str
    apply: HostCodegenHookFunc
    supports_target: TargetPredicate | None = None
    priority: int = 0

    def __post_init__(self) -> None:
        _check_fields("HostCodegenHook", self.name, self.apply, "apply", self.priority, self.supports_target)

    def matches(self, target: Target) -> bool:
        """Whether this hook applies to the device ``target``."""
        return self.supports_target is None or bool(self.supports_target(target))

    def lower(self, mod: IRModule, target_host: Target, target: Target) -> IRModule:
        """Apply the hook to ``mod``."""
        return self.apply(mod, target_host, target)


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a registration came from (``distribution`` ``None``: made in code; ``entry_point``: ``kind = value``)."""

    distribution: str | None = None
    version: str | None = None
    group: str | None = None
    entry_point: str | None = None

    @property
    def in_code(self) -> bool:
        """Whether the registration was made in code (any ``origin=``), not by an entry point."""
        return self.distribution is None or self.group is None

    def describe(self) -> str:
        """One phrase, e.g. ``distribution 'x' 1.0, entry point 'k = m' in group 'g'``."""
        if self.distribution is None:
            if self.entry_point is None:
                return "registered in code"
            return f"lazy module registered in code ({self.entry_point})"
        text = f"distribution {self.distribution!r} {self.version or '?'}"
        if self.entry_point is not None:
            text += f", entry point '{self.entry_point}' in group {self.group!r}"
        return text


CODE_ORIGIN = Origin()  # the origin of a registration made in code


class TVMInfo(NamedTuple):
    """Which TVM is in use: its ``provider`` (``apache-tvm``: a TVM of its own; ``tilelang``: the TVM
    a TileLang bundles), the ``distribution`` whose files hold it (``None``: a source tree at
    ``tree``) and its version, TVM's ``version``, and its capabilities."""

    provider: str
    provider_version: str | None
    version: str
    path: str
    llvm: bool
    cuda_host: bool
    tir_module: str
    distribution: str | None = None
    tree: str | None = None

    def describe(self) -> str:
        """One phrase, e.g. ``apache-tvm 0.27.0``, ``TVM 0.25.dev0 bundled with tilelang 0.1.15``."""
        if self.distribution is None:
            source = f"a source tree at {self.tree}"
        else:
            source = f"{self.distribution} {self.provider_version or '?'}"
        if self.provider == TILELANG:
            bundled = source if self.distribution is not None else f"TileLang from {source}"
            return f"TVM {self.version} bundled with {bundled}"
        if self.distribution == APACHE_TVM:
            return f"{APACHE_TVM} {self.provider_version or self.version}"
        return f"TVM {self.version} from {source}"

"""The public :class:`HostCodegenHook` record, in a module of its own.

It belongs to :mod:`._types` (its ``__module__``, and where it is imported from); it is
defined here so that the first use of a host codegen, which needs no hook, does not pay
for generating the dataclass. ``_types`` imports this module when the name is first
asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._types import HostCodegenHookFunc, TargetPredicate, _check_fields

TYPE_CHECKING = False  # typing costs import time; type checkers treat this name as True
if TYPE_CHECKING:
    from tvm.ir import IRModule
    from tvm.target import Target

__all__ = ["HostCodegenHook"]


@dataclass(frozen=True, slots=True)
class HostCodegenHook:
    """A device backend's preparation of the host module before host codegen.

    ``apply(mod, target_host, target)`` returns the (possibly new) host module.
    Hooks of one device kind run by ``priority``, highest first, then in
    registration order. Bad field values raise ``TypeError`` at construction.
    """

    __module__ = "tilelang_hostcg._types"  # where it is documented and imported from

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

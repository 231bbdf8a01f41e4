"""Build callbacks backed by TVM global functions (``target.build.*``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._errors import MissingGlobalFuncError
from ._tvm import describe_tvm, get_global_func

if TYPE_CHECKING:
    from tvm.ir import IRModule
    from tvm.target import Target

__all__ = ["GlobalFuncBuild", "global_func_host_codegen", "required_global_func"]


class GlobalFuncBuild:
    """A ``HostCodegenFunc`` calling TVM's global function ``global_func_name``, looked up at
    every call as in TileLang (a later ``register_global_func(..., override=True)`` counts).
    Creating one imports no TVM; :meth:`exists` checks the function without building."""

    __slots__ = ("global_func_name",)

    def __init__(self, global_func_name: str) -> None:
        if not isinstance(global_func_name, str) or not global_func_name:
            raise TypeError(f"global_func_name must be a non-empty string, got {global_func_name!r}")
        self.global_func_name = global_func_name

    def lookup(self) -> Any:
        """The TVM function; raises :class:`MissingGlobalFuncError` naming it and the TVM in use."""
        func = get_global_func(self.global_func_name)
        if func is None:
            raise MissingGlobalFuncError(
                f"TVM global function {self.global_func_name!r} is not registered in the TVM in "
                f"use ({describe_tvm()}); install a TVM build that provides it, or choose a host "
                "codegen whose build function exists (see `tilelang-hostcg check`)",
                global_func_name=self.global_func_name)
        return func

    def exists(self) -> bool:
        """Whether the TVM in use provides the function."""
        return get_global_func(self.global_func_name) is not None

    def __call__(self, mod: IRModule, target_host: Target) -> Any:
        return self.lookup()(mod, target_host)

    def __repr__(self) -> str:
        return f"global_func_host_codegen({self.global_func_name!r})"


def global_func_host_codegen(global_func_name: str) -> GlobalFuncBuild:
    """A build callback calling the TVM global function ``global_func_name`` when invoked."""
    return GlobalFuncBuild(global_func_name)


def required_global_func(build: object) -> str | None:
    """The TVM global function a codegen's ``build`` needs, when it is known."""
    return build.global_func_name if isinstance(build, GlobalFuncBuild) else None

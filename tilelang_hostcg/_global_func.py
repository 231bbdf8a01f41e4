"""Build callbacks backed by TVM global functions (``target.build.*``)."""

from __future__ import annotations

from ._errors import HostCodegenError

TYPE_CHECKING = False  # typing costs import time on the first-use path; checkers read True
if TYPE_CHECKING:
    from typing import Any

    from tvm.ir import IRModule
    from tvm.target import Target

__all__ = ["GlobalFuncBuild", "MissingGlobalFuncError", "global_func_host_codegen"]


class MissingGlobalFuncError(HostCodegenError):
    """The TVM global function behind a codegen is not in the installed TVM."""

    def __init__(self, message: str, *, global_func_name: str) -> None:
        super().__init__(message)
        self.global_func_name = global_func_name


def _tvm_version() -> str:
    try:
        import tvm

        return f"apache-tvm {tvm.__version__}"
    except ImportError:
        return "no apache-tvm installed"


class GlobalFuncBuild:
    """A ``HostCodegenFunc`` that calls the TVM global function ``global_func_name``.

    The function is looked up on first call (and cached), so creating one costs
    nothing and does not import TVM. :meth:`exists` checks it without building.
    """

    __slots__ = ("_func", "global_func_name")

    def __init__(self, global_func_name: str) -> None:
        if not isinstance(global_func_name, str) or not global_func_name:
            raise TypeError(f"global_func_name must be a non-empty string, got {global_func_name!r}")
        self.global_func_name = global_func_name
        self._func: Any = None

    def lookup(self) -> Any:
        """The TVM function; raises :class:`MissingGlobalFuncError` naming it and TVM's version."""
        if self._func is None:
            import tvm

            func = tvm.get_global_func(self.global_func_name, allow_missing=True)
            if func is None:
                raise MissingGlobalFuncError(
                    f"TVM global function {self.global_func_name!r} is not registered in the "
                    f"installed TVM ({_tvm_version()}); install a TVM build that provides it, or "
                    "choose a host codegen whose build function exists (tilelang-hostcg check)",
                    global_func_name=self.global_func_name)
            self._func = func
        return self._func

    def exists(self) -> bool:
        """Whether the installed TVM provides the function."""
        try:
            self.lookup()
        except MissingGlobalFuncError:
            return False
        return True

    def __call__(self, mod: IRModule, target_host: Target) -> Any:
        func = self._func if self._func is not None else self.lookup()
        return func(mod, target_host)

    def __repr__(self) -> str:
        return f"global_func_host_codegen({self.global_func_name!r})"


def global_func_host_codegen(global_func_name: str) -> GlobalFuncBuild:
    """A build callback calling the TVM global function ``global_func_name`` when invoked."""
    return GlobalFuncBuild(global_func_name)

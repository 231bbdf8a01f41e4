"""Which Apache TVM the integration supports, and whether TVM's function is still TVM's own.

Nothing here imports TVM or ``packaging``: it runs at the end of ``import tvm``, and reads
what that import has already put in ``sys.modules``."""

from __future__ import annotations

from types import FunctionType, ModuleType
from typing import Any

from .._errors import HostCodegenError

__all__ = ["BUILD_MODULE", "DEFAULT_PREFIX", "FUNCTION", "KINDS", "SUPPORTED", "UnsupportedTVMError", "check",
           "is_tvms_own"]

SUPPORTED = ">=0.27,<0.28"
"""The apache-tvm releases the integration supports (PEP 440), as the ``[tvm]`` extra."""

BUILD_MODULE = "tvm.tirx.build"
FUNCTION = "tir_to_runtime"
"""The one function of TVM the integration replaces: every TIR build passes through it."""

DEFAULT_PREFIX = "apache-tvm-"
"""Names of TVM's own codegens in the registry: ``apache-tvm-<kind>``."""

KINDS = ("llvm", "c", "cuda_host")
"""The host kinds whose TVM build function (``target.build.<kind>``) is registered as a default
at the first build; another host kind's is registered when it is first built."""


class UnsupportedTVMError(HostCodegenError):
    """The TVM in use cannot be routed: another version than :data:`SUPPORTED`, no
    ``tvm.tirx.build.tir_to_runtime``, or one already replaced by another package."""


def supported_version(version: str) -> bool:
    """Whether TVM's ``__version__`` is of the 0.27 line (``0.27.0``, ``0.27.1.dev3``, ...)."""
    return version.split(".")[:2] == ["0", "27"]


def is_tvms_own(func: Any, module: ModuleType) -> bool:
    """Whether ``func`` is the ``tir_to_runtime`` defined in TVM's ``module`` (not a wrapper
    that copies its name, as ``functools.wraps`` does)."""
    code = getattr(func, "__code__", None)
    return (type(func) is FunctionType and code is not None and code.co_name == FUNCTION
            and code.co_filename == getattr(module, "__file__", None)
            and getattr(func, "__wrapped__", None) is None)


def check(tvm: ModuleType, module: ModuleType | None) -> Any:
    """TVM's own ``tir_to_runtime`` of ``module`` (``tvm.tirx.build``); raises
    :class:`UnsupportedTVMError` naming what was found for another TVM version, a missing
    module or function, or a function another package already replaced."""
    version = str(getattr(tvm, "__version__", "?"))
    where = getattr(tvm, "__file__", None) or "?"
    if not supported_version(version):
        raise UnsupportedTVMError(f"TVM {version} (at {where!r}) is not supported by "
                                  f"tilelang_hostcg.tvm (apache-tvm{SUPPORTED})")
    func = getattr(module, FUNCTION, None) if module is not None else None
    if func is None:
        raise UnsupportedTVMError(f"TVM {version} (at {where!r}) has no {BUILD_MODULE}.{FUNCTION}")
    if not is_tvms_own(func, module):  # type: ignore[arg-type]
        owner = getattr(func, "__module__", None) or type(func).__name__
        raise UnsupportedTVMError(
            f"{BUILD_MODULE}.{FUNCTION} was already replaced by another package ({owner!r}: "
            f"{func!r}); it is left alone")
    return func

"""apache-tvm's integration points (:data:`POINTS`, the table of ``docs/tvm.md``), checked by shape
(what TVM's callers can call, as they call it) whatever the version; whether TVM's build still calls
the route is shown by a build (:mod:`tilelang_hostcg.clients._probe`). Nothing here imports ``packaging``:
it runs at the end of ``import tvm``."""

from __future__ import annotations

import sys
from importlib import import_module
from types import FunctionType, ModuleType
from typing import Any

from ..clients import Point, owner_of
from ..core import UnsupportedTVMError

BUILD_MODULE = "tvm.tirx.build"
FUNCTION = "tir_to_runtime"  # the one function of TVM replaced: every TIR build passes through it
BUILD_PACKAGE, BUILD_FUNCTION = "tvm.tirx", "build"  # TVM's TIR build, which tvm.compile calls: watched, not required
POINTS = (Point(BUILD_MODULE, FUNCTION, ("host_mod", "device_mod_dict", "target_host"), (f"{BUILD_MODULE}:build",)),
          Point(BUILD_MODULE, "codegen_build", ("mod", "target")),  # the route calls it
          Point("tvm.backend._autoload_backends", "_autoload_backends", ()))  # the last for activation only
EXTENSION_NAMES = ("HOST_CODEGEN_FUNC", "HOST_CODEGEN_HOOK_FUNC")
"""TVM's own host-codegen extension point: the attributes of :data:`BUILD_MODULE` naming the global
functions ``tir_to_runtime`` looks up (:mod:`._provider` registers its adapter under them)."""
DEFAULT_PREFIX = "apache-tvm-"
"""Names of TVM's own codegens in the registry: ``apache-tvm-<kind>``."""
KINDS = ("llvm", "c", "cuda_host")
"""The host kinds whose ``target.build.<kind>`` is a default from the first build (another kind's: when built)."""


def extension_point_names() -> tuple[str, str] | None:
    """The global function names the imported TVM's build looks up (:data:`EXTENSION_NAMES`), where
    it has its own host-codegen extension point; ``None`` where it has none (or is not imported)."""
    module = sys.modules.get(BUILD_MODULE)
    codegen, hook = (getattr(module, name, None) for name in EXTENSION_NAMES)
    if isinstance(codegen, str) and isinstance(hook, str) and codegen and hook:
        return codegen, hook
    return None


def is_tvms_own(func: Any, module: ModuleType) -> bool:
    """Whether ``func`` is the ``tir_to_runtime`` defined in ``module`` (not a wrapper copying its name)."""
    code = getattr(func, "__code__", None)
    return (type(func) is FunctionType and code is not None and code.co_name == FUNCTION
            and code.co_filename == getattr(module, "__file__", None)
            and getattr(func, "__wrapped__", None) is None)


def check(tvm: ModuleType, *, activation: bool = False) -> Any:
    """TVM's own ``tir_to_runtime``; raises :class:`UnsupportedTVMError` naming a missing point (the
    autoload too, with ``activation``) or the package that replaced it (also a wrapper of our route)."""
    where = f"{getattr(tvm, '__version__', '?')} (at {getattr(tvm, '__file__', None) or '?'!r})"
    missing = [p for p in (point.problem() for point in POINTS[:3 if activation else 2]) if p is not None]
    if missing:
        raise UnsupportedTVMError(f"TVM {where} lacks {'; '.join(missing)}, which tilelang_hostcg.tvm relies on "
                                  "(docs/tvm.md lists them); tilelang_hostcg.build() still works with it")
    module = import_module(BUILD_MODULE)
    func = getattr(module, FUNCTION)
    if is_tvms_own(func, module):
        return func
    raise UnsupportedTVMError(f"{BUILD_MODULE}.{FUNCTION} was already replaced by another package "
                              f"({owner_of(func)}); it is left alone")

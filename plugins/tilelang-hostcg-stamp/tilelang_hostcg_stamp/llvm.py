"""The ``stamp_llvm`` host codegen; importing this module registers it.

Advertised as ``llvm = tilelang_hostcg_stamp.llvm``: an ``llvm`` host (apache-tvm's
default) gets the function :data:`~tilelang_hostcg_stamp.CODEGEN_SYMBOL`, then TVM's
``target.build.llvm`` builds the module. It matches only where the TVM in use has LLVM
(TileLang's bundled TVM has none), so elsewhere the other ``llvm`` codegens serve.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import tilelang_hostcg
from tilelang_hostcg import HostCodegen, HostCodegenError

from . import CODEGEN_SYMBOL, add_stamp

if TYPE_CHECKING:
    from tvm.target import Target

__all__ = ["STAMP_LLVM_CODEGEN", "build_stamped_llvm", "has_llvm"]

BASE_FUNCTION = "target.build.llvm"


def has_llvm(target_host: Target) -> bool:
    """Whether the TVM in use can build LLVM host code."""
    import tvm

    return tvm.get_global_func(BASE_FUNCTION, allow_missing=True) is not None


def build_stamped_llvm(mod: Any, target_host: Target) -> Any:
    """Add :data:`~tilelang_hostcg_stamp.CODEGEN_SYMBOL` to ``mod`` and build it with LLVM."""
    import tvm

    build = tvm.get_global_func(BASE_FUNCTION, allow_missing=True)
    if build is None:
        raise HostCodegenError(f"the TVM in use has no {BASE_FUNCTION}; tilelang-hostcg-stamp's llvm "
                               "codegen needs apache-tvm 0.27 (pip install tilelang-hostcg-stamp[tvm])")
    return build(add_stamp(mod, target_host, CODEGEN_SYMBOL), target_host)


STAMP_LLVM_CODEGEN = HostCodegen("stamp_llvm", build_stamped_llvm, has_llvm, priority=10)
"""LLVM host code with the stamp function."""

tilelang_hostcg.register_host_codegen("llvm", STAMP_LLVM_CODEGEN)

"""The core's own host codegens, TVM's ``llvm`` and ``c``, advertised through entry points like a plugin's."""

from __future__ import annotations

from .core import HostCodegen
from .environment import global_func_host_codegen

__all__ = ["C_HOST_CODEGEN", "LLVM_HOST_CODEGEN"]

LLVM_HOST_CODEGEN = HostCodegen("llvm", global_func_host_codegen("target.build.llvm"))
"""Host code through LLVM (``target.build.llvm``)."""

C_HOST_CODEGEN = HostCodegen("c", global_func_host_codegen("target.build.c"))
"""Host code as C source (``target.build.c``); ``export_library`` compiles it."""

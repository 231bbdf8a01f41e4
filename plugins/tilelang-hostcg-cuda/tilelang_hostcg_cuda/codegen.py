"""The ``cuda_host`` host codegen; importing this module registers it.

Advertised as ``cuda_host = tilelang_hostcg_cuda.codegen`` (the module form of an
entry point): ``tilelang_hostcg`` imports it the first time a ``cuda_host`` host is
resolved, and the registration below lands in the registry doing the import.

TVM's ``target.build.cuda_host`` emits C++ host wrappers that check arguments and
launch the CUDA kernels with ``cudaLaunchKernelEx``; the built module is a source
module whose CUDA device imports keep their CUDA C++ source, so
``tvm.backend.cuda.export_cuda_host`` can bundle everything into one translation
unit (compile it with :func:`tilelang_hostcg_cuda.export_cuda_host_library`).
"""

from __future__ import annotations

import tilelang_hostcg
from tilelang_hostcg import HostCodegen, global_func_host_codegen

__all__ = ["CUDA_HOST_CODEGEN"]

CUDA_HOST_CODEGEN = HostCodegen("cuda_host", global_func_host_codegen("target.build.cuda_host"))
"""Host code for ``cuda_host`` targets through TVM's ``target.build.cuda_host``."""

tilelang_hostcg.register_host_codegen("cuda_host", CUDA_HOST_CODEGEN)

"""CUDA support for tilelang-hostcg: the ``cuda_host`` host codegen and ``cuda`` hooks.

The distribution advertises two entry points, loaded by ``tilelang_hostcg`` when their
kind is first used:

- ``tilelang.host_codegen``: ``cuda_host = tilelang_hostcg_cuda.codegen`` (TVM's
  ``target.build.cuda_host``: C++ host wrappers that launch CUDA kernels directly);
- ``tilelang.host_codegen_hooks``: ``cuda`` and ``nvptx`` (host/device pairing checks,
  and for ``cuda_host`` hosts the compile requirements recorded on the host module).

Importing this package registers nothing and imports neither TVM nor the hooks;
the names below load on first access. :func:`export_cuda_host_library` turns a
module built for a ``cuda_host`` host into a shared library with ``nvcc``.
"""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False  # typing costs import time; type checkers treat this name as True

if TYPE_CHECKING:
    from ._errors import CudaArchError, CudaCompileError, IncompatibleHostError, NvccNotFoundError
    from ._library import export_cuda_host_library, find_nvcc
    from ._requirements import (
        REQUIREMENTS_ATTR,
        CudaHostRequirements,
        cuda_host_requirements,
        normalize_arch,
    )

__all__ = [
    "REQUIREMENTS_ATTR",
    "CudaArchError",
    "CudaCompileError",
    "CudaHostRequirements",
    "IncompatibleHostError",
    "NvccNotFoundError",
    "__version__",
    "cuda_host_requirements",
    "export_cuda_host_library",
    "find_nvcc",
    "normalize_arch",
]

_WHERE = {
    "_errors": ("CudaArchError", "CudaCompileError", "IncompatibleHostError", "NvccNotFoundError"),
    "_library": ("export_cuda_host_library", "find_nvcc"),
    "_requirements": ("REQUIREMENTS_ATTR", "CudaHostRequirements", "cuda_host_requirements",
                      "normalize_arch"),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'tilelang_hostcg_cuda' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

"""Compile the translation unit of a ``cuda_host`` build into a loadable shared library."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._errors import CudaArchError, CudaCompileError, NvccNotFoundError
from ._requirements import CudaHostRequirements, normalize_arch

if TYPE_CHECKING:
    from tvm_ffi import Module

__all__ = ["export_cuda_host_library", "find_nvcc"]

_NVCC_HINT = ("install the CUDA Toolkit (it provides nvcc), then put its bin/ folder on PATH, "
              "set CUDA_HOME (or CUDA_PATH) to the toolkit's root, or pass nvcc='/path/to/nvcc'")
_OUTPUT_TAIL = 40  # lines of nvcc output quoted in a CudaCompileError


def find_nvcc(nvcc: str | os.PathLike[str] | None = None) -> str:
    """The ``nvcc`` to run: ``nvcc`` if given (a path or a command on ``PATH``), else
    ``$CUDA_HOME/bin/nvcc``, ``$CUDA_PATH/bin/nvcc``, ``nvcc`` on ``PATH``, the first that
    exists; the default toolkit ``/usr/local/cuda/bin/nvcc`` last, only when neither
    ``CUDA_HOME`` nor ``CUDA_PATH`` is set (a toolkit named there is never swapped for
    another one).

    Raises :class:`~tilelang_hostcg_cuda.NvccNotFoundError` saying what to install and
    where it looked.
    """
    tried: list[str] = []
    if nvcc is not None:
        found = shutil.which(os.fspath(nvcc))
        if found:
            return found
        raise NvccNotFoundError(f"nvcc {os.fspath(nvcc)!r} (the nvcc argument) is not an "
                                f"executable file; {_NVCC_HINT}", tried=[os.fspath(nvcc)])
    candidates: list[str] = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            candidates.append(os.path.join(root, "bin", "nvcc"))
            tried.append(f"${var}/bin/nvcc ({candidates[-1]})")
    on_path = shutil.which("nvcc")
    if on_path:
        candidates.append(on_path)
    tried.append("nvcc on PATH")
    if not (os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")):
        candidates.append("/usr/local/cuda/bin/nvcc")
        tried.append("/usr/local/cuda/bin/nvcc")
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise NvccNotFoundError(f"nvcc was not found (looked at: {', '.join(tried)}); {_NVCC_HINT}",
                            tried=tried)


def _detect_local_arch() -> str | None:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        proc = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    first = proc.stdout.strip().splitlines()[0].strip() if proc.stdout.strip() else ""
    if proc.returncode != 0 or not first:
        return None
    try:
        return normalize_arch(first)
    except CudaArchError:
        return None


def _resolve_arch(arch: Any) -> str:
    if isinstance(arch, CudaHostRequirements):
        return arch.arch
    if arch is not None and hasattr(arch, "kind") and hasattr(arch, "attrs"):  # a TVM Target
        kind = arch.kind.name
        if kind == "cuda":
            return normalize_arch(str(arch.attrs.get("arch", "")))
        if kind == "nvptx":
            return normalize_arch(str(arch.attrs.get("mcpu", "")))
        raise CudaArchError(f"target of kind {kind!r} carries no CUDA architecture; pass the "
                            "cuda target the module was built for, or arch='sm_XX'", arch=arch)
    if arch is not None:
        return normalize_arch(arch)
    from tvm.target import Target

    current = Target.current(allow_none=True)
    if current is not None and current.kind.name in ("cuda", "nvptx"):
        return _resolve_arch(current)
    detected = _detect_local_arch()
    if detected is None:
        raise CudaArchError("no CUDA architecture given and no GPU found to take it from; pass "
                            "arch='sm_90' (or the cuda Target the module was built for, or the "
                            "requirements the cuda hooks recorded)", arch=None)
    return detected


def _tvm_ffi_paths() -> tuple[list[str], str]:
    from tvm_ffi import libinfo

    includes = [libinfo.find_include_path()]
    dlpack = libinfo.find_dlpack_include_path()
    if os.path.realpath(dlpack) != os.path.realpath(includes[0]):
        includes.append(dlpack)
    return includes, os.path.dirname(libinfo.find_libtvm_ffi())


def export_cuda_host_library(mod: Module, output_path: str | os.PathLike[str], *,
                             arch: Any = None, nvcc: str | os.PathLike[str] | None = None,
                             options: Sequence[str] = (), keep_source: bool = False) -> Path:
    """Compile a module built for a ``cuda_host`` host into a shared library.

    ``mod`` is what ``tilelang_hostcg.build(kernel, Target({"kind": "cuda", "arch":
    "sm_90"}, host="cuda_host"))`` returns. ``tvm.backend.cuda.export_cuda_host`` turns
    it into one CUDA C++ translation unit, compiled with ``nvcc -shared -Xcompiler
    -fPIC -std=c++17 -arch=ARCH`` against tvm-ffi's headers and ``libtvm_ffi`` (plus
    ``libcuda`` when the kernels encode tensor maps). Load the result with
    ``tvm_ffi.load_module(path)``; ``libtvm_ffi`` is found because ``tvm_ffi`` loads it.

    ``arch``: ``"sm_90"`` (or ``"90"``, ``"9.0"``), the cuda ``Target`` the module was
    built for, or a :class:`~tilelang_hostcg_cuda.CudaHostRequirements`; by default the
    architecture of the current cuda target scope, else of the local GPU.
    ``nvcc``: the compiler (see :func:`find_nvcc`). ``options``: extra nvcc arguments.
    ``keep_source``: also write the translation unit next to the library (``.cu``).

    Returns the library's path. Raises :class:`~tilelang_hostcg_cuda.NvccNotFoundError`,
    :class:`~tilelang_hostcg_cuda.CudaArchError`, ``ValueError`` for a module not built
    for ``cuda_host``, and :class:`~tilelang_hostcg_cuda.CudaCompileError` with nvcc's
    output when compiling fails.
    """
    import tvm.backend.cuda
    from tvm_ffi import Module

    if not isinstance(mod, Module):
        raise TypeError(f"export_cuda_host_library expects a built tvm runtime Module, got "
                        f"{type(mod).__name__}")
    if mod.kind != "c" or "cu" not in mod.get_write_formats():
        raise ValueError(
            f"export_cuda_host_library needs a module built for a 'cuda_host' host, e.g. "
            f"tilelang_hostcg.build(kernel, Target({{'kind': 'cuda', 'arch': 'sm_90'}}, "
            f"host='cuda_host')); got a module of kind {mod.kind!r}")
    arch_name = _resolve_arch(arch)
    compiler = find_nvcc(nvcc)
    source = tvm.backend.cuda.export_cuda_host(mod)
    includes, libdir = _tvm_ffi_paths()
    output = Path(output_path).absolute()
    output.parent.mkdir(parents=True, exist_ok=True)
    libraries = ["tvm_ffi"] + (["cuda"] if "cuTensorMapEncode" in source else [])
    with tempfile.TemporaryDirectory(prefix="tilelang-hostcg-cuda-") as tmp:
        source_path = output.with_suffix(".cu") if keep_source else Path(tmp) / "module.cu"
        source_path.write_text(source)
        command = [compiler, "-shared", "-Xcompiler", "-fPIC", "-std=c++17", f"-arch={arch_name}",
                   *(f"-I{path}" for path in includes), f"-L{libdir}",
                   *(f"-l{lib}" for lib in libraries), *options,
                   "-o", str(output), str(source_path)]
        proc = subprocess.run(command, capture_output=True, text=True, cwd=tmp)
    if proc.returncode != 0:
        text = (proc.stdout + proc.stderr).strip()
        tail = "\n".join(text.splitlines()[-_OUTPUT_TAIL:])
        hint = "" if keep_source else " (pass keep_source=True to keep the .cu for a look)"
        raise CudaCompileError(
            f"nvcc failed with exit code {proc.returncode} compiling the cuda_host translation "
            f"unit for {arch_name}{hint}:\n  {' '.join(command)}\n{tail}",
            command=command, returncode=proc.returncode, output=text)
    return output

"""The CUDA plugin at work: a ``cuda_host`` host, the ``cuda`` hooks, one CUDA translation unit.

Needs the plugin installed (``pip install plugins/tilelang-hostcg-cuda``); runs on a
machine without a GPU. With ``nvcc`` available it also compiles the translation unit
into a shared library, loads it and shows the generated wrappers checking their
arguments (``--skip-compile`` leaves that out).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import tvm
import tvm_ffi
from tvm.backend.cuda import export_cuda_host
from tvm.target import Target

import tilelang_hostcg as hostcg

sys.path.insert(0, str(Path(__file__).resolve().parent))  # example_kernels.py, beside this file
from example_kernels import gpu_vector_add

SM90 = {"kind": "cuda", "arch": "sm_90"}


def main(argv: list[str]) -> int:
    try:
        import tilelang_hostcg_cuda as cuda_plugin
    except ImportError:
        print("the CUDA plugin is not installed: pip install plugins/tilelang-hostcg-cuda")
        return 1
    registry = hostcg.default_registry()
    codegen = hostcg.resolve_host_codegen(Target("cuda_host"))
    origin = next(r.origin for r in registry.registrations(kind="cuda_host") if r.obj is codegen)
    print(f"cuda_host codegen {codegen.name!r}: {origin.describe()}")
    print(f"cuda hooks, in order: {[r.name for r in registry.matching_hooks(Target(SM90))]}")

    for host in ("llvm", "c", "cuda_host"):
        module = hostcg.build(gpu_vector_add, Target(SM90, host=host))
        print(f"build for a cuda device with host {host!r}: host module {module.kind!r}, "
              f"device modules {[m.kind for m in module.imports]}")

    prepared = hostcg.apply_host_codegen_hooks(tvm.IRModule({}), Target("cuda_host"), Target(SM90))
    requirements = cuda_plugin.cuda_host_requirements(prepared)
    print(f"requirements recorded on the host module: {requirements}")
    print(f"  nvcc options they imply: {' '.join(requirements.nvcc_options())}")

    try:
        hostcg.build(gpu_vector_add, Target(SM90, host="test"))
    except cuda_plugin.IncompatibleHostError as exc:
        print(f"host 'test' rejected before host codegen:\n  {exc}")

    module = hostcg.build(gpu_vector_add, Target(SM90, host="cuda_host"))
    source = export_cuda_host(module)
    print(f"one CUDA translation unit: {len(source.splitlines())} lines, "
          f"{source.count('__global__ void')} kernel declarations/definitions")
    if "--skip-compile" in argv:
        return 0
    if shutil.which("nvcc") is None:
        print("nvcc not found: skipping the compile (install the CUDA Toolkit to try it)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        library = cuda_plugin.export_cuda_host_library(module, Path(tmp) / "vector_add.so",
                                                       arch=requirements)
        print(f"compiled with nvcc: {library.name}, {library.stat().st_size} bytes")
        func = tvm_ffi.load_module(str(library))["gpu_vector_add"]
        cpu = tvm_ffi.from_dlpack(np.zeros(4, dtype="float32"))
        try:
            func(cpu, cpu, cpu)
        except ValueError as exc:
            print(f"loaded; called with CPU arrays, the wrapper says: {str(exc).splitlines()[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

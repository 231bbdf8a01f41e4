"""Build real kernels' host code through the plugin registry.

Builds a vector-add kernel for an ``llvm`` host (and runs it), for a ``c`` host
(compiles the C with the system compiler and runs it), and a GPU kernel for a ``cuda``
device with an ``llvm`` host; with the CUDA plugin installed, also for the
``cuda_host`` host (one CUDA C++ translation unit). ``tilelang-hostcg list`` shows the
installed plugins; ``examples/quickstart.sh`` sets up an environment and runs both.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import tvm
from tvm.target import Target

import tilelang_hostcg as hostcg

sys.path.insert(0, str(Path(__file__).resolve().parent))  # example_kernels.py, beside this file
from example_kernels import gpu_vector_add, vector_add


def run_on_cpu(module: tvm.runtime.Module, label: str) -> None:
    a = np.arange(16, dtype=np.float32)
    b = np.full(16, 0.5, dtype=np.float32)
    out = tvm.runtime.tensor(np.zeros(16, dtype=np.float32))
    module["vector_add"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), out)
    np.testing.assert_allclose(out.numpy(), a + b)
    print(f"  {label}: ran on the CPU, result correct (first values {out.numpy()[:4]})")


def main() -> int:
    print("Building host code through the registry:")
    for kind in ("llvm", "c"):
        codegen = hostcg.resolve_host_codegen(Target(kind))
        module = hostcg.build(vector_add, kind)
        if kind == "c":
            with tempfile.TemporaryDirectory() as tmp:
                library = Path(tmp) / "vector_add.so"
                module.export_library(str(library))
                run_on_cpu(tvm.runtime.load_module(str(library)), f"host {kind!r} via {codegen.name!r}")
        else:
            run_on_cpu(module, f"host {kind!r} via {codegen.name!r}")
    cuda = Target({"kind": "cuda", "arch": "sm_90"}, host="llvm")
    module = hostcg.build(gpu_vector_add, cuda)
    print(f"  cuda device + llvm host: host module {module.kind!r}, device modules "
          f"{[m.kind for m in module.imports]}")
    cuda_host = Target({"kind": "cuda", "arch": "sm_90"}, host="cuda_host")
    try:
        module = hostcg.build(gpu_vector_add, cuda_host)
    except hostcg.HostCodegenError as exc:
        print(f"  cuda device + cuda_host host: skipped ({exc})")
    else:
        from tvm.backend.cuda import export_cuda_host

        source = export_cuda_host(module)
        print(f"  cuda device + cuda_host host: one CUDA C++ translation unit, {len(source)} characters")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

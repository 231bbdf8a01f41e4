"""On a GPU machine: does TileLang's autotuner serve a kernel tuned with another plugin set?

Tunes a small kernel with ``@tilelang.autotune`` and prints one JSON line: how long the
call took and whether the host code carries the markers of the stamp plugin
(``plugins/tilelang-hostcg-stamp``). Run it twice with one ``TILELANG_CACHE_DIR``, first
without tilelang-hostcg installed, then after ``pip install`` of the core and the stamp
plugin::

    TILELANG_CACHE_DIR=/tmp/at python tilelang_autotune_gpu.py "stock"      # tunes, no stamps
    pip install tilelang_hostcg-*.whl tilelang_hostcg_stamp-*.whl
    TILELANG_CACHE_DIR=/tmp/at python tilelang_autotune_gpu.py "plugin"     # rebuilt: stamps

With the integration, the autotuner's cache key follows the plugin set, so the second
run builds the plugin's host code instead of returning the stock kernel from the cache.
"""

from __future__ import annotations

import json
import sys
import time

import tilelang
import tilelang.language as T
import torch


@tilelang.autotune(configs=[{"threads": 128}, {"threads": 256}], warmup=1, rep=1, timeout=60)
@tilelang.jit(out_idx=[2])
def vadd(N: int = 4096, BLOCK_N: int = 512, threads: int = 128):  # type: ignore[no-untyped-def]
    @T.prim_func
    def kernel(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32),
               C: T.Tensor((N,), T.float32)) -> None:
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=threads) as pid_n:
            a = T.alloc_fragment((BLOCK_N,), T.float32)
            b = T.alloc_fragment((BLOCK_N,), T.float32)
            T.copy(A[pid_n * BLOCK_N], a)
            T.copy(B[pid_n * BLOCK_N], b)
            for i in T.Parallel(BLOCK_N):
                a[i] = a[i] + b[i]
            T.copy(a, C[pid_n * BLOCK_N])
    return kernel


def main() -> None:
    started = time.perf_counter()
    kernel = vadd()
    took = time.perf_counter() - started
    host = kernel.get_host_source() or ""
    x = torch.randn(4096, device="cuda")
    y = torch.randn(4096, device="cuda")
    print(json.dumps({
        "stage": sys.argv[1] if len(sys.argv) > 1 else "",
        "seconds": round(took, 2),
        "correct": bool(torch.allclose(kernel(x, y), x + y)),
        "codegen_stamp": "tilelang_hostcg_stamp_codegen" in host,
        "hook_stamp": "tilelang_hostcg_stamp_hook" in host,
        "tilelang_hostcg_loaded": "tilelang_hostcg" in sys.modules,
    }))


if __name__ == "__main__":
    main()

"""Real TileLang kernels, for scripts run in a TileLang environment (the integration
tests, which start their scripts with this file's text, and
``benchmarks/tilelang_compile.py``). Importable only where TileLang is installed.

No ``from __future__ import annotations``: ``T.prim_func`` reads the annotations as
written.
"""

import tilelang
import tilelang.language as T
from tvm.target import Target

SM80 = {"kind": "cuda", "arch": "sm_80"}


def elementwise(N=1024, block=256, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
    return main


def gemm(M=256, N=256, K=256, bm=128, bn=128, bk=32, dtype="float16", acc="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            As = T.alloc_shared((bm, bk), dtype)
            Bs = T.alloc_shared((bk, bn), dtype)
            Cl = T.alloc_fragment((bm, bn), acc)
            T.clear(Cl)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, k * bk], As)
                T.copy(B[k * bk, bx * bn], Bs)
                T.gemm(As, Bs, Cl)
            T.copy(Cl, C[by * bm, bx * bn])
    return main


def host_source(func):
    """TileLang's host C source for ``func`` on sm_80, built without GPU or nvcc."""
    target = Target(SM80)
    with target:
        return tilelang.lower(func, target=target, enable_host_codegen=True).host_mod.inspect_source()


def integration_points():
    """The attributes through which TileLang resolves host codegens, runs hooks and keys
    its caches of host code (what the integration replaces), as they are now: for 0.1.14+
    ``BackendModule``'s methods, for 0.1.12-0.1.13 ``tilelang.engine.lower``'s functions,
    and ``KernelCache._generate_key`` and ``AutoTuner.generate_cache_key``."""
    from tilelang.autotuner.tuner import AutoTuner
    from tilelang.cache.kernel_cache import KernelCache
    try:
        import tilelang.backend.module as m
        owners = [(m.BackendModule, "get_host_codegen"), (m.BackendModule, "preprocess_host_codegen")]
    except ImportError:
        import importlib
        m = importlib.import_module("tilelang.engine.lower")
        owners = [(m, "resolve_host_codegen"), (m, "apply_host_codegen_hooks")]
    owners += [(KernelCache, "_generate_key"), (AutoTuner, "generate_cache_key")]
    return [o.__dict__[n] if isinstance(o, type) else getattr(o, n) for o, n in owners]

"""Compile time of a real TileLang GEMM with and without ``tilelang_hostcg.tilelang``.

Run in an environment with TileLang 0.1.12-0.1.15 and tilelang-hostcg installed::

    python benchmarks/tilelang_compile.py               # tilelang.lower with host codegen
    python benchmarks/tilelang_compile.py --compile     # tilelang.compile (needs nvcc)

Each round compiles the same GEMM twice, once with stock TileLang and once after
``install()`` (alternating which goes first, to cancel drift); TileLang's kernel cache
is off, so every compile is a full one. Prints the median of each and their ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("TILELANG_DISABLE_CACHE", "1")

import tilelang
import tilelang.language as T
from tvm.target import Target

import tilelang_hostcg.tilelang as integration


def gemm(M: int, N: int, K: int, bm: int = 128, bn: int = 128, bk: int = 32,
         dtype: str = "float16", acc: str = "float32"):
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--arch", default="sm_80")
    parser.add_argument("--compile", action="store_true",
                        help="time tilelang.compile (device code with nvcc) instead of tilelang.lower")
    args = parser.parse_args()
    target = Target({"kind": "cuda", "arch": args.arch})
    func = gemm(args.size, args.size, args.size)

    def once() -> float:
        start = time.perf_counter()
        if args.compile:
            tilelang.compile(func, target={"kind": "cuda", "arch": args.arch},
                             execution_backend="tvm_ffi")
        else:
            with target:
                tilelang.lower(func, target=target, enable_host_codegen=True)
        return time.perf_counter() - start

    integration.install()
    once()  # warm up: plugin modules, TVM's function caches
    integration.uninstall()
    once()
    stock: list[float] = []
    ours: list[float] = []
    for i in range(args.rounds):
        for installed in ((False, True) if i % 2 == 0 else (True, False)):
            if installed:
                integration.install()
                ours.append(once())
                integration.uninstall()
            else:
                stock.append(once())
    s, o = statistics.median(stock), statistics.median(ours)
    what = "tilelang.compile" if args.compile else "tilelang.lower(enable_host_codegen=True)"
    print(f"TileLang {tilelang.__version__}, {what}, GEMM {args.size}^3 fp16, {args.arch}, "
          f"{args.rounds} rounds")
    print(f"{'stock TileLang':>28}: {s * 1e3:9.1f} ms (median)")
    print(f"{'with tilelang_hostcg':>28}: {o * 1e3:9.1f} ms (median)")
    print(f"{'ratio':>28}: {o / s:9.3f}")


if __name__ == "__main__":
    main()

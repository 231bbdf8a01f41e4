"""Compile time of a real TileLang GEMM with and without ``tilelang_hostcg.tilelang``.

Run in an environment with TileLang 0.1.12-0.1.15 and tilelang-hostcg installed::

    python benchmarks/tilelang_compile.py               # tilelang.lower with host codegen
    python benchmarks/tilelang_compile.py --compile     # tilelang.compile (needs nvcc)
    python benchmarks/tilelang_compile.py --json        # one JSON document (bench.py reads it)

Each round compiles the same GEMM twice, once with stock TileLang and once after
``install()`` (alternating which goes first, to cancel drift); TileLang's kernel cache
is off, so every compile is a full one. Prints the median and minimum wall-clock and
CPU times of each, side by side with their ratios (the minimum is the least disturbed by
other load on the machine). Then ``--profile`` compiles (default 3) run with the
integration installed under ``cProfile`` (CPU clock), and the CPU time spent in the
frames of ``tilelang_hostcg``'s own files is reported per compile: the cost of our code,
without what it asks TVM or TileLang to do (an upper bound: the profiler's own overhead
per call is in it).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("TILELANG_DISABLE_CACHE", "1")

import tilelang
from tvm.target import Target

import tilelang_hostcg
import tilelang_hostcg.tilelang as integration

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.tilelang_kernels
from tests.tilelang_kernels import gemm  # the integration tests' GEMM


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--arch", default="sm_80")
    parser.add_argument("--compile", action="store_true",
                        help="time tilelang.compile (device code with nvcc) instead of tilelang.lower")
    parser.add_argument("--profile", type=int, default=3,
                        help="profiled compiles with the integration installed (0: none)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    target = Target({"kind": "cuda", "arch": args.arch})
    func = gemm(args.size, args.size, args.size)

    def once() -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        if args.compile:
            tilelang.compile(func, target={"kind": "cuda", "arch": args.arch},
                             execution_backend="tvm_ffi")
        else:
            with target:
                tilelang.lower(func, target=target, enable_host_codegen=True)
        return time.perf_counter() - wall, time.process_time() - cpu

    integration.install()
    once()  # warm up: plugin modules, TVM's function caches
    integration.uninstall()
    once()
    stock: list[tuple[float, float]] = []
    ours: list[tuple[float, float]] = []
    for i in range(args.rounds):
        for installed in ((False, True) if i % 2 == 0 else (True, False)):
            if installed:
                integration.install()
                ours.append(once())
                integration.uninstall()
            else:
                stock.append(once())
    ours_ms = _our_cpu_ms(once, args.profile) if args.profile else None
    what = "tilelang.compile" if args.compile else "tilelang.lower(enable_host_codegen=True)"
    if args.json:
        print(json.dumps({"tilelang": tilelang.__version__, "what": what, "size": args.size,
                          "rounds": args.rounds, "stock": stock, "ours": ours,
                          "our_cpu_ms_per_compile": ours_ms}))
        return
    print(f"TileLang {tilelang.__version__}, {what}, GEMM {args.size}^3 fp16, {args.arch}, "
          f"{args.rounds} rounds each, alternating")
    print(f"{'':>22} {'stock TileLang':>16} {'with tilelang_hostcg':>22} {'ratio':>7}")
    for label, index, pick in (("median wall time", 0, statistics.median),
                               ("min wall time", 0, min),
                               ("median CPU time", 1, statistics.median),
                               ("min CPU time", 1, min)):
        s = pick(t[index] for t in stock)
        o = pick(t[index] for t in ours)
        print(f"{label:>22} {s * 1e3:13.1f} ms {o * 1e3:19.1f} ms {o / s:7.3f}")
    if ours_ms is not None:
        print(f"CPU time in tilelang_hostcg's own frames (cProfile, {args.profile} compiles): "
              f"{ours_ms:.3f} ms per compile")


def _our_cpu_ms(once: Callable[[], object], compiles: int) -> float:
    """CPU milliseconds per compile spent in frames of ``tilelang_hostcg``'s files."""
    package = os.path.dirname(os.path.abspath(tilelang_hostcg.__file__))
    profile = cProfile.Profile(time.process_time)
    integration.install()
    try:
        for _ in range(compiles):
            profile.runcall(once)
    finally:
        integration.uninstall()
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    ours = sum(tottime for (filename, _line, _name), (_cc, _nc, tottime, _ct, _callers)
               in stats.items() if os.path.abspath(filename).startswith(package + os.sep))
    return ours * 1e3 / compiles


if __name__ == "__main__":
    main()

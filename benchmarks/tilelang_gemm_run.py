"""Device side of the TileLang GEMM benchmark: load the exported libraries, check, time.

Runs on a GPU machine with torch and ``apache-tvm-ffi`` (0.1.12, TileLang 0.1.15's pin)
but no TVM and no TileLang. The folder given as argument holds what
``tilelang_gemm_gpu.py`` wrote::

    gemm.json              shapes and the libraries, one per variant (stock, plugin)
    gemm_<variant>.so      the exported TileLang kernels
    lib/libtvm_runtime.so  TileLang's TVM runtime, with its libstub_*.so neighbours

Usage::

    python tilelang_gemm_run.py FOLDER [--warmup 25] [--iters 200]

``libtvm_runtime.so`` is loaded with ``RTLD_GLOBAL`` after ``import tvm_ffi``: it
registers the CUDA module loader that the exported libraries need. Each kernel is
checked against a float32 reference of ``torch.matmul`` and timed with CUDA events
(warm-ups, then the median of single launches, in rounds that alternate the order).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _load_runtime(folder: Path) -> None:
    import tvm_ffi  # noqa: F401  (loads libtvm_ffi.so, which libtvm_runtime.so needs)

    runtime = folder / "lib" / "libtvm_runtime.so"
    if not runtime.is_file():
        sys.exit(f"error: {runtime} is missing: copy TileLang's tilelang/lib/libtvm_runtime.so "
                 "and its libstub_*.so neighbours there (tilelang_gemm_gpu.py --out does)")
    ctypes.CDLL(str(runtime), mode=ctypes.RTLD_GLOBAL)


def _time_ms(fn: Callable[[], Any], warmup: int, iters: int) -> list[float]:
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    pairs = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in pairs]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="folder written by tilelang_gemm_gpu.py --out")
    parser.add_argument("--warmup", type=int, default=25)
    parser.add_argument("--iters", type=int, default=200, help="timed launches per kernel and round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    # Absolute: the loader searches its own path for a library named without a slash
    # ("gemm_stock.so" when the folder is "."), never the current folder.
    args.folder = args.folder.resolve()

    manifest = json.loads((args.folder / "gemm.json").read_text())
    m, n, k = manifest["M"], manifest["N"], manifest["K"]
    import torch
    import tvm_ffi

    _load_runtime(args.folder)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"apache-tvm-ffi {getattr(tvm_ffi, '__version__', '?')}, python {sys.version.split()[0]}")
    print(f"GEMM {m}x{n}x{k}, fp16 inputs, fp32 accumulation, fp16 output; "
          f"compiled by TileLang {manifest.get('tilelang', '?')}")

    torch.manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    ref = torch.matmul(a.float(), b.float())
    a_ffi, b_ffi = tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(b)

    kernels: dict[str, Callable[[], Any]] = {}
    outputs: dict[str, torch.Tensor] = {}
    ok = True
    # fp16 output of a K=4096 dot product of N(0,1) values: |c| ~ 64, fp16 spacing there
    # is 0.03-0.06; the fp32 accumulation order adds far less. rtol 1e-2 + atol 1e-2.
    rtol = atol = 1e-2
    for variant, entry in manifest["variants"].items():
        lib = tvm_ffi.load_module(str(args.folder / entry["library"]))
        func = lib[entry.get("function", "main")]
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        c_ffi = tvm_ffi.from_dlpack(c)
        func(a_ffi, b_ffi, c_ffi)
        torch.cuda.synchronize()
        err = (c.float() - ref).abs()
        good = bool(torch.allclose(c.float(), ref, rtol=rtol, atol=atol))
        ok &= good
        print(f"check {variant:<7} {entry['library']}: max |err| {err.max().item():.4f}, "
              f"mean |err| {err.mean().item():.5f} vs fp32 reference -> {'OK' if good else 'FAIL'} "
              f"(rtol={rtol}, atol={atol})")
        kernels[variant] = (lambda f=func, c_=c_ffi: f(a_ffi, b_ffi, c_))
        outputs[variant] = c
    c_torch = torch.matmul(a, b)
    err = (c_torch.float() - ref).abs()
    print(f"check torch   torch.matmul: max |err| {err.max().item():.4f} vs fp32 reference")
    if len(outputs) > 1:
        first, *rest = outputs.values()
        for name, out in zip(list(outputs)[1:], rest, strict=True):
            same = torch.equal(first, out)
            print(f"check {name} output bit-identical to {next(iter(outputs))}: {same}")
    kernels["torch"] = lambda: torch.matmul(a, b, out=c_torch)

    times: dict[str, list[float]] = {name: [] for name in kernels}
    order = list(kernels)
    for r in range(args.rounds):
        for name in order if r % 2 == 0 else order[::-1]:
            times[name] += _time_ms(kernels[name], args.warmup, args.iters)

    flop = 2.0 * m * n * k
    print(f"\ntiming: {args.rounds} rounds x {args.iters} launches after {args.warmup} warm-ups, CUDA events")
    print(f"{'kernel':<8} {'median ms':>10} {'min ms':>8} {'TFLOP/s':>8}")
    med = {}
    for name, ts in times.items():
        med[name] = statistics.median(ts)
        print(f"{name:<8} {med[name]:>10.4f} {min(ts):>8.4f} {flop / med[name] / 1e9:>8.1f}")
    if "stock" in med and "plugin" in med:
        print(f"kernel time ratio plugin/stock: {med['plugin'] / med['stock']:.4f}")
    for name in med:
        if name != "torch":
            print(f"{name} vs torch: {med['torch'] / med[name]:.3f} of torch's throughput")
    print("correctness:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

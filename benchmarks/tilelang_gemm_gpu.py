"""Compile side of the TileLang GEMM benchmark: stock TileLang against the registry.

Runs in a TileLang 0.1.15 environment (nvcc needed, no GPU) where tilelang-hostcg and a
plugin for TileLang users are pip-installed. It compiles one real TileLang GEMM (fp16,
4096x4096x4096, fp32 accumulation, sm_90a, ``execution_backend="tvm_ffi"``) twice:

- ``stock``: TileLang as shipped (the integration not installed);
- ``plugin``: after ``tilelang_hostcg.tilelang.install()``, so that TileLang's host
  codegen and hooks come through the registry, entry points included. The script checks
  that they did: the codegen and hooks the registry chose for this build belong to the
  plugin's distribution, and the hook's marker is in the host source.

Each kernel is exported (``kernel.adapter.get_exportable_executable().export_library``)
into ``--out`` with a ``gemm.json`` manifest and TileLang's ``libtvm_runtime.so`` (with
its ``libstub_*.so`` neighbours) under ``lib/``: what ``tilelang_gemm_run.py`` needs on
the GPU machine. Then it measures the compile time with and without the integration,
interleaved in one process with TileLang's kernel cache disabled, and prints the
medians and their ratio.

Usage::

    python benchmarks/tilelang_gemm_gpu.py --out FOLDER [--variants stock,plugin] [--reps 7]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

M = N = K = 4096
BLOCK_M, BLOCK_N, BLOCK_K, THREADS, STAGES = 128, 256, 64, 256, 3
TARGET = {"kind": "cuda", "arch": "sm_90a"}
PASS_CONFIGS = {"tl.disable_tma_lower": True, "tl.disable_warp_specialized": True}


def gemm_func() -> Any:
    """The TileLang GEMM: C = A @ B, fp16 in and out, fp32 accumulation."""
    import tilelang.language as T

    dtype, accum = "float16", "float"

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)) -> None:
        with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
            a_shared = T.alloc_shared((BLOCK_M, BLOCK_K), dtype)
            b_shared = T.alloc_shared((BLOCK_K, BLOCK_N), dtype)
            c_local = T.alloc_fragment((BLOCK_M, BLOCK_N), accum)
            T.clear(c_local)
            for ko in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
                T.copy(A[by * BLOCK_M, ko * BLOCK_K], a_shared)
                T.copy(B[ko * BLOCK_K, bx * BLOCK_N], b_shared)
                T.gemm(a_shared, b_shared, c_local)
            T.copy(c_local, C[by * BLOCK_M, bx * BLOCK_N])

    return main


def compile_gemm(func: Any) -> Any:
    import tilelang

    return tilelang.compile(func, target=TARGET, execution_backend="tvm_ffi", pass_configs=PASS_CONFIGS)


def _integration() -> Any | None:
    try:
        from tilelang_hostcg import tilelang as integration
    except ImportError:
        return None
    return integration


def _set_integration(on: bool) -> None:
    integration = _integration()
    if integration is None:
        if on:
            sys.exit("error: tilelang_hostcg.tilelang is not importable: pip install tilelang-hostcg "
                     "(and a plugin for TileLang users) into this TileLang environment")
        return
    if on:
        integration.install()
    else:
        integration.uninstall()


def _build(variant: str, func: Any) -> tuple[Any, float]:
    _set_integration(variant == "plugin")
    start = time.perf_counter()
    kernel = compile_gemm(func)
    return kernel, time.perf_counter() - start


def _copy_runtime(out: Path) -> list[str]:
    """TileLang's TVM runtime and its stub neighbours, which the exported libraries need."""
    import tilelang

    src = Path(tilelang.__file__).resolve().parent / "lib"
    dst = out / "lib"
    dst.mkdir(parents=True, exist_ok=True)
    names = ["libtvm_runtime.so", *sorted(p.name for p in src.glob("libstub_*.so"))]
    for name in names:
        shutil.copy2(src / name, dst / name)
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the libraries and gemm.json")
    parser.add_argument("--variants", default="stock,plugin", help="comma-separated: stock, plugin")
    parser.add_argument("--reps", type=int, default=9, help="timed compilations per variant (0: none)")
    parser.add_argument("--plugin", default="tilelang-hostcg-stamp",
                        help="distribution whose codegen and hook the plugin variant must use")
    args = parser.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    if not set(variants) <= {"stock", "plugin"}:
        parser.error(f"--variants takes stock and/or plugin, not {args.variants!r}")

    import tilelang

    tilelang.disable_cache()  # every compile below is a real one
    args.out.mkdir(parents=True, exist_ok=True)
    func = gemm_func()
    manifest: dict[str, Any] = {"M": M, "N": N, "K": K, "tilelang": tilelang.__version__,
                                "target": TARGET, "pass_configs": PASS_CONFIGS, "variants": {}}
    sources: dict[str, str] = {}
    device_sources: dict[str, str] = {}
    print(f"TileLang {tilelang.__version__}, GEMM {M}x{N}x{K} fp16 (fp32 accumulation), target {TARGET}")
    for variant in variants:
        kernel, seconds = _build(variant, func)
        sources[variant] = kernel.get_host_source()
        device_sources[variant] = kernel.get_kernel_source()
        (args.out / f"gemm_{variant}_host.c").write_text(sources[variant])
        library = f"gemm_{variant}.so"
        kernel.adapter.get_exportable_executable().export_library(str(args.out / library))
        entry: dict[str, Any] = {"library": library, "function": "main"}
        if variant == "plugin":
            entry["registry"] = _check_plugin(sources, args.plugin)
        manifest["variants"][variant] = entry
        print(f"{variant}: compiled in {seconds:.2f} s, exported {library}")
    _set_integration(False)
    if len(device_sources) == 2:
        same = device_sources["stock"] == device_sources["plugin"]
        manifest["device_source_identical"] = same
        print(f"CUDA kernel source identical between stock and plugin: {same} (only host code may differ)")
    manifest["runtime"] = _copy_runtime(args.out)
    (args.out / "gemm.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"wrote {args.out / 'gemm.json'} and lib/ ({', '.join(manifest['runtime'])})")

    if args.reps > 0:
        _time_compiles(func, variants, args.reps)
    return 0


def _cpu_seconds() -> float:
    t = os.times()  # this process and its waited-for children (nvcc, the host compiler)
    return t.user + t.system + t.children_user + t.children_system


def _time_compiles(func: Any, variants: list[str], reps: int) -> None:
    """Median time of ``tilelang.compile`` plus the export of a loadable library, per
    variant, interleaved (the order alternates each round): wall clock, and CPU time of
    this process and its compiler subprocesses (steadier on a shared machine)."""
    times: dict[str, list[tuple[float, float]]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory() as scratch:
        for i in range(reps):
            for variant in variants if i % 2 == 0 else variants[::-1]:
                wall, cpu = time.perf_counter(), _cpu_seconds()
                kernel = _build(variant, func)[0]
                kernel.adapter.get_exportable_executable().export_library(str(Path(scratch) / f"{variant}.so"))
                times[variant].append((time.perf_counter() - wall, _cpu_seconds() - cpu))
    _set_integration(False)
    print(f"\ncompile + export of the GEMM, {reps} interleaved runs per variant, TileLang's kernel cache disabled")
    print(f"{'variant':<8} {'wall s: median (min-max)':>26} {'CPU s: median (min-max)':>26}")
    medians: dict[str, tuple[float, float]] = {}
    for variant, pairs in times.items():
        walls, cpus = [p[0] for p in pairs], [p[1] for p in pairs]
        medians[variant] = (statistics.median(walls), statistics.median(cpus))
        print(f"{variant:<8} {medians[variant][0]:>10.3f} ({min(walls):.3f}-{max(walls):.3f})"
              f" {medians[variant][1]:>12.3f} ({min(cpus):.3f}-{max(cpus):.3f})")
    if len(medians) == 2:
        for i, what in enumerate(("wall", "CPU")):
            ratio = medians["plugin"][i] / medians["stock"][i]
            print(f"ratio plugin/stock, {what}: {ratio:.4f} (target <= 1.02): {'PASS' if ratio <= 1.02 else 'MISS'}")


def _check_plugin(sources: dict[str, str], plugin: str) -> dict[str, Any]:
    """Evidence that ``plugin``'s codegen and hook built the host code of this kernel:
    the registry's choice for this target (codegen and hooks, with their distribution)
    and, for the stamp plugin, its two marker functions in the host source (and not in
    stock TileLang's)."""
    from tilelang_hostcg import tilelang as integration

    chosen = integration.plugin_fingerprint(TARGET)
    codegen, hooks = chosen.get("codegen") or [], chosen.get("hooks") or []
    problems = []
    if len(codegen) < 4 or codegen[3] != plugin:
        problems.append(f"the registry chose host codegen {codegen} for {TARGET}, not one of {plugin!r}")
    if not any(len(h) > 3 and h[3] == plugin for h in hooks):
        problems.append(f"no hook of {plugin!r} among the hooks the registry chose: {hooks}")
    markers: list[str] = []
    if plugin == "tilelang-hostcg-stamp":
        import tilelang_hostcg_stamp as stamp

        markers = [stamp.CODEGEN_SYMBOL, stamp.HOOK_SYMBOL]
    for marker in markers:
        if marker not in sources["plugin"]:
            problems.append(f"{marker!r} is missing from the host source built with the integration")
        if marker in sources.get("stock", ""):
            problems.append(f"{marker!r} is in stock TileLang's host source: the integration was not off")
    if "stock" in sources and sources["plugin"] == sources["stock"]:
        problems.append("the host source with the integration equals stock TileLang's")
    if problems:
        sys.exit(f"error: the plugin path did not go through {plugin!r}: " + "; ".join(problems)
                 + f". Is {plugin} pip-installed in this environment (`pip install {plugin}`)?")
    print(f"plugin: host codegen {codegen[1]!r} of {codegen[3]} {codegen[4]} ({codegen[5]}), "
          f"hooks {[h[1] for h in hooks]}, markers in the host source: {markers}")
    return {"codegen": codegen, "hooks": hooks, "markers": markers}

if __name__ == "__main__":
    sys.exit(main())

"""Build CUDA kernels for a ``cuda_host`` host here, run them on a GPU machine without TVM.

Two steps, on two machines:

``python examples/cuda_on_gpu.py build [--out gpu-artifacts] [--arch sm_90]``
    Needs TVM, ``tilelang-hostcg``, the CUDA plugin (``pip install
    plugins/tilelang-hostcg-cuda``) and ``nvcc``; no GPU. Builds a 1-D vector add and a
    2-D grid kernel with ``tilelang_hostcg.build(kernel, Target({"kind": "cuda", "arch":
    ARCH}, host="cuda_host"))`` (the host codegen comes from the plugin, through the
    registry), turns each into a shared library with
    ``tilelang_hostcg_cuda.export_cuda_host_library`` and writes a ``manifest.json``.

``python examples/cuda_on_gpu.py run [--artifacts gpu-artifacts]``
    Needs only ``apache-tvm-ffi`` (the version the libraries were built against),
    PyTorch and an NVIDIA GPU of that architecture; no TVM. Loads each library with
    ``tvm_ffi.load_module``, calls its function on torch CUDA tensors and checks the
    results against torch. Exits non-zero on any mismatch.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KERNELS = {  # library name -> (kernel in example_kernels.py, exported function)
    "vector_add": ("gpu_vector_add", "gpu_vector_add"),
    "scale_2d": ("gpu_scale_2d", "gpu_scale_2d"),
}


def build(out: Path, arch: str) -> int:
    """Build the libraries and the manifest into ``out``."""
    import tvm_ffi
    from tvm.target import Target

    import tilelang_hostcg as hostcg

    try:
        from tilelang_hostcg_cuda import export_cuda_host_library
    except ImportError:
        print("the CUDA plugin is not installed: pip install plugins/tilelang-hostcg-cuda")
        return 1

    sys.path.insert(0, str(HERE))
    import example_kernels as kernels

    target = Target({"kind": "cuda", "arch": arch}, host="cuda_host")
    codegen = hostcg.resolve_host_codegen(target.host)
    registrations = hostcg.default_registry().registrations(kind="cuda_host")
    origin = [r.origin.describe() for r in registrations]
    print(f"host codegen for cuda_host: {codegen.name!r} ({'; '.join(origin)})")
    libraries: dict[str, dict[str, str]] = {}
    manifest = {"arch": arch, "tvm_ffi": tvm_ffi.__version__, "kernels": libraries}
    for name, (kernel_name, function) in KERNELS.items():
        start = time.perf_counter()
        module = hostcg.build(getattr(kernels, kernel_name), target)
        path = export_cuda_host_library(module, out / f"{name}.so", arch=target)
        seconds = time.perf_counter() - start
        print(f"built {path.name}: {path.stat().st_size} bytes in {seconds:.1f} s "
              f"(function {function!r})")
        libraries[name] = {"library": path.name, "function": function}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"wrote {out / 'manifest.json'}")
    return 0


def _check(label: str, got: object, want: object, failures: list[str]) -> None:
    import torch

    assert isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor)
    error = (got - want).abs().max().item() if got.numel() else 0.0
    ok = torch.allclose(got, want, rtol=1e-6, atol=1e-6)
    print(f"  {label:44} max |error| = {error:.3g}  {'OK' if ok else 'MISMATCH'}")
    if not ok:
        failures.append(label)


def run(artifacts: Path) -> int:
    """Load the libraries and check them on the GPU against torch."""
    import torch
    import tvm_ffi

    manifest = json.loads((artifacts / "manifest.json").read_text())
    print(f"GPU: {torch.cuda.get_device_name()} (capability {torch.cuda.get_device_capability()})"
          f", torch {torch.__version__}, tvm_ffi {tvm_ffi.__version__} (libraries built for "
          f"{manifest['arch']} against tvm_ffi {manifest['tvm_ffi']})")
    funcs = {name: tvm_ffi.load_module(str(artifacts / entry["library"]))[entry["function"]]
             for name, entry in manifest["kernels"].items()}
    failures: list[str] = []
    gen = torch.Generator(device="cuda").manual_seed(0)
    cuda = torch.device("cuda")

    print("vector_add: C = A + B, 1-D grid of 128-thread blocks")
    for n in (1, 127, 128, 1000, 1 << 20, 3_000_017):
        a = torch.randn(n, device=cuda, generator=gen)
        b = torch.randn(n, device=cuda, generator=gen)
        c = torch.full((n,), float("nan"), device=cuda)
        funcs["vector_add"](a, b, c)
        torch.cuda.synchronize()
        _check(f"n={n}", c, a + b, failures)

    print("scale_2d: B[i, j] = A[i, j] * 2 + j, 2-D grid of 16x16 blocks")
    for m, n in ((1, 1), (16, 16), (17, 33), (1000, 777), (4096, 4096)):
        a = torch.randn(m, n, device=cuda, generator=gen)
        b = torch.full((m, n), float("nan"), device=cuda)
        funcs["scale_2d"](a, b)
        torch.cuda.synchronize()
        want = a * 2 + torch.arange(n, device=cuda, dtype=torch.float32)
        _check(f"{m}x{n}", b, want, failures)

    print("on a side stream (torch's current stream while the call is made)")
    stream = torch.cuda.Stream()
    a = torch.randn(1 << 22, device=cuda, generator=gen)
    b = torch.randn(1 << 22, device=cuda, generator=gen)
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        c = torch.empty_like(a)
        funcs["vector_add"](a, b, c)
        want = a + b
    stream.synchronize()
    _check("n=4194304 on a side stream", c, want, failures)

    print("argument checks of the generated host wrappers, on the GPU machine")
    for label, call in (
        ("CPU tensor", lambda: funcs["vector_add"](torch.zeros(4), torch.zeros(4), torch.zeros(4))),
        ("float64 tensor", lambda: funcs["vector_add"](*(torch.zeros(4, device=cuda,
                                                                    dtype=torch.float64),) * 3)),
        ("2 arguments instead of 3", lambda: funcs["vector_add"](a, b)),
    ):
        try:
            call()
        except Exception as exc:  # the wrappers raise TypeError or ValueError
            first = str(exc).strip().splitlines()[0]
            print(f"  {label:28} rejected: {type(exc).__name__}: {first}")
        else:
            print(f"  {label:28} NOT rejected")
            failures.append(label)

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    a = torch.randn(1 << 26, device=cuda, generator=gen)
    b = torch.randn(1 << 26, device=cuda, generator=gen)
    c = torch.empty_like(a)
    for _ in range(3):
        funcs["vector_add"](a, b, c)
    start.record()
    for _ in range(20):
        funcs["vector_add"](a, b, c)
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / 20
    gbps = 3 * 4 * (1 << 26) / ms / 1e6  # two arrays read, one written
    print(f"vector_add on 2^26 floats: {ms:.3f} ms per call, {gbps:.0f} GB/s")

    print("all results match torch" if not failures else f"FAILED: {failures}")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_build = sub.add_parser("build", help="build the shared libraries (TVM, plugin, nvcc)")
    p_build.add_argument("--out", type=Path, default=ROOT / "gpu-artifacts")
    p_build.add_argument("--arch", default="sm_90", help="CUDA architecture (default sm_90)")
    p_run = sub.add_parser("run", help="run the libraries on the GPU (tvm_ffi, torch)")
    p_run.add_argument("--artifacts", type=Path, default=ROOT / "gpu-artifacts")
    args = parser.parse_args(argv)
    if args.command == "build":
        return build(args.out, args.arch)
    return run(args.artifacts)


if __name__ == "__main__":
    raise SystemExit(main())

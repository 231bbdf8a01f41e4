"""The ROCm plugin at work: ``hip`` hooks applying to TVM's ``rocm`` targets.

Needs the plugin installed (``pip install plugins/tilelang-hostcg-rocm``); needs no
ROCm installation: the hooks prepare host modules, which TVM builds anywhere.
"""

from __future__ import annotations

import tvm
from tvm.target import Target

import tilelang_hostcg as hostcg

HOOK_GROUP = "tilelang.host_codegen_hooks"


def main() -> int:
    try:
        import tilelang_hostcg_rocm as rocm_plugin
    except ImportError:
        print("the ROCm plugin is not installed: pip install plugins/tilelang-hostcg-rocm")
        return 1
    registry = hostcg.default_registry()
    gfx942 = Target({"kind": "rocm", "mcpu": "gfx942:sramecc+:xnack-"})
    hooks = registry.matching_hooks(gfx942)
    print(f"hooks for Target('rocm'), in order: {[r.name for r in hooks]}")
    print(f"  from {hooks[0].origin.describe()}")
    for spelling in ("hip", "rocm"):
        names = [r.name for r in registry.registrations(HOOK_GROUP, spelling)]
        print(f"  registered under {spelling!r}: {names}")

    for host in ("llvm", "c"):
        prepared = hostcg.apply_host_codegen_hooks(tvm.IRModule({}), Target(host), gfx942)
        built = hostcg.build_host(tvm.IRModule({}), Target(host), gfx942)
        print(f"host {host!r}: accepted, host module built ({built.kind!r}); recorded "
              f"{rocm_plugin.rocm_device_info(prepared)}")

    rdna = Target({"kind": "rocm", "mcpu": "gfx1100"})
    info = rocm_plugin.rocm_device_info(
        hostcg.apply_host_codegen_hooks(tvm.IRModule({}), Target("llvm"), rdna))
    print(f"gfx1100: kernels compiled for warp size {info.warp_size}, the architecture's "
          f"own is {info.native_warp_size} (mismatch: {info.warp_size_mismatch}); set "
          "thread_warp_size=32 on the target for wave32 code")

    try:
        hostcg.apply_host_codegen_hooks(tvm.IRModule({}), Target("cuda_host"), gfx942)
    except rocm_plugin.IncompatibleHostError as exc:
        print(f"host 'cuda_host' rejected:\n  {exc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

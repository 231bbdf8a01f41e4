"""The template plugin at work: an ``llvm`` variant for Acme triples and an ``ext_dev`` hook.

Needs the plugin installed (``pip install ./plugins/tilelang-hostcg-template`` from the
repository root; the README's main job installs it).
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import numpy as np
import tvm
import tvm_ffi
from tvm.target import Target

import tilelang_hostcg as hostcg

sys.path.insert(0, str(Path(__file__).resolve().parent))  # example_kernels.py, beside this file
from example_kernels import vector_add

ACME = Target({"kind": "llvm", "mtriple": "x86_64-acme-linux-gnu"})


def main() -> int:
    try:
        from tilelang_hostcg_template.hooks import DEVICE_ATTR
    except ImportError:
        print("the template plugin is not installed: pip install ./plugins/tilelang-hostcg-template "
              "(from the repository root)")
        return 1
    registry = hostcg.default_registry()
    for target in (ACME, Target("llvm")):
        codegen = hostcg.resolve_host_codegen(target)
        origin = next(r.origin for r in registry.registrations(kind="llvm") if r.obj is codegen)
        print(f"llvm host {str(target.attrs.get('mtriple', '') or '(default triple)')!r}: "
              f"{codegen.name!r} priority {codegen.priority}, {origin.describe()}")
    print(f"codegens matching the Acme triple, best first: "
          f"{hostcg.allowed_host_codegens_for_target(ACME)}")

    module = hostcg.build(vector_add, ACME)
    if platform.machine() == "x86_64":
        a = np.arange(6, dtype="float32")
        c = np.zeros(6, dtype="float32")
        module["vector_add"](tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(c))
        print(f"built through 'acme_llvm' and run on this CPU: {c}")

    device = Target("ext_dev")
    prepared = hostcg.apply_host_codegen_hooks(tvm.IRModule({}), ACME, device)
    print(f"ext_dev hook recorded {DEVICE_ATTR}={prepared.attrs.get(DEVICE_ATTR)!r}")
    try:
        hostcg.apply_host_codegen_hooks(tvm.IRModule({}), Target("c"), device)
    except hostcg.HostCodegenError as exc:
        print(f"host 'c' rejected: {exc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The build driver on real TVM: llvm runs, C compiles and runs, CUDA builds both modules."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import tvm
from tvm.target import Target

import tilelang_hostcg
from tilelang_hostcg import HostCodegen, HostCodegenHook, Registry, global_func_host_codegen

from .kernels import gpu_scale_2d, gpu_vector_add, vector_add

CUDA = {"kind": "cuda", "arch": "sm_90"}


def core_registry() -> Registry:
    """A registry with exactly the core's codegens, recording every call."""
    registry = Registry()
    for kind in ("llvm", "c"):
        registry.register_host_codegen(
            kind, HostCodegen(kind, global_func_host_codegen(f"target.build.{kind}")))
    return registry


def run_vector_add(module, n: int = 37) -> np.ndarray:
    a = np.random.default_rng(0).random(n, dtype=np.float32)
    b = np.arange(n, dtype=np.float32)
    out = tvm.runtime.tensor(np.zeros(n, dtype=np.float32))
    module["vector_add"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), out)
    np.testing.assert_allclose(out.numpy(), a + b, rtol=1e-6)
    return out.numpy()


def test_llvm_build_runs_on_cpu():
    module = tilelang_hostcg.build(vector_add, "llvm")
    assert module.kind == "llvm"
    run_vector_add(module)


def test_build_accepts_json_target_and_dict():
    module = tilelang_hostcg.build(vector_add, '{"kind": "llvm", "opt-level": 2}')
    run_vector_add(module)
    run_vector_add(tilelang_hostcg.build(vector_add, {"kind": "llvm"}, registry=core_registry()))


def test_build_goes_through_the_registry():
    calls = []
    registry = Registry()

    def build(mod, target_host):
        calls.append(target_host.kind.name)
        return tvm.get_global_func("target.build.llvm")(mod, target_host)

    def hook(mod, target_host, target):
        calls.append(f"hook:{target.kind.name}")
        return mod

    registry.register_host_codegen("llvm", HostCodegen("traced", build))
    registry.register_host_codegen_hook("cuda", HostCodegenHook("trace", hook))
    run_vector_add(tilelang_hostcg.build(vector_add, "llvm", registry=registry))
    tilelang_hostcg.build(gpu_vector_add, Target(CUDA, host="llvm"), registry=registry)
    assert calls == ["llvm", "hook:cuda", "llvm"]


@pytest.mark.skipif(shutil.which("gcc") is None and shutil.which("cc") is None,
                    reason="no C compiler on this machine")
def test_c_host_emits_c_that_compiles_and_runs(tmp_path):
    module = tilelang_hostcg.build(vector_add, "c", registry=core_registry())
    assert module.kind == "c"
    source = module.inspect_source()
    assert "TVMFFIAny" in source and "vector_add" in source
    library = tmp_path / "vector_add_c.so"
    module.export_library(str(library))
    run_vector_add(tvm.runtime.load_module(str(library)))


def test_cuda_device_with_llvm_host_builds_both_modules():
    for kernel in (gpu_vector_add, gpu_scale_2d):
        module = tilelang_hostcg.build(kernel, Target(CUDA, host="llvm"))
        assert module.kind == "llvm"
        [device] = module.imports
        assert device.kind == "cuda"
        assert "__global__" in device.inspect_source("cuda")


def test_cuda_device_without_host_uses_tvm_default_host():
    module = tilelang_hostcg.build(gpu_vector_add, CUDA, registry=core_registry())
    assert module.kind == "llvm" and [m.kind for m in module.imports] == ["cuda"]


def test_build_host_applies_hooks_then_codegen():
    registry = core_registry()
    seen = []

    def hook(mod, target_host, target):
        seen.append(len(mod.functions))
        return mod.with_attr("hostcg_hooked", 1)

    registry.register_host_codegen_hook("cuda", HostCodegenHook("count", hook))
    lowered = tvm.IRModule.from_expr(vector_add)
    module = registry.build_host(tvm.IRModule(), Target("llvm"), Target("cuda"))
    assert seen == [0] and module.kind == "llvm"
    assert len(lowered.functions) == 1


def test_build_rejects_non_tir_input():
    with pytest.raises(TypeError, match="PrimFunc or IRModule"):
        tilelang_hostcg.build("not a function", "llvm", registry=core_registry())

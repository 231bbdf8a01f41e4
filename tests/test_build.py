"""The build driver on real TVM: llvm runs, C compiles and runs, CUDA builds both modules."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.script import tirx as T
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


@pytest.mark.needs_tool("gcc", "cc", why="the emitted C is compiled into a library")
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


@T.prim_func
def hooked_fill(a: T.handle):
    """A[i] = 42: the function the hook below adds to the host module."""
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    for i in range(n):
        A[i] = T.float32(42)


def host_module(kernel, host: str):
    """The host module ``build()`` gives the ``host`` codegen for ``kernel`` (lowered, with
    its packed-API wrapper): what a compiler driver passes to ``build_host``."""
    captured = []

    def capture(mod, target_host):
        captured.append(mod)
        return tvm.get_global_func(f"target.build.{host}")(mod, target_host)

    registry = Registry()
    registry.register_host_codegen(host, HostCodegen("capture", capture))
    tilelang_hostcg.build(kernel, host, registry=registry)
    [mod] = captured
    return mod


def recording_registry(host: str) -> tuple[Registry, list[list[str]]]:
    """A registry whose ``host`` codegen records the functions of each module it builds,
    and whose ``cuda`` hook adds ``hooked_fill`` to the host module."""
    received: list[list[str]] = []

    def build(mod, target_host):
        received.append(sorted(gvar.name_hint for gvar in mod.functions))
        return tvm.get_global_func(f"target.build.{host}")(mod, target_host)

    extra = host_module(hooked_fill, host)

    def hook(mod, target_host, target):
        out = tvm.IRModule(dict(mod.functions.items()), attrs=mod.attrs)
        out.update(extra)
        return out

    registry = Registry()
    registry.register_host_codegen(host, HostCodegen("recording", build))
    registry.register_host_codegen_hook("cuda", HostCodegenHook("adds-hooked-fill", hook))
    return registry, received


def test_build_host_builds_the_module_the_hooks_return():
    registry, received = recording_registry("llvm")
    module = registry.build_host(host_module(vector_add, "llvm"), "llvm", CUDA)
    # The codegen got the hook's function, and the built code runs it.
    assert received == [["hooked_fill", "vector_add"]]
    out = tvm.runtime.tensor(np.zeros(5, dtype=np.float32))
    module["hooked_fill"](out)
    np.testing.assert_array_equal(out.numpy(), np.full(5, 42, dtype=np.float32))
    run_vector_add(module)


def test_build_host_builds_the_module_the_hooks_return_as_c():
    registry, received = recording_registry("c")
    module = registry.build_host(host_module(vector_add, "c"), Target("c"), Target(CUDA))
    assert received == [["hooked_fill", "vector_add"]]
    source = module.inspect_source()
    assert "hooked_fill" in source and "vector_add" in source


def test_build_host_without_a_device_target_runs_no_hook():
    registry, received = recording_registry("llvm")
    module = registry.build_host(host_module(vector_add, "llvm"), "llvm")
    assert received == [["vector_add"]]
    run_vector_add(module)


def test_build_rejects_non_tir_input():
    with pytest.raises(TypeError, match="PrimFunc or IRModule"):
        tilelang_hostcg.build("not a function", "llvm", registry=core_registry())

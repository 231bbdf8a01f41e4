"""Tests of the CUDA plugin; run with the plugin installed (``pip install -e .``).

They use the pytest plugin of ``tilelang_hostcg.testing`` (fixture ``hostcg_registry``)
and build real kernels with TVM; the compile test needs ``nvcc`` and is skipped
without it (the "nvcc not found" path runs everywhere: ``CUDA_HOME`` points the plugin at
a toolkit without one). No GPU is needed: the compiled library is loaded and its argument
checks run, the kernel launch itself is left to a GPU machine.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import tilelang_hostcg_cuda as cuda_plugin
import tvm
import tvm_ffi
from tilelang_hostcg_cuda.hooks import NVPTX_HOOKS
from tvm.script import tirx as T
from tvm.target import Target

from tilelang_hostcg import HostCodegenError, build
from tilelang_hostcg.testing import check_plugin

SM90 = {"kind": "cuda", "arch": "sm_90"}
HOOK_GROUP = "tilelang.host_codegen_hooks"


@T.prim_func
def scale_2d(a: T.handle, b: T.handle):
    m = T.int32()
    n = T.int32()
    A = T.match_buffer(a, (m, n), "float32")
    B = T.match_buffer(b, (m, n), "float32")
    for by in T.thread_binding((m + 15) // 16, thread="blockIdx.y"):
        for bx in T.thread_binding((n + 15) // 16, thread="blockIdx.x"):
            for ty in T.thread_binding(16, thread="threadIdx.y"):
                for tx in T.thread_binding(16, thread="threadIdx.x"):
                    if by * 16 + ty < m and bx * 16 + tx < n:
                        B[by * 16 + ty, bx * 16 + tx] = A[by * 16 + ty, bx * 16 + tx] * T.float32(3)


@pytest.fixture
def registry(hostcg_registry):
    """An isolated registry serving llvm, c, cuda_host and the cuda/nvptx hooks."""
    hostcg_registry.register_lazy_host_codegen("llvm", "tilelang_hostcg.builtin:LLVM_HOST_CODEGEN")
    hostcg_registry.register_lazy_host_codegen("c", "tilelang_hostcg.builtin:C_HOST_CODEGEN")
    hostcg_registry.register_lazy_host_codegen("cuda_host", "tilelang_hostcg_cuda.codegen")
    hostcg_registry.register_lazy_host_codegen_hooks("cuda",
                                                     "tilelang_hostcg_cuda.hooks:CUDA_HOOKS")
    hostcg_registry.register_lazy_host_codegen_hooks("nvptx",
                                                     "tilelang_hostcg_cuda.hooks:NVPTX_HOOKS")
    return hostcg_registry


def test_distribution_honours_the_contract():
    assert check_plugin("tilelang-hostcg-cuda") == ["cuda", "cuda_host", "nvptx"]


def test_cuda_host_resolves_for_host_and_device_targets(registry):
    assert registry.resolve_host_codegen(Target("cuda_host")).name == "cuda_host"
    assert registry.resolve_host_codegen(Target(SM90, host="cuda_host")).name == "cuda_host"


def test_hooks_run_pairing_check_first(registry):
    names = [reg.name for reg in registry.matching_hooks(Target(SM90))]
    assert names == ["cuda_host_pairing", "cuda_host_requirements"]
    ptx = Target({"kind": "nvptx", "mcpu": "sm_90"})
    assert [reg.name for reg in registry.matching_hooks(ptx)] == [h.name for h in NVPTX_HOOKS]
    assert [reg.name for reg in registry.registrations(HOOK_GROUP, "nvptx")] == [
        h.name for h in NVPTX_HOOKS]


@pytest.mark.parametrize("host", ["llvm", "c", "cuda_host"])
def test_hosts_that_launch_cuda_kernels_pass(registry, host):
    out = registry.apply_host_codegen_hooks(tvm.IRModule({}), Target(host), Target(SM90))
    # The pairing check let the host through, and the requirements hook ran after it
    # (recording for a cuda_host host only).
    assert isinstance(out, tvm.IRModule)
    expected = cuda_plugin.CudaHostRequirements(arch="sm_90") if host == "cuda_host" else None
    assert cuda_plugin.cuda_host_requirements(out) == expected


def test_host_that_cannot_launch_cuda_kernels_is_rejected(registry):
    with pytest.raises(cuda_plugin.IncompatibleHostError) as info:
        registry.apply_host_codegen_hooks(tvm.IRModule({}), Target("test"), Target(SM90))
    err = info.value
    assert isinstance(err, HostCodegenError)
    assert (err.host_kind, err.device_kind) == ("test", "cuda")
    assert err.supported == ("llvm", "c", "cuda_host")
    assert "TILELANG_HOSTCG_DISABLE=tilelang-hostcg-cuda:cuda" in str(err)


def test_cuda_host_with_ptx_device_is_rejected(registry):
    target = Target({"kind": "nvptx", "mcpu": "sm_90"})
    registry.apply_host_codegen_hooks(tvm.IRModule({}), Target("llvm"), target)
    with pytest.raises(cuda_plugin.IncompatibleHostError, match="cuda_host translation unit"):
        registry.apply_host_codegen_hooks(tvm.IRModule({}), Target("cuda_host"), target)


def test_requirements_are_recorded_for_cuda_host_only(registry):
    target = Target({"kind": "cuda", "arch": "sm_89"})
    out = registry.apply_host_codegen_hooks(tvm.IRModule({}), Target("cuda_host"), target)
    req = cuda_plugin.cuda_host_requirements(out)
    assert req == cuda_plugin.CudaHostRequirements(arch="sm_89")
    assert req.nvcc_options() == ["-std=c++17", "-arch=sm_89", "-ltvm_ffi"]
    plain = registry.apply_host_codegen_hooks(tvm.IRModule({}), Target("llvm"), target)
    assert cuda_plugin.cuda_host_requirements(plain) is None


@pytest.mark.parametrize(("given", "expected"), [
    ("sm_90", "sm_90"), ("sm_90a", "sm_90a"), ("90", "sm_90"), (90, "sm_90"),
    ("9.0", "sm_90"), ("10.0", "sm_100"), ("compute_80", "sm_80"), (" SM_75 ", "sm_75"),
])
def test_normalize_arch(given, expected):
    assert cuda_plugin.normalize_arch(given) == expected


@pytest.mark.parametrize("bad", ["", "sm_", "gfx942", "9", None, 9.0])
def test_normalize_arch_rejects(bad):
    with pytest.raises(cuda_plugin.CudaArchError, match="not a CUDA architecture"):
        cuda_plugin.normalize_arch(bad)


def test_missing_nvcc_says_what_to_do(tmp_path):
    with pytest.raises(cuda_plugin.NvccNotFoundError, match="CUDA Toolkit") as info:
        cuda_plugin.find_nvcc(tmp_path / "nvcc")
    assert isinstance(info.value, FileNotFoundError)


def test_nvcc_is_found_through_cuda_home(monkeypatch, tmp_path):
    fake = tmp_path / "bin" / "nvcc"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    assert cuda_plugin.find_nvcc() == str(fake)


def test_nowhere_to_find_nvcc_lists_what_was_tried(monkeypatch, tmp_path):
    # CUDA_HOME names a toolkit without nvcc, and PATH has none: the default toolkit
    # (/usr/local/cuda) is not searched, since CUDA_HOME named another one.
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(cuda_plugin.NvccNotFoundError) as info:
        cuda_plugin.find_nvcc()
    assert "CUDA_HOME" in str(info.value) and "nvcc=" in str(info.value)
    assert info.value.tried == (f"$CUDA_HOME/bin/nvcc ({tmp_path / 'bin' / 'nvcc'})", "nvcc on PATH")


def test_a_compile_without_nvcc_says_what_to_install(registry, monkeypatch, tmp_path):
    mod = build(scale_2d, Target(SM90, host="cuda_host"), registry=registry)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(cuda_plugin.NvccNotFoundError, match="install the CUDA Toolkit"):
        cuda_plugin.export_cuda_host_library(mod, tmp_path / "scale_2d.so", arch="sm_90")
    assert not (tmp_path / "scale_2d.so").exists()


def test_library_export_rejects_modules_not_built_for_cuda_host(registry):
    mod = build(scale_2d, Target(SM90, host="llvm"), registry=registry)
    with pytest.raises(ValueError, match="host='cuda_host'"):
        cuda_plugin.export_cuda_host_library(mod, "unused.so", arch="sm_90")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_host_build_compiles_and_loads(registry, tmp_path):
    target = Target(SM90, host="cuda_host")
    mod = build(scale_2d, target, registry=registry)
    path = cuda_plugin.export_cuda_host_library(mod, tmp_path / "scale_2d.so", arch=target,
                                                keep_source=True)
    assert path.is_file() and (tmp_path / "scale_2d.cu").is_file()
    func = tvm_ffi.load_module(str(path))["scale_2d"]
    host = tvm_ffi.from_dlpack(np.zeros((4, 4), "float32"))
    with pytest.raises(ValueError, match="expected cuda"):  # the wrappers' own device check
        func(host, host)

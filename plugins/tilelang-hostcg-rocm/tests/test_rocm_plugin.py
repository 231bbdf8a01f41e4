"""Tests of the ROCm plugin; run with the plugin installed (``pip install -e .``).

No ROCm installation is needed: the hooks work on the host module, which TVM
builds for ``llvm`` and ``c`` hosts on any machine.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import tilelang_hostcg_rocm as rocm_plugin
import tvm
from tilelang_hostcg_rocm.hooks import ROCM_HOOKS
from tvm.target import Target

from tilelang_hostcg import HostCodegenError
from tilelang_hostcg.testing import check_plugin

GFX942 = {"kind": "rocm", "mcpu": "gfx942:sramecc+:xnack-"}
HOOK_NAMES = ["rocm_host_pairing", "rocm_device_record"]


@pytest.fixture(params=["hip", "rocm"])
def registry(request, hostcg_registry):
    """An isolated registry with the core's host codegens and the ROCm hooks registered
    under either spelling of the kind."""
    hostcg_registry.register_lazy_host_codegen("llvm", "tilelang_hostcg.builtin:LLVM_HOST_CODEGEN")
    hostcg_registry.register_lazy_host_codegen("c", "tilelang_hostcg.builtin:C_HOST_CODEGEN")
    hostcg_registry.register_lazy_host_codegen_hooks(request.param,
                                                     "tilelang_hostcg_rocm.hooks:ROCM_HOOKS")
    return hostcg_registry


def test_distribution_honours_the_contract():
    assert check_plugin("tilelang-hostcg-rocm") == ["hip"]


def test_hooks_apply_to_tvm_rocm_targets(registry):
    assert [reg.name for reg in registry.matching_hooks(Target(GFX942))] == HOOK_NAMES
    assert [h.name for h in ROCM_HOOKS] == HOOK_NAMES


@pytest.mark.parametrize("host", ["llvm", "c"])
def test_host_module_builds_with_recorded_device(registry, host):
    mod = registry.apply_host_codegen_hooks(tvm.IRModule({}), Target(host), Target(GFX942))
    assert rocm_plugin.rocm_device_info(mod) == rocm_plugin.RocmDeviceInfo(
        arch="gfx942", features="sramecc+:xnack-", warp_size=64, native_warp_size=64)
    built = registry.build_host(tvm.IRModule({}), Target(host), Target(GFX942))
    assert built.kind == host


def test_cuda_host_cannot_launch_rocm_kernels(registry):
    with pytest.raises(rocm_plugin.IncompatibleHostError) as info:
        registry.apply_host_codegen_hooks(tvm.IRModule({}), Target("cuda_host"), Target(GFX942))
    err = info.value
    assert isinstance(err, HostCodegenError)
    assert (err.host_kind, err.device_kind, err.supported) == ("cuda_host", "rocm", ("llvm", "c"))
    assert "host='llvm'" in str(err) and "TILELANG_HOSTCG_DISABLE=tilelang-hostcg-rocm" in str(err)


def test_device_target_host_is_used_when_no_host_is_given(registry):
    target = Target(GFX942, host="cuda_host")
    with pytest.raises(rocm_plugin.IncompatibleHostError):
        registry.apply_host_codegen_hooks(tvm.IRModule({}), None, target)


def test_warp_size_mismatch_is_recorded(registry):
    # TVM 0.27 gives every rocm target thread_warp_size 64; RDNA (gfx11) runs wave32.
    mod = registry.apply_host_codegen_hooks(tvm.IRModule({}), Target("llvm"),
                                            Target({"kind": "rocm", "mcpu": "gfx1100"}))
    info = rocm_plugin.rocm_device_info(mod)
    assert (info.arch, info.warp_size, info.native_warp_size) == ("gfx1100", 64, 32)
    assert info.warp_size_mismatch


def test_mcpu_must_name_a_gfx_architecture():
    fake = SimpleNamespace(kind=SimpleNamespace(name="rocm"), attrs={"mcpu": "sm_90"})
    with pytest.raises(rocm_plugin.RocmArchError, match="not an AMD GPU architecture"):
        rocm_plugin.RocmDeviceInfo.from_target(fake)


@pytest.mark.parametrize(("mcpu", "arch", "warp"), [
    ("gfx942", "gfx942", 64), ("gfx90a:xnack+", "gfx90a", 64), ("gfx1100", "gfx1100", 32),
    ("gfx1201", "gfx1201", 32), ("gfx803", "gfx803", None), ("sm_90", None, None),
    ("gfx", None, None), (None, None, None),
])
def test_arch_rules(mcpu, arch, warp):
    assert rocm_plugin.normalize_rocm_arch(mcpu) == arch
    assert rocm_plugin.warp_size_for_arch(arch) == warp


def test_record_round_trips_unknown_warp_size():
    info = rocm_plugin.RocmDeviceInfo(arch="gfx803", native_warp_size=None)
    assert rocm_plugin.RocmDeviceInfo.from_attr(info.to_attr()) == info
    assert not info.warp_size_mismatch

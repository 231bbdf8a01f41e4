"""Tests of the template plugin: the pattern to keep when you copy it.

``tilelang_hostcg.testing`` is a pytest plugin (installed with ``tilelang-hostcg``), so
its fixtures need no import:

- ``hostcg_registry``: a fresh registry that reads no entry points; load your modules
  into it by their import path, exactly as the entry points name them;
- ``plugin_environment``: a throwaway virtual environment to ``pip install`` this
  distribution into and check it in a fresh interpreter, as users will get it.

``check_plugin`` checks the installed distribution's entry points against the contract.
Run with the plugin installed: ``pip install -e . && pytest``.
"""

from __future__ import annotations

import platform
from pathlib import Path

import numpy as np
import pytest
import tvm
import tvm_ffi
from tilelang_hostcg_template.hooks import DEVICE_ATTR
from tvm.script import tirx as T
from tvm.target import Target

from tilelang_hostcg import HostCodegenError, build
from tilelang_hostcg.testing import check_plugin

DISTRIBUTION = "tilelang-hostcg-template"
ACME_HOST = {"kind": "llvm", "mtriple": "x86_64-acme-linux-gnu"}


@T.prim_func
def add_one(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        B[i] = A[i] + T.float32(1)


@pytest.fixture
def registry(hostcg_registry):
    """An isolated registry with the core's llvm codegen and this plugin's entry points."""
    from tilelang_hostcg.builtin import LLVM_HOST_CODEGEN

    # One lazy module per kind in code (a second path replaces the first, as in TileLang).
    hostcg_registry.register_host_codegen("llvm", LLVM_HOST_CODEGEN)
    hostcg_registry.register_lazy_host_codegen("llvm", "tilelang_hostcg_template.codegen")
    hostcg_registry.register_lazy_host_codegen_hooks("ext_dev",
                                                     "tilelang_hostcg_template.hooks:ACME_HOOKS")
    return hostcg_registry


def test_distribution_honours_the_contract():
    assert check_plugin(DISTRIBUTION) == ["ext_dev", "llvm"]


def test_codegen_serves_acme_triples_only(registry):
    assert registry.resolve_host_codegen(Target(ACME_HOST)).name == "acme_llvm"
    assert registry.resolve_host_codegen(Target("llvm")).name == "llvm"
    assert registry.allowed_host_codegens_for_target(Target(ACME_HOST)) == ["acme_llvm", "llvm"]


def test_acme_build_runs(registry):
    mod = build(add_one, Target(ACME_HOST), registry=registry)
    if platform.machine() != "x86_64":
        pytest.skip("the example triple is x86_64; the build above is all this machine can do")
    a = np.arange(4, dtype="float32")
    b = np.zeros(4, dtype="float32")
    mod["add_one"](tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(b))
    np.testing.assert_array_equal(b, a + 1)


def test_hook_records_the_device_kind(registry):
    device = Target("ext_dev")
    mod = registry.apply_host_codegen_hooks(tvm.IRModule({}), Target(ACME_HOST), device)
    # mod.attrs.get, not mod.get_attr: TVM 0.27's get_attr cannot return short strings.
    assert mod.attrs.get(DEVICE_ATTR) == "ext_dev"
    with pytest.raises(HostCodegenError, match="need an 'llvm' host"):
        registry.apply_host_codegen_hooks(tvm.IRModule({}), Target("c"), device)


def test_installed_distribution_is_discovered(plugin_environment):
    # hatchling builds out of the source tree: installing from it leaves nothing there.
    plugin_environment.install(Path(__file__).resolve().parents[1])
    result = plugin_environment.run_json("""
        import json
        import tilelang_hostcg
        from tvm.target import Target
        acme = Target({"kind": "llvm", "mtriple": "x86_64-acme-linux-gnu"})
        print(json.dumps([tilelang_hostcg.resolve_host_codegen(acme).name,
                          tilelang_hostcg.resolve_host_codegen(Target("llvm")).name]))
    """)
    acme, plain = result
    assert acme == "acme_llvm"
    # Other llvm targets are not the plugin's: whatever else serves them (TVM's own codegen, the
    # core's, another plugin's) does, so this holds beside any other plugin.
    assert plain != "acme_llvm"

"""A codegen or hook that raises while building: the user's exception keeps its type and
traceback and gains a note (PEP 678) naming what raised, where it comes from and the
control that skips it."""

from __future__ import annotations

import sys
import traceback

import pytest
import tvm
from tvm.target import Target

import tilelang_hostcg
from tilelang_hostcg import Controls, HostCodegen, Registry, global_func_host_codegen
from tilelang_hostcg.discovery._planning import AdvertisedEntryPoint, plan_sources

from .kernels import gpu_vector_add, vector_add

RAISING = """
    import tilelang_hostcg as h

    class PluginBuildError(RuntimeError):
        pass

    def _build(mod, target):
        raise PluginBuildError("the backend's toolchain is missing")

    def _apply(mod, target_host, target):
        raise KeyError("no such pass")

    h.register_host_codegen("llvm", h.HostCodegen("raising-llvm", _build, priority=5))
    h.register_host_codegen_hook("cuda", h.HostCodegenHook("raising-hook", _apply))
"""


def _entries(module: str) -> list[AdvertisedEntryPoint]:
    return [AdvertisedEntryPoint(group, kind, module, "hcgt-raising", "2.0")
            for group, kind in (("tilelang.host_codegen", "llvm"),
                                ("tilelang.host_codegen_hooks", "cuda"))]


def _registry(module: str, controls: Controls | None = None) -> Registry:
    """A registry whose discovery finds ``module``'s distribution, with ``controls``."""
    entries = _entries(module)
    registry = Registry(discover=True, controls=controls or Controls(),
                        index_loader=lambda c: plan_sources(entries, c, "0.1.0"))
    registry.register_host_codegen("llvm", HostCodegen(
        "plain-llvm", global_func_host_codegen("target.build.llvm")))
    return registry


def _notes(exc: BaseException) -> str:
    return "\n".join(getattr(exc, "__notes__", ()))


def test_a_raising_codegen_is_named_with_the_control_that_skips_it(modules):
    name = modules.write(RAISING)
    registry = _registry(name)
    with pytest.raises(RuntimeError, match="toolchain is missing") as info:
        tilelang_hostcg.build(vector_add, "llvm", registry=registry)
    exc = info.value
    assert type(exc).__name__ == "PluginBuildError"  # its own type, not a wrapper
    assert any(frame.name == "_build" and frame.filename.endswith(f"{name}.py")
               for frame in traceback.extract_tb(exc.__traceback__))
    notes = _notes(exc)
    assert "host codegen 'raising-llvm'" in notes and "'hcgt-raising' 2.0" in notes
    assert f"llvm = {name}" in notes
    assert "TILELANG_HOSTCG_DISABLE=hcgt-raising:llvm" in notes
    assert "TILELANG_HOSTCG_PREFER=llvm=plain-llvm" in notes
    if sys.version_info < (3, 11):  # no add_note: the note joins the message
        assert "TILELANG_HOSTCG_DISABLE=hcgt-raising:llvm" in str(exc)


def test_a_raising_hook_is_named_with_the_control_that_skips_it(modules):
    name = modules.write(RAISING)
    registry = _registry(name)
    with pytest.raises(KeyError) as info:
        registry.build_host(tvm.IRModule(), Target("c"), Target("cuda"))
    notes = _notes(info.value)
    assert "host codegen hook 'raising-hook'" in notes and f"cuda = {name}" in notes
    assert "TILELANG_HOSTCG_DISABLE=hcgt-raising:cuda" in notes
    with pytest.raises(KeyError) as info:
        tilelang_hostcg.build(gpu_vector_add, Target("cuda", host="c"), registry=registry)
    assert "raising-hook" in _notes(info.value)


def test_the_controls_named_in_the_note_skip_it(modules):
    name = modules.write(RAISING)
    for controls in (Controls.from_environ({"TILELANG_HOSTCG_DISABLE": "hcgt-raising:llvm"}),
                     Controls.from_environ({"TILELANG_HOSTCG_PREFER": "llvm=plain-llvm"})):
        registry = _registry(name, controls)
        assert tilelang_hostcg.build(vector_add, "llvm", registry=registry).kind == "llvm"


def test_a_codegen_registered_in_code_says_so():
    registry = Registry()

    def build(mod, target):
        raise OSError("disk full")

    registry.register_host_codegen("llvm", HostCodegen("mine", build))
    with pytest.raises(OSError, match="disk full") as info:
        registry.build_host(tvm.IRModule(), "llvm")
    assert "host codegen 'mine'" in _notes(info.value)
    assert "registered in code" in _notes(info.value)

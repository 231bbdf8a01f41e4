"""Every callback's misbehaviour is named, hooks are as strict as codegens, the registry
API takes every target form, warnings point at the caller, and TileLang's semantics for
override, lazy re-registration and the "nothing matches" sentence."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import tvm
from tvm.target import Target

from tilelang_hostcg import (
    HostCodegen,
    HostCodegenHook,
    NoHostCodegenError,
    PluginCallbackError,
    PluginLoadError,
    PluginWarning,
    Registry,
)
from tilelang_hostcg.core import PredicatePluginWarning
from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .plugin_factory import Plugin, install, module, run

HOOK_NONE = Plugin("hcgt-c-hooknone", hooks={"cuda": "hcgt_c_hooknone:HOOK"},
                   files={"hcgt_c_hooknone.py": module(
                       'HOOK = hc.HostCodegenHook("returns-none", lambda mod, th, t: None)\n')})
HOOK_TEXT = Plugin("hcgt-c-hooktext", hooks={"metal": "hcgt_c_hooktext:HOOK"},
                   files={"hcgt_c_hooktext.py": module(
                       'HOOK = hc.HostCodegenHook("returns-text", lambda mod, th, t: "mod")\n')})
CG_NONE = Plugin("hcgt-c-cgnone", codegens={"test": "hcgt_c_cgnone:CG"},
                 files={"hcgt_c_cgnone.py": module(
                     'CG = hc.HostCodegen("builds-none", lambda mod, t: None)\n')})
PRED = Plugin("hcgt-c-pred", codegens={"composite": "hcgt_c_pred:CG"},
              files={"hcgt_c_pred.py": module(
                  'CG = hc.HostCodegen("says-yes", lambda m, t: m, supports_target=lambda t: "yes")\n')})
HOOK_BROKEN = Plugin("hcgt-c-hookbroken", hooks={"rocm": "hcgt_c_hookbroken"},
                     files={"hcgt_c_hookbroken.py": module('raise ImportError("libamdhip64.so")\n')})
HOOK_OK = Plugin("hcgt-c-hookok", hooks={"rocm": "hcgt_c_hookok:HOOK"},
                 files={"hcgt_c_hookok.py": module('HOOK = _hook("ok-rocm")\n')})
HOOK_EMPTY = Plugin("hcgt-c-hookempty", hooks={"hip": "hcgt_c_hookempty"},
                    files={"hcgt_c_hookempty.py": module("# registers no hook\n")})


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> PluginEnvironment:
    root = tmp_path_factory.mktemp("callbacks")
    environment = environments.new("callbacks")
    install(environment, root, [HOOK_NONE, HOOK_TEXT, CG_NONE, PRED, HOOK_BROKEN, HOOK_OK,
                               HOOK_EMPTY])
    return environment


@pytest.mark.slow
def test_misbehaving_callbacks_are_named_before_tvm_sees_anything(env, tmp_path):
    out = run(env, """
        import tvm
        mod = tvm.IRModule({})
        out["hook_none"] = attempt(lambda: isolated("hcgt-c-hooknone").apply_host_codegen_hooks(
            mod, target("llvm"), target("cuda")))
        out["hook_text"] = attempt(lambda: isolated("hcgt-c-hooktext").apply_host_codegen_hooks(
            mod, target("llvm"), target("metal")))
        out["cg_none"] = attempt(lambda: isolated("hcgt-c-cgnone").build_host(mod, target("test")))
        out["pred"] = attempt(lambda: resolve("composite", isolated("hcgt-c-pred")))
    """, tmp_path / "m.txt")
    for key, name, dist, returned in [("hook_none", "returns-none", "hcgt-c-hooknone", "None"),
                                      ("hook_text", "returns-text", "hcgt-c-hooktext", "str"),
                                      ("cg_none", "builds-none", "hcgt-c-cgnone", "None")]:
        error = out[key]["error"]
        assert error["type"] == "PluginCallbackError", out[key]
        assert {"HostCodegenError", "TypeError", "ValueError"} <= set(error["mro"])
        for part in (repr(name), repr(dist), returned, "Fix the"):
            assert part in error["message"], (part, error["message"])
    pred = out["pred"]
    assert pred["error"]["type"] == "NoHostCodegenError"
    assert pred["error"]["message"].startswith(
        "No host codegen registered for target host 'composite'. Available: says-yes. ")
    [[category, message]] = pred["warnings"]
    assert category == "PredicatePluginWarning"
    assert "'says-yes'" in message and "hcgt-c-pred" in message and "returned str" in message


@pytest.mark.slow
def test_hooks_are_as_strict_as_codegens(env, tmp_path):
    out = run(env, """
        out["alone"] = attempt(lambda: apply_hooks("rocm", isolated("hcgt-c-hookbroken")))
        out["beside"] = attempt(lambda: apply_hooks("rocm", isolated("hcgt-c-hookbroken",
                                                                     "hcgt-c-hookok")))
        out["none"] = attempt(lambda: apply_hooks("rocm", isolated()))
        both = isolated("hcgt-c-hookbroken", "hcgt-c-hookempty")
        out["both"] = attempt(lambda: apply_hooks("rocm", both))
        out["both_again"] = attempt(lambda: apply_hooks("rocm", both))
        out["three"] = attempt(lambda: apply_hooks("rocm", isolated("hcgt-c-hookbroken",
                                                                    "hcgt-c-hookempty",
                                                                    "hcgt-c-hookok")))
    """, tmp_path / "m.txt")
    alone = out["alone"]["error"]
    assert alone["type"] == "PluginLoadError" and alone["cause"]["type"] == "ImportError"
    assert "hcgt-c-hookbroken" in alone["message"] and "rocm = hcgt_c_hookbroken" in alone["message"]
    beside = out["beside"]
    assert beside["ok"] and beside["value"] == ["ok-rocm"]
    assert [w[0] for w in beside["warnings"]] == ["SkippedPluginWarning"]
    assert "hcgt-c-hookbroken" in beside["warnings"][0][1]
    assert out["none"] == {"ok": True, "value": [], "warnings": []}  # nothing advertised: no-op
    # Every advertised provider broken (one fails to import, one registers nothing, under
    # the hip alias): an error, each time, naming a provider; one working provider serves.
    for key in ("both", "both_again"):
        both = out[key]["error"]
        assert both["type"] == "PluginLoadError", out[key]
        assert "hcgt-c-hookbroken" in both["message"] or "hcgt-c-hookempty" in both["message"]
    three = out["three"]
    assert three["ok"] and three["value"] == ["ok-rocm"]
    assert sorted(w[0] for w in three["warnings"]) == ["SkippedPluginWarning", "SkippedPluginWarning"]
    assert {"hcgt-c-hookbroken", "hcgt-c-hookempty"} == {
        d for d in ("hcgt-c-hookbroken", "hcgt-c-hookempty") for w in three["warnings"] if d in w[1]}


# --------------------------------------------------------------------------- in process

def _codegen(name: str, **kw: object) -> HostCodegen:
    return HostCodegen(name, lambda mod, target: mod, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("form", ["llvm", '{"kind": "llvm"}', {"kind": "llvm"}, Target("llvm")],
                         ids=["kind", "json", "dict", "target"])
def test_registry_api_accepts_every_target_form(form):
    registry = Registry()
    registry.register_host_codegen("llvm", _codegen("mine"))
    registry.register_host_codegen_hook("cuda", HostCodegenHook("h", lambda m, th, t: m))
    assert registry.resolve_host_codegen(form).name == "mine"
    assert registry.resolve_host_codegen(form).name == "mine"  # cached or not, same answer
    assert registry.allowed_host_codegens_for_target(form) == ["mine"]
    mod = tvm.IRModule({})
    assert registry.apply_host_codegen_hooks(mod, form, "cuda") is mod
    assert registry.apply_host_codegen_hooks(mod, form, json.dumps({"kind": "cuda"})) is mod


def test_module_functions_accept_a_kind_name():
    import tilelang_hostcg as hc

    assert hc.resolve_host_codegen("llvm").name == "llvm"
    assert hc.allowed_host_codegens_for_target({"kind": "c"})[0] == "c"


def test_predicate_warning_points_at_the_callers_line():
    registry = Registry()
    registry.register_host_codegen("llvm", _codegen("odd", supports_target=lambda t: 1))
    registry.register_host_codegen("llvm", _codegen("plain", priority=-1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert registry.resolve_host_codegen(Target("llvm")).name == "plain"
    [warning] = caught
    assert warning.category is PredicatePluginWarning
    assert "returned int 1, not a bool" in str(warning.message)
    assert Path(warning.filename) == Path(__file__)


def test_broken_plugin_warning_points_at_the_callers_line(modules):
    import tilelang_hostcg as hc

    bad = modules.write("raise ImportError('missing native library')\n")
    registry = Registry()
    registry.register_host_codegen("test", _codegen("good"))
    registry.register_lazy_host_codegen("test", bad)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry.resolve_host_codegen("test")
    assert [Path(w.filename) for w in caught] == [Path(__file__)]
    assert hc.PluginWarning is PluginWarning


def test_override_removes_and_appends_like_tilelang():
    registry = Registry()
    a, b, a2 = _codegen("a"), _codegen("b"), _codegen("a")
    registry.register_host_codegen("llvm", a)
    registry.register_host_codegen("llvm", b)
    registry.register_host_codegen("llvm", a2, override=True)
    assert registry.allowed_host_codegens_for_target("llvm") == ["b", "a"]
    assert registry.resolve_host_codegen("llvm") is b
    log: list[str] = []
    for name in ("x", "y"):
        registry.register_host_codegen_hook("cuda", HostCodegenHook(
            name, lambda m, th, t, name=name: log.append(name) or m))
    registry.register_host_codegen_hook("cuda", HostCodegenHook(
        "x", lambda m, th, t: log.append("x2") or m), override=True)
    registry.apply_host_codegen_hooks(tvm.IRModule({}), "llvm", "cuda")
    assert log == ["y", "x2"]


def test_lazy_registration_in_code_replaces_the_path(modules, tmp_path):
    marker = tmp_path / "imports.txt"
    first = modules.write(f"""
        with open({str(marker)!r}, "a") as f:
            f.write("first ")
        import tilelang_hostcg as hc
        hc.register_host_codegen("test", hc.HostCodegen("first", lambda m, t: m))
    """)
    second = modules.write(f"""
        with open({str(marker)!r}, "a") as f:
            f.write("second ")
        import tilelang_hostcg as hc
        hc.register_host_codegen("test", hc.HostCodegen("second", lambda m, t: m))
    """)
    registry = Registry()
    registry.register_lazy_host_codegen("test", first)
    registry.register_lazy_host_codegen("test", second)
    assert registry.resolve_host_codegen("test").name == "second"
    assert marker.read_text() == "second "  # the replaced module is never imported
    assert [s.value for s in registry.sources()] == [second]


def test_no_codegen_message_starts_with_tilelangs_sentence():
    registry = Registry()
    with pytest.raises(NoHostCodegenError) as info:
        registry.resolve_host_codegen("test")
    assert str(info.value).startswith(
        "No host codegen registered for target host 'test'. Available: <none>. Install ")
    registry.register_host_codegen("test", _codegen("unit", supports_target=lambda t: False))
    with pytest.raises(NoHostCodegenError) as info:
        registry.resolve_host_codegen("test")
    text = str(info.value)
    assert text.startswith("No host codegen registered for target host 'test'. Available: unit. ")
    assert "None of them supports target" in text and text.endswith(".")


def test_hook_returning_wrong_type_in_process():
    registry = Registry()
    registry.register_host_codegen_hook("cuda", HostCodegenHook("bad", lambda m, th, t: None))
    with pytest.raises(PluginCallbackError, match=r"'bad' \(registered in code\) returned None"):
        registry.apply_host_codegen_hooks(tvm.IRModule({}), "llvm", "cuda")


def test_all_hook_providers_broken_in_process(modules):
    bad = modules.write("raise ImportError('libhip.so')\n")
    registry = Registry()
    registry.register_lazy_host_codegen_hooks("rocm", bad)
    with pytest.raises(PluginLoadError, match=r"libhip\.so"):
        registry.apply_host_codegen_hooks(tvm.IRModule({}), "llvm", "rocm")


def test_factory_registering_during_an_outer_plugins_import_belongs_to_its_source(modules):
    """A ``module:attr`` factory that also registers directly, called while another lazy
    module's top-level code runs: its registrations are its own source's."""
    inner = modules.write("""
        import tilelang_hostcg as hc

        def make():
            hc.register_host_codegen("test", hc.HostCodegen("extra", lambda m, t: m, priority=-1))
            return hc.HostCodegen("main", lambda m, t: m)
    """)
    outer = modules.write("""
        import tilelang_hostcg as hc
        FOUND = hc.allowed_host_codegens_for_target("test")
        hc.register_host_codegen("c", hc.HostCodegen("outer-c", lambda m, t: m))
    """)
    registry = Registry()
    registry.register_lazy_host_codegen("test", f"{inner}:make")
    registry.register_lazy_host_codegen("c", outer)
    assert registry.resolve_host_codegen("c").name == "outer-c"
    import sys

    assert sys.modules[outer].FOUND == ["main", "extra"]
    assert [s.state for s in registry.sources()] == ["loaded", "loaded"]

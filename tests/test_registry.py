"""The registry's semantics on real TVM targets, each test with its own Registry."""

from __future__ import annotations

import dataclasses
import re
import shutil

import pytest
import tvm
from tvm.target import Target

from tilelang_hostcg import (
    AmbiguousHostCodegenError,
    Controls,
    DuplicateRegistrationError,
    HostCodegen,
    HostCodegenError,
    HostCodegenHook,
    NoHostCodegenError,
    PluginLoadError,
    PluginWarning,
    Registry,
    global_func_host_codegen,
)

from .plugin_factory import CODEGEN_GROUP, HOOK_GROUP

LLVM_BUILD = global_func_host_codegen("target.build.llvm")
C_BUILD = global_func_host_codegen("target.build.c")


def codegen(name: str, *, priority: int = 0, when=None) -> HostCodegen:
    return HostCodegen(name, LLVM_BUILD, supports_target=when, priority=priority)


def hook(name: str, log: list[str], *, priority: int = 0) -> HostCodegenHook:
    def apply(mod, target_host, target):
        log.append(name)
        return mod

    return HostCodegenHook(name, apply, priority=priority)


CORE_OFF = frozenset({"tilelang-hostcg:llvm", "tilelang-hostcg:c"})


def discovered(modules, *items: tuple[str, str, str, str], controls: Controls | None = None,
               requires: dict[str, tuple[str, ...]] | None = None) -> Registry:
    """A registry discovering only the distributions of ``items`` (group, kind, value,
    distribution), each written as an installed distribution in ``modules``' folder (the
    core's codegens off)."""
    dists: dict[str, dict[str, dict[str, str]]] = {}
    for group, kind, value, dist in items:
        dists.setdefault(dist, {}).setdefault(group, {})[kind] = value
    for dist, entry_points in dists.items():
        modules.distribution(dist, entry_points, requires=(requires or {}).get(dist, ()))
    controls = controls or Controls()
    return Registry(discover=True, controls=dataclasses.replace(
        controls, only=frozenset(dists), disable=controls.disable | CORE_OFF))


# --------------------------------------------------------------------------- values
def test_dataclasses_reject_bad_fields():
    with pytest.raises(TypeError, match="name"):
        HostCodegen("", LLVM_BUILD)
    with pytest.raises(TypeError, match="build must be callable"):
        HostCodegen("x", "target.build.llvm")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="apply must be callable"):
        HostCodegenHook("x", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="priority"):
        HostCodegen("x", LLVM_BUILD, priority="high")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="supports_target"):
        HostCodegen("x", LLVM_BUILD, supports_target=3)  # type: ignore[arg-type]
    frozen = HostCodegen("x", LLVM_BUILD)
    with pytest.raises(AttributeError):
        frozen.name = "y"  # type: ignore[misc]


def test_registry_without_discovery_is_empty():
    registry = Registry()
    assert registry.sources() == []
    with pytest.raises(NoHostCodegenError) as info:
        registry.resolve_host_codegen(Target("llvm"))
    assert "'llvm'" in str(info.value) and "Available: <none>" in str(info.value)
    assert info.value.kind == "llvm"


# --------------------------------------------------------------------------- seed semantics
def test_duplicate_name_is_value_error_and_override_moves_to_the_end():
    registry = Registry()
    first, second, third = codegen("a"), codegen("b"), codegen("a")
    registry.register_host_codegen("llvm", first)
    registry.register_host_codegen("llvm", second)
    with pytest.raises(ValueError, match="'a' is already registered for target kind 'llvm'"):
        registry.register_host_codegen("llvm", third)
    with pytest.raises(DuplicateRegistrationError):
        registry.register_host_codegen("llvm", first)
    assert registry.register_host_codegen("llvm", third, override=True) is third
    # As in TileLang: the old entry is removed and the new one appended.
    assert [r.obj for r in registry.registrations(CODEGEN_GROUP, "llvm")] == [second, third]
    assert registry.resolve_host_codegen(Target("llvm")) is second


def test_hook_duplicate_and_override():
    registry, log = Registry(), []
    registry.register_host_codegen_hook("cuda", hook("h", log))
    with pytest.raises(ValueError, match="hook 'h' is already registered"):
        registry.register_host_codegen_hook("cuda", hook("h", log))
    registry.register_host_codegen_hook("cuda", hook("h", log, priority=1), override=True)
    assert [r.priority for r in registry.registrations(HOOK_GROUP, "cuda")] == [1]


def test_first_registered_wins_then_priority():
    registry = Registry()
    registry.register_host_codegen("llvm", codegen("first"))
    registry.register_host_codegen("llvm", codegen("second"))
    target = Target("llvm")
    assert registry.resolve_host_codegen(target).name == "first"
    assert registry.allowed_host_codegens_for_target(target) == ["first", "second"]
    registry.register_host_codegen("llvm", codegen("urgent", priority=5))
    assert registry.resolve_host_codegen(target).name == "urgent"
    assert registry.allowed_host_codegens_for_target(target) == ["urgent", "first", "second"]



def test_allowed_lists_the_preferred_codegen_first_as_resolution_picks_it():
    registry = Registry(controls=Controls(prefer={"llvm": "second"}))
    registry.register_host_codegen("llvm", codegen("first", priority=5))
    registry.register_host_codegen("llvm", codegen("second"))
    target = Target("llvm")
    assert registry.resolve_host_codegen(target).name == "second"
    assert registry.allowed_host_codegens_for_target(target) == ["second", "first"]

def test_predicate_selects_variant_by_target_attributes():
    registry = Registry()
    registry.register_host_codegen("llvm", codegen("generic"))
    registry.register_host_codegen(
        "llvm", codegen("arm", priority=10, when=lambda t: "aarch64" in str(t.attrs.get("mtriple", ""))))
    arm = Target({"kind": "llvm", "mtriple": "aarch64-linux-gnu"})
    x86 = Target({"kind": "llvm", "mtriple": "x86_64-linux-gnu"})
    assert registry.resolve_host_codegen(arm).name == "arm"
    assert registry.resolve_host_codegen(x86).name == "generic"
    assert registry.allowed_host_codegens_for_target(x86) == ["generic"]


def test_not_found_lists_available_names():
    registry = Registry()
    registry.register_host_codegen("llvm", codegen("only-arm", when=lambda t: False))
    with pytest.raises(NoHostCodegenError) as info:
        registry.resolve_host_codegen(Target("llvm"))
    assert "Available: only-arm" in str(info.value)
    assert info.value.available == ("only-arm",)
    with pytest.raises(HostCodegenError, match=r"'c'\. Available: <none>"):
        registry.resolve_host_codegen(Target("c"))


def test_hooks_with_target_none_return_module_unchanged():
    registry, log = Registry(), []
    registry.register_host_codegen_hook("cuda", hook("h", log))
    mod = tvm.IRModule()
    assert registry.apply_host_codegen_hooks(mod, Target("llvm"), None) is mod
    assert log == []


def test_hooks_run_by_priority_then_registration_order():
    registry, log = Registry(), []
    registry.register_host_codegen_hook("cuda", hook("b", log))
    registry.register_host_codegen_hook("cuda", hook("a", log))
    registry.register_host_codegen_hook("cuda", hook("first", log, priority=3))
    registry.apply_host_codegen_hooks(tvm.IRModule(), Target("llvm"), Target("cuda"))
    assert log == ["first", "b", "a"]


def test_hooks_transform_the_module():
    registry = Registry()

    def mark(mod, target_host, target):
        return mod.with_attr("hostcg_marked", target.kind.name)

    registry.register_host_codegen_hook("cuda", HostCodegenHook("mark", mark))
    out = registry.apply_host_codegen_hooks(tvm.IRModule(), Target("llvm"), Target("cuda"))
    assert str(out.attrs["hostcg_marked"]) == "cuda"


@pytest.mark.parametrize(("registered", "applied"),
                         [("hip", "rocm"), ("rocm", "rocm"), ("hip", "hip"), ("rocm", "hip")])
def test_hip_and_rocm_are_one_hook_kind(registered, applied):
    registry, log = Registry(), []
    registry.register_host_codegen_hook(registered, hook("h", log))
    target = Target("rocm")  # TVM 0.27 has no 'hip' kind; both names reach the hooks
    assert applied in ("hip", "rocm")
    registry.apply_host_codegen_hooks(tvm.IRModule(), Target("llvm"), target)
    assert log == ["h"]
    with pytest.raises(ValueError, match="already registered"):
        registry.register_host_codegen_hook(applied, hook("h", log))


def test_device_target_resolves_through_its_host():
    registry = Registry()
    registry.register_host_codegen("llvm", codegen("llvm"))
    registry.register_host_codegen("c", HostCodegen("c", C_BUILD))
    assert registry.resolve_host_codegen(Target("cuda", host="c")).name == "c"
    # no host: TVM's default host (llvm, since this TVM has LLVM)
    assert tvm.runtime.enabled("llvm")
    assert registry.resolve_host_codegen(Target("cuda")).name == "llvm"


def test_register_rejects_wrong_types():
    registry = Registry()
    with pytest.raises(TypeError, match="expects a HostCodegen"):
        registry.register_host_codegen("llvm", hook("h", []))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expects a HostCodegenHook"):
        registry.register_host_codegen_hook("cuda", codegen("x"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="import_path"):
        registry.register_lazy_host_codegen("llvm", "")


# --------------------------------------------------------------------------- lazy modules
def test_lazy_module_is_imported_on_first_use_and_only_once(modules, tmp_path):
    counter = tmp_path / "imports.txt"
    name = modules.write(f"""
        import tilelang_hostcg as h
        with open({str(counter)!r}, "a") as f:
            f.write("x")
        h.register_host_codegen("llvm", h.HostCodegen(
            "lazy", h.global_func_host_codegen("target.build.llvm")))
    """)
    registry = Registry()
    registry.register_lazy_host_codegen("llvm", name)
    assert not counter.exists()
    for _ in range(3):
        assert registry.resolve_host_codegen(Target("llvm")).name == "lazy"
    assert registry.allowed_host_codegens_for_target(Target("llvm")) == ["lazy"]
    assert counter.read_text() == "x"
    [source] = registry.sources()
    assert source.state == "loaded" and source.origin.distribution is None
    # the plugin's module-level registration landed in this registry, not the default one
    assert [r.origin.entry_point for r in registry.registrations()] == [f"llvm = {name}"]


def test_lazy_module_that_raises_leaves_nothing_behind(modules):
    name = modules.write("""
        import tilelang_hostcg as h
        build = h.global_func_host_codegen("target.build.llvm")
        h.register_host_codegen("llvm", h.HostCodegen("half", build))
        h.register_host_codegen_hook("cuda", h.HostCodegenHook("half-hook", lambda m, th, t: m))
        raise RuntimeError("boom after registering")
    """)
    registry = Registry()
    registry.register_host_codegen("c", HostCodegen("c", C_BUILD))
    registry.register_lazy_host_codegen("llvm", name)
    with pytest.raises(PluginLoadError) as info:
        registry.resolve_host_codegen(Target("llvm"))
    assert isinstance(info.value.__cause__, RuntimeError)
    assert "boom after registering" in str(info.value) and name in str(info.value)
    assert [r.obj.name for r in registry] == ["c"]
    assert registry.resolve_host_codegen(Target("c")).name == "c"  # other kinds keep working
    # not retried: the same error again, no second import attempt
    with pytest.raises(PluginLoadError):
        registry.resolve_host_codegen(Target("llvm"))


def test_lazy_failure_beside_a_working_provider_warns(modules):
    name = modules.write("raise ImportError('no native library')")
    registry = Registry()
    registry.register_host_codegen("llvm", codegen("fine"))
    registry.register_lazy_host_codegen("llvm", name)
    with pytest.warns(PluginWarning, match="no native library"):
        assert registry.resolve_host_codegen(Target("llvm")).name == "fine"
    assert registry.resolve_host_codegen(Target("llvm")).name == "fine"  # warned once


def test_lazy_module_registering_nothing_is_broken(modules):
    name = modules.write("X = 1")
    registry = Registry()
    registry.register_lazy_host_codegen("llvm", name)
    with pytest.raises(PluginLoadError, match="registered no host codegen for kind 'llvm'"):
        registry.resolve_host_codegen(Target("llvm"))


def test_lazy_module_resolving_during_its_own_import_does_not_deadlock(modules):
    name = modules.write("""
        import tilelang_hostcg as h
        from tvm.target import Target
        h.register_host_codegen("llvm", h.HostCodegen(
            "self-aware", h.global_func_host_codegen("target.build.llvm")))
        SEEN = h.resolve_host_codegen(Target("llvm")).name
    """)
    registry = Registry()
    registry.register_lazy_host_codegen("llvm", name)
    assert registry.resolve_host_codegen(Target("llvm")).name == "self-aware"
    import sys

    assert sys.modules[name].SEEN == "self-aware"


def test_keyboard_interrupt_propagates_and_can_retry(modules, tmp_path):
    flag = tmp_path / "interrupt-once"
    flag.write_text("1")
    name = modules.write(f"""
        import os
        import tilelang_hostcg as h
        h.register_host_codegen("llvm", h.HostCodegen(
            "retry", h.global_func_host_codegen("target.build.llvm")))
        if os.path.exists({str(flag)!r}):
            os.remove({str(flag)!r})
            raise KeyboardInterrupt
    """)
    registry = Registry()
    registry.register_lazy_host_codegen("llvm", name)
    with pytest.raises(KeyboardInterrupt):
        registry.resolve_host_codegen(Target("llvm"))
    assert list(registry) == []
    assert registry.sources()[0].state == "lazy"
    assert registry.resolve_host_codegen(Target("llvm")).name == "retry"


# --------------------------------------------------------------------------- distributions
def test_entry_point_attr_forms_register_with_provenance(modules):
    name = modules.write("""
        import tilelang_hostcg as h
        build = h.global_func_host_codegen("target.build.llvm")
        ONE = h.HostCodegen("one", build)
        MANY = [h.HostCodegenHook("h1", lambda m, th, t: m), h.HostCodegenHook("h2", lambda m, th, t: m)]
        def make():
            return h.HostCodegen("made", build)
    """)
    registry = discovered(modules, (CODEGEN_GROUP, "llvm", f"{name}:ONE", "dist-a"),
                          (CODEGEN_GROUP, "c", f"{name}:make", "dist-a"),
                          (HOOK_GROUP, "cuda", f"{name}:MANY", "dist-b"))
    assert registry.resolve_host_codegen(Target("llvm")).name == "one"
    assert registry.resolve_host_codegen(Target("c")).name == "made"
    hooks = registry.matching_hooks(Target("cuda"))
    assert [h.name for h in hooks] == ["h1", "h2"]
    assert {(r.origin.distribution, r.origin.entry_point) for r in hooks} == {
        ("dist-b", f"cuda = {name}:MANY")}


def test_wrong_type_from_entry_point_names_the_distribution(modules):
    name = modules.write("NOT_A_CODEGEN = 42")
    registry = discovered(modules, (CODEGEN_GROUP, "llvm", f"{name}:NOT_A_CODEGEN", "dist-bad"))
    with pytest.raises(PluginLoadError) as info:
        registry.resolve_host_codegen(Target("llvm"))
    text = str(info.value)
    assert "'dist-bad' 1.0" in text and f"llvm = {name}:NOT_A_CODEGEN" in text
    assert re.search(r"TILELANG_HOSTCG_DISABLE=\S*\bdist-bad\b", text), text
    assert isinstance(info.value.__cause__, TypeError)


def test_equal_priority_across_distributions_is_ambiguous(modules):
    name = modules.write("""
        import tilelang_hostcg as h
        build = h.global_func_host_codegen("target.build.llvm")
        A = h.HostCodegen("from-a", build)
        B = h.HostCodegen("from-b", build)
    """)
    items = ((CODEGEN_GROUP, "llvm", f"{name}:B", "dist-b"),
             (CODEGEN_GROUP, "llvm", f"{name}:A", "dist-a"))
    registry = discovered(modules, *items)
    with pytest.raises(AmbiguousHostCodegenError) as info:
        registry.resolve_host_codegen(Target("llvm"))
    assert info.value.candidates == (("from-a", "dist-a"), ("from-b", "dist-b"))
    assert "TILELANG_HOSTCG_PREFER=llvm=from-a" in str(info.value)
    preferring = Registry(discover=True, controls=Controls(
        only=frozenset({"dist-a", "dist-b"}), disable=CORE_OFF, prefer={"llvm": "from-b"}))
    assert preferring.resolve_host_codegen(Target("llvm")).name == "from-b"
    # registration in code belongs to no distribution and does not make a tie ambiguous
    mixed = Registry()
    mixed.register_host_codegen("llvm", codegen("in-code-1"))
    mixed.register_host_codegen("llvm", codegen("in-code-2"))
    assert mixed.resolve_host_codegen(Target("llvm")).name == "in-code-1"


def test_hook_order_across_distributions_is_sorted_by_distribution(modules):
    name = modules.write("""
        import tilelang_hostcg as h
        LOG = []
        def make(tag, priority=0):
            def apply(mod, th, t):
                LOG.append(tag)
                return mod
            return h.HostCodegenHook(tag, apply, priority=priority)
        Z = make("z")
        A = make("a")
        M = make("m", priority=1)
    """)
    items = [(HOOK_GROUP, "cuda", f"{name}:Z", "zeta"), (HOOK_GROUP, "cuda", f"{name}:A", "alpha"),
             (HOOK_GROUP, "cuda", f"{name}:M", "mid")]
    registry = discovered(modules, *items)
    registry.apply_host_codegen_hooks(tvm.IRModule(), Target("llvm"), Target("cuda"))
    import sys

    assert sys.modules[name].LOG == ["m", "a", "z"]


def test_core_codegens_are_advertised_like_plugins():
    registry = Registry(discover=True, controls=Controls(autoload=False))
    infos = {s.kind: s for s in registry.sources()}
    assert set(infos) == {"llvm", "c"}
    assert all(s.origin.distribution == "tilelang-hostcg" for s in infos.values())
    assert registry.resolve_host_codegen(Target("llvm")).name == "llvm"
    assert registry.resolve_host_codegen(Target("c")).name == "c"


def test_core_entry_points_match_pyproject():
    from pathlib import Path

    try:
        import tomllib
    except ImportError:  # Python 3.10: the same parser, published as tomli (in the test extra)
        import tomli as tomllib

    data = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    declared = data["project"]["entry-points"]["tilelang.host_codegen"]
    # advertised even with autoload off, where no metadata is read
    core = Registry(discover=True, controls=Controls(autoload=False)).sources()
    assert {(s.group, s.kind, s.value) for s in core} == {(CODEGEN_GROUP, k, v) for k, v in declared.items()}


def test_refresh_drops_distribution_registrations_and_keeps_code_ones(modules):
    name = modules.write("""
        import tilelang_hostcg as h
        A = h.HostCodegen("plugin", h.global_func_host_codegen("target.build.c"))
    """)
    folder = modules.distribution("dist-a", {CODEGEN_GROUP: {"c": f"{name}:A"}})
    registry = Registry(discover=True, controls=Controls(only=frozenset({"dist-a"}), disable=CORE_OFF))
    registry.register_host_codegen("llvm", codegen("mine"))
    assert registry.resolve_host_codegen(Target("c")).name == "plugin"
    shutil.rmtree(folder)  # uninstalled: the next refresh reads the metadata again
    registry.refresh()
    with pytest.raises(NoHostCodegenError), pytest.warns(PluginWarning, match="no installed distribution 'dist-a'"):
        registry.resolve_host_codegen(Target("c"))
    assert registry.resolve_host_codegen(Target("llvm")).name == "mine"


def test_resolution_cache_follows_registry_changes():
    registry = Registry()
    target = Target("llvm")
    registry.register_host_codegen("llvm", codegen("low"))
    assert registry.resolve_host_codegen(target).name == "low"
    registry.register_host_codegen("llvm", codegen("high", priority=1))
    assert registry.resolve_host_codegen(target).name == "high"
    registry.register_host_codegen("llvm", codegen("high", priority=-1), override=True)
    assert registry.resolve_host_codegen(target).name == "low"


def test_raising_predicate_warns_and_does_not_match():
    def bad(target):
        raise RuntimeError("predicate bug")

    registry = Registry()
    registry.register_host_codegen("llvm", codegen("buggy", priority=9, when=bad))
    registry.register_host_codegen("llvm", codegen("ok"))
    with pytest.warns(PluginWarning, match="predicate bug"):
        assert registry.resolve_host_codegen(Target("llvm")).name == "ok"


def test_disabled_provider_is_named_in_not_found(modules):
    registry = discovered(modules, (CODEGEN_GROUP, "cuda_host", "x.y", "dist-off"),
                          controls=Controls(disable=frozenset({"dist-off"})))
    with pytest.raises(NoHostCodegenError, match="'dist-off' provides it but disabled by"):
        registry.resolve_host_codegen(Target("cuda_host"))


def test_incompatible_provider_raises_plugin_load_error_with_requirement(modules):
    registry = discovered(modules, (CODEGEN_GROUP, "cuda_host", "x.y", "dist-old"),
                          requires={"dist-old": ("apache-tvm>=9",)})
    with pytest.raises(PluginLoadError, match=r"requires 'apache-tvm>=9' but apache-tvm 0\.27"):
        registry.resolve_host_codegen(Target("cuda_host"))


def test_parse_target_accepts_tilelang_hip_spelling():
    from tilelang_hostcg import parse_target

    assert parse_target("hip").kind.name == "rocm"
    assert parse_target('{"kind": "hip", "mcpu": "gfx942"}').kind.name == "rocm"
    assert parse_target({"kind": "hip"}, host="llvm").host.kind.name == "llvm"


def test_plugin_may_register_only_for_kinds_its_distribution_advertises(modules):
    name = modules.write("""
        import tilelang_hostcg as h
        h.register_host_codegen("c", h.HostCodegen("side-door", h.global_func_host_codegen("target.build.c")))
        h.register_host_codegen("llvm", h.HostCodegen("own", h.global_func_host_codegen("target.build.llvm")))
    """)
    both = discovered(modules, (CODEGEN_GROUP, "llvm", name, "dist-x"), (CODEGEN_GROUP, "c", name, "dist-x"))
    assert both.resolve_host_codegen(Target("llvm")).name == "own"
    assert both.resolve_host_codegen(Target("c")).name == "side-door"
    only_llvm = discovered(modules, (CODEGEN_GROUP, "llvm", name, "dist-y"))
    with pytest.raises(PluginLoadError, match="host codegen for kind 'c', which distribution 'dist-y' "
                                              "does not advertise"):
        only_llvm.resolve_host_codegen(Target("llvm"))
    assert list(only_llvm) == []  # rolled back, 'c' untouched
    # a lazy module registered in code belongs to no distribution: no such restriction
    in_code = Registry()
    in_code.register_lazy_host_codegen("llvm", name)
    assert in_code.resolve_host_codegen(Target("llvm")).name == "own"
    assert in_code.resolve_host_codegen(Target("c")).name == "side-door"


def test_resolution_record_gives_every_verdict_and_the_choice():
    def raises(target):
        raise RuntimeError("exploded")

    registry = Registry()
    registry.register_host_codegen("llvm", codegen("one", priority=40, when=lambda t: 1))
    registry.register_host_codegen("llvm", codegen("none", priority=30, when=lambda t: None))
    registry.register_host_codegen("llvm", codegen("raises", priority=20, when=raises))
    registry.register_host_codegen("llvm", codegen("false", priority=10, when=lambda t: False))
    registry.register_host_codegen("llvm", codegen("true", when=lambda t: True))
    registry.register_host_codegen("llvm", HostCodegen(
        "nobuild", global_func_host_codegen("target.build.does_not_exist"), priority=50))
    with pytest.warns(PluginWarning) as caught:
        record = registry.resolution(Target("llvm"))
    verdicts = {c.registration.name: (c.verdict, c.buildable) for c in record.candidates}
    assert verdicts == {
        "nobuild": ("missing-build", False), "one": ("not-bool", True),
        "none": ("not-bool", True), "raises": ("raised", True), "false": ("no-match", True),
        "true": ("match", True)}
    assert record.choice is not None and record.choice.registration.name == "true"
    assert record.why == "only" and record.error is None
    assert [c.registration.name for c in record.matching] == ["true"]
    messages = " ".join(str(w.message) for w in caught)
    assert "'one'" in messages and "'none'" in messages and "exploded" in messages
    # Resolution and the listing of allowed codegens give the record's answer.
    with pytest.warns(PluginWarning):
        assert registry.resolve_host_codegen(Target("llvm")).name == "true"
    with pytest.warns(PluginWarning):
        assert registry.allowed_host_codegens_for_target(Target("llvm")) == ["true"]


def test_a_preference_naming_no_codegen_is_in_the_record_and_warns_once():
    registry = Registry(controls=Controls(prefer={"llvm": "lvvm-fast"}))
    registry.register_host_codegen("llvm", codegen("llvm-fast"))
    with pytest.warns(PluginWarning, match="has no codegen named 'lvvm-fast'") as caught:
        record = registry.resolution(Target("llvm"))
        assert registry.resolve_host_codegen(Target("llvm")).name == "llvm-fast"
    assert record.preferred == "lvvm-fast" and record.choice is not None
    assert record.preference_problem is not None and "'llvm-fast'" in record.preference_problem
    assert len([w for w in caught if "lvvm-fast" in str(w.message)]) == 1
    fixed = Registry(controls=Controls(prefer={"llvm": "llvm-fast"}))
    fixed.register_host_codegen("llvm", codegen("llvm-fast"))
    assert fixed.resolution(Target("llvm")).preference_problem is None


def test_a_target_nested_thousands_deep_is_a_target_parse_error() -> None:
    from tilelang_hostcg import TargetParseError, parse_target

    for deep in ('{"kind": ' + '{"a": ' * 5000 + "1" + "}" * 5001,
                 '{"kind": "llvm", "keys": ' + "[" * 5000 + "]" * 5000 + "}",
                 '{"kind": "llvm", "keys": ' + "[" * 100 + "]" * 100 + "}"):
        with pytest.raises(TargetParseError, match="nests more than") as info:
            parse_target(deep)
        assert len(str(info.value)) < 400
    nested: dict[str, object] = {"kind": "llvm"}
    for _ in range(3000):
        nested = {"kind": "llvm", "host": nested}
    with pytest.raises(TargetParseError, match="nests more than"):
        parse_target(nested)
    assert parse_target('{"kind": "llvm", "keys": ["cpu"]}').kind.name == "llvm"

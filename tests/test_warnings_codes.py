"""The package's warnings are classes by code under :class:`PluginWarning` (as pluggy's are), each given
where it is worded, and a warning given once per process is once per finding (its code and facts),
never per wording."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest
from tvm.target import Target

import tilelang_hostcg
import tilelang_hostcg.core as core
from tilelang_hostcg import Registry
from tilelang_hostcg.core import (
    NATIVE_DECLARATION,
    PROCESS,
    ControlPluginWarning,
    NativeDeclarationPluginWarning,
    NativeUndeclaredPluginWarning,
    PluginWarning,
    PredicatePluginWarning,
    SkippedPluginWarning,
    warn_once,
    warn_plugin,
    warning_class,
)
from tilelang_hostcg.registry import capture

ROOT = Path(tilelang_hostcg.__file__).parent


def _classes() -> list[type[PluginWarning]]:
    found, todo = [], [PluginWarning]
    while todo:
        category = todo.pop()
        found.append(category)
        todo += category.__subclasses__()
    return found


@pytest.fixture
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process as if nothing had been warned yet."""
    monkeypatch.setattr(PROCESS, "warned", set())


def test_each_code_is_one_class_under_the_root_and_the_core_exports_it() -> None:
    classes = _classes()
    assert len(classes) >= 12
    codes = [category.code for category in classes]
    assert len(set(codes)) == len(codes), codes
    for category in classes:
        assert warning_class(category.code) is category
        assert issubclass(category, PluginWarning) and issubclass(category, UserWarning)
        assert category.__name__.endswith("PluginWarning") and category.__doc__
        assert getattr(core, category.__name__) is category  # through the core's front door
    assert warning_class("no-such-code") is PluginWarning
    # Only a failed plugin skipped is reported by check as that plugin.
    assert [c for c in classes if c.failed_plugin] == [SkippedPluginWarning]
    assert tilelang_hostcg.PluginWarning is PluginWarning and "SkippedPluginWarning" not in tilelang_hostcg.__all__


def test_every_warning_given_in_the_package_names_its_class() -> None:
    """Each call of ``warn_once`` or ``warn_plugin`` names a class (or its code) other than the root,
    but in modules where another part of the package decides what they say."""
    bare = []
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("warn_once", "warn_plugin") and len(node.args) < 2):
                bare.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert bare == []


def test_the_same_facts_warn_once_and_different_facts_in_the_same_words_twice(fresh_process: None) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_once("TILELANG_HOSTCG_X=1 cannot do it", ControlPluginWarning, facts=("TILELANG_HOSTCG_X", "1"))
        warn_once("worded otherwise", ControlPluginWarning, facts=("TILELANG_HOSTCG_X", "1"))
        warn_once("TILELANG_HOSTCG_X=1 cannot do it", ControlPluginWarning, facts=("TILELANG_HOSTCG_X", "2"))
        warn_once("TILELANG_HOSTCG_X=1 cannot do it", NativeUndeclaredPluginWarning, facts=("TILELANG_HOSTCG_X", "1"))
        warn_once("by its code", "control", facts=("TILELANG_HOSTCG_X", "2"))
    assert [(w.category, str(w.message)) for w in caught] == [
        (ControlPluginWarning, "TILELANG_HOSTCG_X=1 cannot do it"),
        (ControlPluginWarning, "TILELANG_HOSTCG_X=1 cannot do it"),
        (NativeUndeclaredPluginWarning, "TILELANG_HOSTCG_X=1 cannot do it")]
    assert [w.message.facts for w in caught] == [  # type: ignore[union-attr]
        ("TILELANG_HOSTCG_X", "1"), ("TILELANG_HOSTCG_X", "2"), ("TILELANG_HOSTCG_X", "1")]


def test_a_warning_made_an_error_is_not_counted_as_given(fresh_process: None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ControlPluginWarning)
        with pytest.raises(ControlPluginWarning):
            warn_once("raised", ControlPluginWarning, facts=("A",))
    with pytest.warns(ControlPluginWarning, match="raised"):
        warn_once("raised", ControlPluginWarning, facts=("A",))


def test_a_capture_keeps_each_finding_once_by_its_key() -> None:
    caught: list[PluginWarning] = []
    with capture(caught):
        warn_plugin("one plugin skipped", SkippedPluginWarning, facts=("g", "k", "m", "d", "for x"))
        warn_plugin("the same, worded anew", SkippedPluginWarning, facts=("g", "k", "m", "d", "for x"))
        warn_plugin("one plugin skipped", SkippedPluginWarning, facts=("g", "k", "m", "other", "for x"))
        warnings.warn("a root warning of another package", PluginWarning, stacklevel=1)
        warnings.warn("a root warning of another package", PluginWarning, stacklevel=1)
        warnings.warn("another root warning", PluginWarning, stacklevel=1)
    assert [(type(w), str(w)) for w in caught] == [
        (SkippedPluginWarning, "one plugin skipped"), (SkippedPluginWarning, "one plugin skipped"),
        (PluginWarning, "a root warning of another package"), (PluginWarning, "another root warning")]
    assert all(w.failed_plugin is isinstance(w, SkippedPluginWarning) for w in caught)


def _codegen(name: str, **kw: object) -> tilelang_hostcg.HostCodegen:
    return tilelang_hostcg.HostCodegen(name, lambda mod, target: mod, **kw)  # type: ignore[arg-type]


def test_a_predicate_that_raises_is_its_class_with_its_facts() -> None:
    registry = Registry()
    registry.register_host_codegen("llvm", _codegen("odd", supports_target=lambda t: 1))
    registry.register_host_codegen("llvm", _codegen("plain", priority=-1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert registry.resolve_host_codegen(Target("llvm")).name == "plain"
    [warning] = caught
    assert warning.category is PredicatePluginWarning
    code, facts = warning.message.key  # type: ignore[attr-defined]
    assert (code, facts[:6]) == ("predicate-failed", ("llvm", "odd", None, None, "not-bool", "int 1"))


def test_a_native_caller_without_its_declaration_is_warned_once_by_its_class(fresh_process: None) -> None:
    from tilelang_hostcg.clients._native import _served

    caller = {"__name__": "some_compiler.lower"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _served(caller, "build_host") and _served(caller, "build_host")
        assert _served(caller, "apply_hooks")  # another function: another finding
        assert not _served({**caller, NATIVE_DECLARATION: 99}, "build_host")
    assert [(w.category, w.message.facts) for w in caught] == [  # type: ignore[union-attr]
        (NativeUndeclaredPluginWarning, ("some_compiler.lower", "build_host")),
        (NativeUndeclaredPluginWarning, ("some_compiler.lower", "apply_hooks")),
        (NativeDeclarationPluginWarning, ("some_compiler.lower", "99", "newer", "1 and 2"))]


def test_a_finding_is_worded_by_the_diagnosis_layer_alone() -> None:
    """A code with words in ``diagnosis`` is given only as a finding (``diagnosis.warn``): no module
    outside that layer names its class in a call of ``warn_plugin`` or ``warn_once``, and each has a
    class. The finding's words are its facts' alone: the same facts, the same words."""
    from tilelang_hostcg.diagnosis import Finding
    from tilelang_hostcg.diagnosis._words import WORDS, words

    worded = {warning_class(code).__name__ for code in WORDS}
    assert all(warning_class(code).code == code for code in WORDS)
    assert {"control", "plugin-metadata", "plugin-skipped", "tilelang-builds"} <= set(WORDS)
    outside = []
    for path in ROOT.rglob("*.py"):
        if path.parent.name == "diagnosis":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("warn_once", "warn_plugin")):
                named = ({a.id for a in node.args if isinstance(a, ast.Name)} & worded
                         | {a.value for a in node.args if isinstance(a, ast.Constant) and a.value in WORDS})
                if named:
                    outside.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert outside == []
    finding = Finding.of(NativeUndeclaredPluginWarning, "cc", module="cc", function="build_host")
    assert finding.code == "native-undeclared" and finding.key == ("cc", "build_host")
    assert words(finding) == words(Finding.of(NativeUndeclaredPluginWarning, "elsewhere", module="cc",
                                              function="build_host"))
    assert f"cc calls tilelang_hostcg.native.build_host without declaring {NATIVE_DECLARATION} = 1" in words(finding)


def test_the_scan_gives_a_metadata_problem_as_a_finding_known_by_its_facts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Metadata the scan cannot use is a finding: its warning is known by the folder, the problem and the
    file (two distributions broken alike are two warnings), worded by the diagnosis layer from those facts
    alone; what is ignored is data too."""
    from importlib.metadata import PathDistribution

    from tilelang_hostcg.core import MetadataPluginWarning
    from tilelang_hostcg.diagnosis import Finding, words
    from tilelang_hostcg.discovery._planning import scan_environment
    from tilelang_hostcg.environment import unreadable_finding

    folders = []
    for name in ("hcgw-one", "hcgw-two"):
        folder = tmp_path / f"{name.replace('-', '_')}-1.0.dist-info"
        folder.mkdir()
        (folder / "METADATA").write_bytes(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\nAuthor: J\xfcrgen\n".encode("latin-1"))
        (folder / "entry_points.txt").write_text(f"[tilelang.host_codegen]\nx = {name.replace('-', '_')}:CG\n")
        folders.append(str(folder))
    monkeypatch.syspath_prepend(str(tmp_path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        index = scan_environment("0.0")
    given = sorted((w.message for w in caught if str(tmp_path) in str(w.message)), key=str)
    found = sorted((p for p in index.problems if str(p["folder"]).startswith(str(tmp_path))), key=words)
    assert [type(w) for w in given] == [MetadataPluginWarning] * 2 and all(isinstance(p, Finding) for p in found)
    for folder, warning, finding in zip(folders, given, found, strict=True):
        assert warning.key == ("plugin-metadata", finding.key)  # type: ignore[attr-defined]
        assert finding.key[:3] == (folder, "not-utf-8", "METADATA") and finding["ignored"] == "distribution"
        assert str(warning) == words(finding)
        assert str(warning).startswith(f"distribution metadata {folder!r}: its METADATA cannot be used (it is not "
                                       "UTF-8: invalid start byte at byte ")
        assert "; the distribution is ignored. Reinstall it (" in str(warning)
    denied = unreadable_finding(PathDistribution(Path(folders[0])), "entry_points.txt")
    assert denied.key[:3] == (folders[0], "unreadable", "entry_points.txt")
    assert words(denied) == (
        f"distribution metadata {folders[0]!r}: its entry_points.txt cannot be read by this user (permission denied: "
        "installed by another user under a restrictive umask?); the distribution is ignored. Make the folder readable "
        f"(its owner can run `chmod -R a+rX {folders[0]}`, and the same for the package's own folder) or reinstall "
        "it as this user")


def test_a_control_problem_is_facts_worded_by_the_diagnosis_layer(fresh_process: None) -> None:
    """A control that cannot do what it says is its variable, its item and what is wrong (with the facts
    that word it); the words are diagnosis's, and the warning is known by the variable and item."""
    from tilelang_hostcg.diagnosis import Finding
    from tilelang_hostcg.diagnosis._words import words
    from tilelang_hostcg.discovery import Controls

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        controls = Controls.from_environ({"TILELANG_HOSTCG_PREFR": "llvm=x"})
    [problem] = controls.problems
    assert (problem.variable, problem.item, problem.problem) == ("TILELANG_HOSTCG_PREFR", "llvm=x", "no-control")
    assert dict(problem.details)["guess"] == "TILELANG_HOSTCG_PREFER"
    assert problem.finding.code == "control" and problem.finding.key == ("TILELANG_HOSTCG_PREFR", "llvm=x")
    assert problem.message == words(problem.finding)
    assert problem.message.startswith("'TILELANG_HOSTCG_PREFR' is not a tilelang-hostcg control and has no effect "
                                      "(did you mean 'TILELANG_HOSTCG_PREFER'?)")
    assert [(w.category, str(w.message), w.message.facts) for w in caught] == [  # type: ignore[union-attr]
        (ControlPluginWarning, problem.message, ("TILELANG_HOSTCG_PREFR", "llvm=x"))]
    # The same facts from elsewhere, the same words; another guess, other words.
    same = Finding.of(ControlPluginWarning, "elsewhere", **dict(problem.finding.facts))
    assert words(same) == problem.message
    other = Finding.of(ControlPluginWarning, "x", **{**dict(problem.finding.facts), "guess": None})
    assert "did you mean" not in words(other)


def test_a_skipped_plugin_is_a_finding_and_its_error_has_the_same_words() -> None:
    """A plugin that failed to load is a finding (its group, kind, value, distribution and what it was
    skipped for tell it; the exception, the site and what is wrong with its entry point word it); the
    warning and the error raised for it are worded from it by diagnosis alone."""
    from tilelang_hostcg.core import CODEGEN_GROUP, Origin, SourceState
    from tilelang_hostcg.diagnosis import plugin_advice, plugin_failure, words
    from tilelang_hostcg.discovery import Controls
    from tilelang_hostcg.registry import advice, failure_text
    from tilelang_hostcg.registry._failures import failure_finding
    from tilelang_hostcg.registry._resolution import load_error
    from tilelang_hostcg.registry._sources import SourceInfo

    try:
        __import__("tilelang_hostcg.diagnosys")
    except ModuleNotFoundError as exc:
        error = exc
    origin = Origin("wrong-dist", "1.0", CODEGEN_GROUP, "llvm = tilelang_hostcg.diagnosys:make")
    info = SourceInfo(CODEGEN_GROUP, "llvm", "tilelang_hostcg.diagnosys:make", origin, SourceState.BROKEN,
                      None, error)
    finding = failure_finding(info, Controls(), what="target 'llvm'")
    assert finding.category is SkippedPluginWarning
    assert finding.key == (CODEGEN_GROUP, "llvm", "tilelang_hostcg.diagnosys:make", "wrong-dist", "target 'llvm'")
    assert (finding["wrong"], finding["wrong_name"], finding["wrong_guess"], finding["error"]) == (
        "module", "tilelang_hostcg.diagnosys", "tilelang_hostcg.diagnosis", "ModuleNotFoundError")
    assert finding["skip"] == "TILELANG_HOSTCG_DISABLE=wrong-dist"
    assert words(finding) == f"{plugin_failure(finding)}; it is skipped for target 'llvm'. {plugin_advice(finding)}"
    assert failure_text(info) == plugin_failure(finding) == (
        "plugin distribution 'wrong-dist' 1.0, entry point 'llvm = tilelang_hostcg.diagnosys:make' in group "
        f"{CODEGEN_GROUP!r} failed to load: its entry point is wrong: 'tilelang_hostcg.diagnosys:make' names "
        "module 'tilelang_hostcg.diagnosys', which does not exist (did you mean 'tilelang_hostcg.diagnosis'?)")
    assert advice(info) == plugin_advice(finding)
    assert str(load_error("cannot build", "llvm", info, Controls())) == (
        f"cannot build: {plugin_failure(finding)}. {plugin_advice(finding)}")


def test_a_preference_naming_no_codegen_is_decided_once_as_data(fresh_process: None) -> None:
    """The resolution keeps the ``PREFER`` problem as facts; its warning, its record's words and ``check``'s
    key are read from it (never from its words)."""
    from tilelang_hostcg.discovery import Controls

    registry = Registry(controls=Controls(prefer={"llvm": "lvvm-fast"}))
    registry.register_host_codegen("llvm", _codegen("llvm-fast"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        record = registry.resolution(Target("llvm"))
        registry.resolve_host_codegen(Target("llvm"))
    problem = record.unknown_preference
    assert problem is not None and (problem.problem, dict(problem.details)["guess"]) == ("no-codegen-name", "llvm-fast")
    assert record.preference_problem == problem.message
    assert [(w.category, str(w.message), w.message.key) for w in caught] == [  # type: ignore[union-attr]
        (ControlPluginWarning, problem.message, ("control", ("TILELANG_HOSTCG_PREFER", "llvm=lvvm-fast")))]

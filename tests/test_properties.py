"""Property-based tests: target parsing never fails badly, and the registry keeps its
invariants under any sequence of calls (checked against a small model of it)."""

from __future__ import annotations

import contextlib
import io
import json
import sys
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tvm.target import Target

from tilelang_hostcg import (
    DuplicateRegistrationError,
    HostCodegen,
    HostCodegenHook,
    NoHostCodegenError,
    PluginLoadError,
    PluginWarning,
    Registry,
    TargetParseError,
    parse_target,
)

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

# --------------------------------------------------------------------------- targets

KINDS = ["llvm", "c", "cuda", "cuda_host", "rocm", "hip", "metal", "vulkan", "opencl", "test",
         "composite", "nvptx", "webgpu", "ext_dev", "hexagon", "", "LLVM", "llvm ", "x"]
ATTRS = ["kind", "host", "keys", "mcpu", "mattr", "mtriple", "arch", "tag", "device", "libs",
         "max_num_threads", "thread_warp_size", "from_device", "model", "opt-level"]

json_scalars = (st.none() | st.booleans() | st.integers() | st.floats()
                | st.text(max_size=12) | st.sampled_from(KINDS))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(ATTRS) | st.text(max_size=6), inner, max_size=4),
    max_leaves=8)
target_dicts = st.dictionaries(st.sampled_from(ATTRS) | st.text(max_size=6), json_values,
                               max_size=5)
kind_dicts = st.builds(lambda kind, rest: {**rest, "kind": kind}, st.sampled_from(KINDS),
                       target_dicts)
option_strings = st.builds(
    lambda kind, options: " ".join([kind, *options]), st.sampled_from(KINDS),
    st.lists(st.from_regex(r"-{1,2}[a-z_]{1,8}(=[\w,.=-]{0,10})?", fullmatch=True), max_size=3))
target_texts = (st.text() | option_strings | st.builds(json.dumps, kind_dicts)
                | st.builds(lambda d: json.dumps(d)[:-1], kind_dicts)  # truncated JSON
                | st.sampled_from(KINDS))


def check_parse(spec: Any, host: Any = None) -> None:
    """``parse_target`` gives a ``Target`` or a one-line ``TargetParseError``, nothing else."""
    try:
        result = parse_target(spec) if host is None else parse_target(spec, host)
    except TargetParseError as exc:
        assert isinstance(exc, ValueError)
        message = str(exc)
        assert message and "\n" not in message and "\r" not in message, repr(message)
    else:
        assert isinstance(result, Target)


@SETTINGS
@given(target_texts)
def test_any_text_is_a_target_or_one_line_error(text: str) -> None:
    check_parse(text)


@SETTINGS
@given(kind_dicts | target_dicts)
def test_any_json_dict_is_a_target_or_one_line_error(spec: dict[str, Any]) -> None:
    check_parse(spec)


@settings(max_examples=60, deadline=None)
@given(target_texts | kind_dicts, st.sampled_from(KINDS) | kind_dicts)
def test_any_target_and_host_pair(spec: Any, host: Any) -> None:
    check_parse(spec, host)


@settings(max_examples=40, deadline=None)
@given(st.integers() | st.binary() | st.lists(st.text(max_size=4), max_size=3) | st.none()
       | st.floats() | st.tuples(st.text(max_size=3)))
def test_other_types_are_rejected_with_one_line(spec: Any) -> None:
    with pytest.raises(TargetParseError) as info:
        parse_target(spec)
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------- registry model

CODEGEN_KINDS = ["test", "composite", "cuda_host"]
HOOK_KINDS = ["cuda", "rocm", "hip"]
CODE_NAMES = ["a", "b", "c"]
PRIORITIES = [-1, 0, 1]


@dataclass(frozen=True)
class LazyModule:
    """What a lazy module registers when imported (and whether it then raises)."""

    kind: str
    codegen: str
    priority: int = 0
    hook: str | None = None  # also registers this hook for "cuda"
    raises: bool = False
    hands_on_to: str | None = None  # registers that lazy module for its kind instead

    def source(self, names: dict[str, str]) -> str:
        if self.hands_on_to:
            return ("import tilelang_hostcg as hc\n"
                    f"hc.register_lazy_host_codegen({self.kind!r}, {names[self.hands_on_to]!r})\n")
        lines = ["import tilelang_hostcg as hc",
                 f"CG = hc.HostCodegen({self.codegen!r}, lambda mod, target: mod, "
                 f"priority={self.priority})",
                 f"hc.register_host_codegen({self.kind!r}, CG)"]
        if self.hook:
            lines += [f"HOOK = hc.HostCodegenHook({self.hook!r}, lambda mod, th, t: mod)",
                      'hc.register_host_codegen_hook("cuda", HOOK)']
        if self.raises:
            lines.append('raise RuntimeError("fails after registering")')
        return "\n".join(lines) + "\n"


LAZY = {
    "m0": LazyModule("test", "lazy0"),
    "m1": LazyModule("test", "lazy1", priority=1),
    "m2": LazyModule("composite", "lazy2"),
    "m3": LazyModule("composite", "lazy3", priority=-1),
    "m4": LazyModule("cuda_host", "lazy4"),
    "m5": LazyModule("test", "lazy5", priority=5, raises=True),
    "m6": LazyModule("test", "lazy6", hook="lazyhook6"),
    "m7": LazyModule("test", "", hands_on_to="m0"),
}


@pytest.fixture(scope="module")
def lazy_modules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The modules of ``LAZY`` written to a folder on ``sys.path``: short name -> import name."""
    folder: Path = tmp_path_factory.mktemp("lazy_modules")
    prefix = f"hcgprop_{uuid.uuid4().hex[:8]}_"
    names = {short: prefix + short for short in LAZY}
    for short, spec in LAZY.items():
        (folder / f"{names[short]}.py").write_text(spec.source(names))
    sys.path.insert(0, str(folder))
    try:
        yield names
    finally:
        sys.path.remove(str(folder))
        for name in names.values():
            sys.modules.pop(name, None)


@dataclass
class Entry:
    name: str
    label: str  # which registration call (or lazy module) made the object
    priority: int
    seq: int
    matches: bool = True


@dataclass
class Model:
    """What the registry should contain, kept by hand."""

    codegens: dict[str, list[Entry]] = field(default_factory=dict)
    hooks: dict[str, list[Entry]] = field(default_factory=dict)
    # kind -> [module, state, registered in code (the kind's one lazy module, as in TileLang)]
    sources: dict[str, list[list[Any]]] = field(default_factory=dict)
    seq: int = 0

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def register(self, table: dict[str, list[Entry]], kind: str, entry: Entry,
                 override: bool) -> str | None:
        entries = table.setdefault(kind, [])
        for index, old in enumerate(entries):
            if old.name == entry.name:
                if not override:
                    return "DuplicateRegistrationError"
                del entries[index]  # as in TileLang: removed, and the new one appended
                break
        entry.seq = self.next_seq()
        entries.append(entry)
        entries.sort(key=lambda e: (-e.priority, e.seq))
        return None

    def lazy(self, kind: str, module: str, in_code: bool = True) -> None:
        sources = self.sources.setdefault(kind, [])
        if not in_code:  # registered by a lazy module while it loads: one more source
            if all(s[0] != module for s in sources):
                sources.append([module, "lazy", False])
            return
        # In code, the kind's lazy module is replaced; one never imported is dropped.
        same = None
        for source in list(sources):
            if source[0] == module:
                same = source
            elif source[2]:
                source[2] = False
                if source[1] in ("lazy", "broken"):
                    sources.remove(source)
        if same is not None:
            same[2] = True
        else:
            sources.append([module, "lazy", True])

    def load(self, kind: str) -> None:
        while pending := [s for s in self.sources.get(kind, []) if s[1] == "lazy"]:
            for source in pending:
                spec = LAZY[source[0]]
                if spec.raises or spec.kind != kind:
                    source[1] = "broken"  # raised, or registered nothing for this kind
                    continue
                source[1] = "loaded"
                if spec.hands_on_to:
                    self.lazy(kind, spec.hands_on_to, in_code=False)
                    continue
                self.register(self.codegens, kind,
                              Entry(spec.codegen, source[0], spec.priority, 0), False)
                if spec.hook:
                    self.register(self.hooks, "cuda", Entry(spec.hook, source[0], 0, 0), False)

    def resolve(self, kind: str) -> tuple[str, ...]:
        self.load(kind)
        matched = [e for e in self.codegens.get(kind, []) if e.matches]
        if not matched:
            broken = any(s[1] == "broken" for s in self.sources.get(kind, []))
            return ("PluginLoadError",) if broken else ("NoHostCodegenError",)
        return (matched[0].name, matched[0].label)

    def refresh(self) -> None:
        for sources in self.sources.values():
            for source in sources:
                if source[1] == "broken":
                    source[1] = "lazy"


def canonical(kind: str) -> str:
    return "rocm" if kind == "hip" else kind


ops = st.lists(st.one_of(
    st.tuples(st.just("register"), st.sampled_from(CODEGEN_KINDS), st.sampled_from(CODE_NAMES),
              st.sampled_from(PRIORITIES), st.booleans(), st.booleans()),
    st.tuples(st.just("hook"), st.sampled_from(HOOK_KINDS), st.sampled_from(CODE_NAMES),
              st.sampled_from(PRIORITIES), st.booleans()),
    # A lazy module under its own kind (usually) or another one (registers nothing there).
    st.sampled_from(sorted(LAZY)).flatmap(lambda m: st.tuples(
        st.just("lazy"), st.sampled_from([LAZY[m].kind] * 3 + CODEGEN_KINDS), st.just(m))),
    st.tuples(st.just("resolve"), st.sampled_from(CODEGEN_KINDS)),
    st.tuples(st.just("hooks"), st.sampled_from(["cuda", "rocm"])),
    st.tuples(st.just("refresh")),
), max_size=25)

_TARGETS: dict[str, tuple[Target, Target]] = {}


def targets(kind: str) -> tuple[Target, Target]:
    """Two distinct ``Target`` objects of ``kind`` (made once: TVM is slowish at it)."""
    if kind not in _TARGETS:
        _TARGETS[kind] = (Target(kind), Target(kind))
    return _TARGETS[kind]


@SETTINGS
@example([("lazy", "test", "m7"), ("lazy", "composite", "m7"), ("resolve", "composite")], True)
@example([("lazy", "test", "m5"), ("register", "test", "a", -1, False, True), ("refresh",)], True)
@example([("lazy", "composite", "m6"), ("lazy", "test", "m6"), ("hooks", "cuda")], True)
@given(ops, st.booleans())
def test_registry_matches_model_under_any_call_sequence(
        lazy_modules: dict[str, str], calls: list[tuple[Any, ...]], purge: bool) -> None:
    if purge:  # exercise first imports as well as replays into a new registry
        for name in lazy_modules.values():
            sys.modules.pop(name, None)
    registry, model = Registry(), Model()
    labels: dict[int, str] = {}  # id(codegen or hook) -> label
    keep: list[object] = []  # keeps labelled objects alive so ids stay unique
    short = {name: s for s, name in lazy_modules.items()}

    def label(obj: object) -> str:
        if id(obj) in labels:
            return labels[id(obj)]
        module = getattr(obj, "build", getattr(obj, "apply", None)).__module__
        return short[module]

    def check_resolve(kind: str) -> None:
        expected = model.resolve(kind)
        answers = []
        for target in (*targets(kind), targets(kind)[0]):
            try:
                codegen = registry.resolve_host_codegen(target)
                answers.append((codegen.name, label(codegen)))
            except PluginLoadError:
                answers.append(("PluginLoadError",))
            except NoHostCodegenError:
                answers.append(("NoHostCodegenError",))
        # Deterministic: the same answer every time, for every target object, and the model's.
        assert answers == [expected] * 3

    def check_hooks(kind: str) -> None:
        got = [(r.name, label(r.obj)) for r in registry.matching_hooks(targets(kind)[0])]
        assert got == [(e.name, e.label) for e in model.hooks.get(kind, [])]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        for step, call in enumerate([*calls, *[("resolve", k) for k in CODEGEN_KINDS],
                                     ("hooks", "cuda"), ("hooks", "rocm")]):
            op = call[0]
            if op == "register":
                _, kind, name, priority, override, matches = call
                codegen = HostCodegen(name, lambda mod, target: mod, priority=priority,
                                      supports_target=None if matches else (lambda t: False))
                keep.append(codegen)
                labels[id(codegen)] = f"call{step}"
                expected = model.register(model.codegens, kind,
                                          Entry(name, f"call{step}", priority, 0, matches),
                                          override)
                try:
                    registry.register_host_codegen(kind, codegen, override=override)
                    got = None
                except DuplicateRegistrationError:
                    got = "DuplicateRegistrationError"
                assert got == expected
            elif op == "hook":
                _, kind, name, priority, override = call
                hook = HostCodegenHook(name, lambda mod, th, t: mod, priority=priority)
                keep.append(hook)
                labels[id(hook)] = f"call{step}"
                expected = model.register(model.hooks, canonical(kind),
                                          Entry(name, f"call{step}", priority, 0), override)
                try:
                    registry.register_host_codegen_hook(kind, hook, override=override)
                    got = None
                except DuplicateRegistrationError:
                    got = "DuplicateRegistrationError"
                assert got == expected
            elif op == "lazy":
                _, kind, module = call
                model.lazy(kind, module)
                registry.register_lazy_host_codegen(kind, lazy_modules[module])
            elif op == "resolve":
                check_resolve(call[1])
            elif op == "hooks":
                check_hooks(call[1])
            else:
                model.refresh()
                registry.refresh()

            # Invariants after every call: no duplicate names per kind, and the
            # registrations (order included) are the model's.
            for group, table in (("tilelang.host_codegen", model.codegens),
                                 ("tilelang.host_codegen_hooks", model.hooks)):
                for kind in {*table, *CODEGEN_KINDS, "cuda", "rocm"}:
                    regs = registry.registrations(group, kind)
                    names = [r.name for r in regs]
                    assert len(names) == len(set(names)), (group, kind, names)
                    assert [(r.name, label(r.obj), r.priority) for r in regs] == [
                        (e.name, e.label, e.priority) for e in table.get(kind, [])]
            states = {(s.kind, short[s.value]): s.state for s in registry.sources()}
            assert states == {(kind, module): state for kind, sources in model.sources.items()
                              for module, state, _ in sources}


# --------------------------------------------------------------------------- command line


@settings(max_examples=100, deadline=None)
@given(target_texts | st.builds(json.dumps, target_dicts))
def test_explain_any_target_exits_cleanly(text: str) -> None:
    """``explain TARGET`` exits 0/1 with a report, or 2 with one line on stderr."""
    from tilelang_hostcg.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["explain", text])
    assert status in (0, 1, 2)
    assert "Traceback" not in err.getvalue()
    if status == 2:
        assert err.getvalue().endswith("\n") and err.getvalue().count("\n") == 1, err.getvalue()
        assert out.getvalue() == ""
    else:
        assert out.getvalue()

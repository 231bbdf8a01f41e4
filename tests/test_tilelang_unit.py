"""The parts of the TileLang integration that need no TileLang: the check of integration
points by shape, registry defaults and origins, global functions looked up at every call,
the TVM finder, requirement checks across TVM providers, and the build driver's fixes.
The shape checks are unit tests of an internal (``tilelang_hostcg.clients._routes.Point``)."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
import warnings
from importlib.metadata import version

import pytest
import tvm
from tvm.script import tirx as T
from tvm.target import Target

import tilelang_hostcg
from tilelang_hostcg import (
    HostCodegen,
    HostCodegenError,
    HostCodegenHook,
    MissingGlobalFuncError,
    NoHostCodegenError,
    Origin,
    Registry,
    global_func_host_codegen,
)
from tilelang_hostcg.clients._routes import Point
from tilelang_hostcg.environment._requirements import check_requirements

from .kernels import gpu_vector_add

WITHOUT_TILELANG = pytest.mark.skipif(importlib.util.find_spec("tilelang") is not None,
                                      reason="this environment has TileLang (tests/test_tilelang.py covers it)")
TILELANG = Origin("tilelang", "0.1.15")
CORE = Origin("tilelang-hostcg", "0.1.0")


def llvm_codegen(name: str, **kwargs) -> HostCodegen:
    return HostCodegen(name, global_func_host_codegen("target.build.llvm"), **kwargs)


# ------------------------------------------------------------------ integration points, by shape
# The checker on real modules (apache-tvm's and ours); TileLang's own tables are checked
# against every real TileLang environment in tests/test_tilelang_open_world.py. A point's shape is
# what its callers can call, as they call it; reading the callers' code is a hint, never a verdict.
@pytest.mark.parametrize(("point", "problem"), [
    (Point("tvm.tirx.build", "tir_to_runtime", ("host_mod", "device_mod_dict", "target_host")), None),
    (Point("tvm.tirx.build", "codegen_build", ("mod", "target")), None),
    (Point("tvm.tirx.build", "tir_to_runtime", ("host_mod", "device_mod_dict", "target_host"),
           ("tvm.tirx.build:build",)), None),
    (Point("tilelang_hostcg.registry._registry", "Registry.resolve_host_codegen", ("self", "target_host")), None),
    (Point("tilelang_hostcg.core._types", "HostCodegen.supports_target", "field"), None),
    (Point("tilelang_hostcg.tilelang._points", "POINTS", "dict"), None),
    # Names passed by position are not compared: a parameter renamed is the same shape.
    (Point("tvm.tirx.build", "tir_to_runtime", ("mod", "devices", "host")), None),
    (Point("tvm.tirx.build", "tir_to_runtime", ("host_mod", "device_mod_dict"), keywords=("target_host",)), None),
    (Point("tvm.tirx.build", "tir_to_runtime", ("mod", "target")),
     "tvm.tirx.build.tir_to_runtime (parameters (host_mod: tvm.ir.module.IRModule, device_mod_dict: "
     "dict[tvm.target.target.Target, tvm.ir.module.IRModule], target_host: tvm.target.target.Target) where "
     "its callers pass (mod, target): missing a required argument: 'target_host')"),
    (Point("tvm.tirx.build", "codegen_build", ("mod", "target", "options")), "codegen_build (parameters (mod: "),
    (Point("tvm.tirx.build", "codegen_build", ("mod",), keywords=("target_host",)),
     "where its callers pass (mod, target_host=): "),
    # A point its caller's code does not name still has its shape: a build shows whether it is called.
    (Point("tvm.tirx.build", "codegen_build", ("mod", "target"), ("tvm.tirx.build:build",)), None),
    (Point("tilelang_hostcg.core._names", "GROUPS", "mapping"), "GROUPS (not a function: tuple)"),
    (Point("tvm.tirx.build", "tir_to_runtime_v2", ("host_mod",)), "tvm.tirx.build.tir_to_runtime_v2 (missing)"),
    (Point("tvm.no_such_module", "f", ()),
     "tvm.no_such_module.f (ModuleNotFoundError: No module named 'tvm.no_such_module')"),
    (Point("tilelang_hostcg.registry._registry", "Registry.get_host_codegen", ("self",)), "(missing)"),
    (Point("tilelang_hostcg.core._types", "HostCodegen.backend", "field"), "HostCodegen.backend (no such field)"),
    (Point("tilelang_hostcg.core._names", "GROUPS", "dict"), "GROUPS (not a dict)"),
    (Point("tilelang_hostcg.core._names", "TILELANG", ()), "TILELANG (not a function: str)"),
], ids=str)
def test_an_integration_point_is_checked_by_its_shape(point, problem):
    found = point.problem()
    assert found == problem if problem is None else problem in found


def test_reading_the_callers_code_is_a_hint_only():
    named = Point("tvm.tirx.build", "tir_to_runtime", ("a", "b", "c"), ("tvm.tirx.build:build",))
    unnamed = Point("tvm.tirx.build", "codegen_build", ("mod", "target"), ("tvm.tirx.build:build",))
    gone = Point("tvm.tirx.build", "codegen_build", ("mod", "target"), ("tvm.tirx.build:no_such_caller",))
    assert named.hint() is None and unnamed.problem() is None and gone.problem() is None
    assert unnamed.hint() == ("tvm.tirx.build.codegen_build: the code of tvm.tirx.build.build does not name it "
                              "(a renamed or leftover point?)")
    assert gone.hint() == "tvm.tirx.build.codegen_build: its caller tvm.tirx.build.no_such_caller is missing"


def _positional_only(self, target_host, /):
    return target_host


def _renamed(self, host):
    return host


def _plain(self, target_host):
    return target_host


@functools.wraps(_plain)
def _decorated(*args, **kwargs):  # what it accepts is read from what it wraps
    return _plain(*args, **kwargs)


@pytest.mark.parametrize("func", [_positional_only, _renamed, _decorated], ids=["positional-only", "renamed",
                                                                               "decorated"])
def test_a_point_its_callers_can_call_as_they_call_it_has_its_shape(monkeypatch, func):
    """Positional-only, renamed (callers pass it by position), or behind a ``functools.wraps``
    decorator (followed through ``__wrapped__``)."""
    import tilelang_hostcg.registry._registry as registry_module

    monkeypatch.setattr(registry_module.Registry, "resolve_host_codegen", func)
    point = Point("tilelang_hostcg.registry._registry", "Registry.resolve_host_codegen", ("self", "target_host"))
    assert point.problem() is None
    keyword = Point("tilelang_hostcg.registry._registry", "Registry.resolve_host_codegen", ("self",),
                    keywords=("target_host",))
    assert (keyword.problem() is None) is (func is not _positional_only and func is not _renamed)


def test_an_ffi_function_called_by_position_has_its_shape(monkeypatch):
    """TVM's ``codegen_build`` as a compiled (FFI) function: its parameters cannot be read, and its
    callers call it by position."""
    module = sys.modules["tvm.tirx.build"]
    ffi = tvm.get_global_func("target.build.llvm")
    monkeypatch.setattr(module, "codegen_build", ffi)
    assert Point("tvm.tirx.build", "codegen_build", ("mod", "target")).problem() is None
    assert "not a function" in Point("tvm.tirx.build", "codegen_build", ("mod",), keywords=("target",)).problem()


@WITHOUT_TILELANG
def test_install_without_tilelang_says_so_and_changes_nothing():
    import tilelang_hostcg.tilelang as integration

    with pytest.raises(integration.UnsupportedTileLangError, match="not installed"):
        integration.install()
    assert not integration.is_installed()
    integration.uninstall()  # a no-op when not installed


def test_importing_the_integration_patches_nothing_and_imports_no_tvm():
    import subprocess
    import sys

    code = ("import sys, tilelang_hostcg.tilelang as t; "
            "print(t.is_installed(), 'tvm' in sys.modules, 'tilelang' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "False"]


# ------------------------------------------------------------------ another package's patches
# A stand-in TileLang of the 0.1.14+ layout: the integration points, nothing more.
STAND_IN = {
    "tilelang/__init__.py": "",
    "tilelang/backend/__init__.py": "",
    "tilelang/backend/module.py": """
from dataclasses import dataclass, field


@dataclass
class BackendModule:
    name: str
    host_codegens: dict = field(default_factory=dict)
    host_codegen_hooks: dict = field(default_factory=dict)

    def matches(self, target):
        return True

    def get_host_codegen(self, target_host):
        return "tilelang's own codegen"

    def preprocess_host_codegen(self, mod, target_host, target):
        return "tilelang's own hooks ran"

    def codegen_host(self, mod, target_host):
        return self.get_host_codegen(target_host).lower(mod, target_host)


@dataclass
class BackendContext:  # how the lowering reaches the backend module's points
    module: BackendModule
    target: object
    target_host: object

    def preprocess_host_codegen(self, mod):
        return self.module.preprocess_host_codegen(mod, self.target_host, self.target)

    def codegen_host(self, mod):
        return self.module.codegen_host(mod, self.target_host)


_BACKENDS = {"cuda": BackendModule("cuda")}


def list_backends():
    return _BACKENDS
""",
    "tilelang/engine/__init__.py": "",
    "tilelang/engine/lower.py": """
def host_codegen(host_mod, context):
    host_mod = context.preprocess_host_codegen(host_mod)
    return context.codegen_host(host_mod)
""",
    "tilelang/cache/__init__.py": "",
    "tilelang/cache/kernel_cache.py": """
class KernelCache:
    def _generate_key(self, func, out_idx, execution_backend, args, target, target_host):
        return "tilelang's own key"
""",
    "tilelang/autotuner/__init__.py": "",
    "tilelang/autotuner/tuner.py": """
class AutoTuner:
    def generate_cache_key(self, parameters, extra_parameters):
        return "tilelang's own tuner key"
""",
    # Another package: it wraps our get_host_codegen (and calls it), and replaces our
    # KernelCache._generate_key (without calling it).
    "rival_patches.py": """
import functools

from tilelang.backend.module import BackendModule
from tilelang.cache.kernel_cache import KernelCache

found = BackendModule.__dict__["get_host_codegen"]


@functools.wraps(found)
def get_host_codegen(self, target_host):
    return found(self, target_host)


def _generate_key(self, *args, **kwargs):
    return "the rival's key"


BackendModule.get_host_codegen = get_host_codegen
KernelCache._generate_key = _generate_key
""",
}


@pytest.fixture
def stand_in_tilelang(tmp_path, monkeypatch):
    """A TileLang stand-in installed (its metadata and files) first on ``sys.path``; afterwards
    uninstalled, with its modules forgotten."""
    site = tmp_path / "site"
    info = site / "tilelang-0.1.15.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tilelang\nVersion: 0.1.15\n")
    (info / "RECORD").write_text("".join(f"{path},,\n" for path in STAND_IN if path.startswith("tilelang/")))
    for path, text in STAND_IN.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(text)
    monkeypatch.syspath_prepend(str(site))
    import tilelang_hostcg.tilelang as integration

    try:
        yield site
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            integration.uninstall()
        for name in [n for n in sys.modules if n.split(".")[0] in ("tilelang", "rival_patches")]:
            del sys.modules[name]


@pytest.fixture
def routed_stand_in(stand_in_tilelang):
    """The stand-in TileLang, installed with a registry whose ``c`` codegen is a plugin's."""
    import tilelang_hostcg.tilelang as integration

    registry = Registry()
    registry.register_host_codegen("c", HostCodegen("plugin-c", lambda mod, target_host: None))
    integration.install(registry=registry)
    return registry


@WITHOUT_TILELANG
def test_uninstall_leaves_another_packages_patch_and_ours_in_it_hands_calls_to_tilelang(routed_stand_in):
    import tilelang_hostcg.tilelang as integration
    from tilelang_hostcg import PluginWarning

    registry = routed_stand_in
    from tilelang.backend.module import BackendModule, list_backends
    from tilelang.cache.kernel_cache import KernelCache

    ours = dict(BackendModule.__dict__)
    stock_pre = ours["preprocess_host_codegen"].__wrapped__
    import rival_patches

    backend = list_backends()["cuda"]
    assert _stand_in_build().name == "plugin-c"  # a build: through the wrapper, ours routes
    assert integration.is_installed() and integration.CLIENT.live().by_build
    with pytest.warns(PluginWarning) as caught:
        integration.uninstall()
    texts = sorted(str(w.message) for w in caught)
    assert len(texts) == 2, texts
    wrapped, replaced = texts
    for text, attribute, held in (
            (wrapped, "tilelang.backend.module.BackendModule.get_host_codegen",
             "around tilelang_hostcg's replacement, which from now on hands every call to TileLang's original"),
            (replaced, "tilelang.cache.kernel_cache.KernelCache._generate_key",
             "in place of tilelang_hostcg's replacement (which it does not call)")):
        assert text.startswith(f"tilelang_hostcg.tilelang.uninstall() left {attribute} as it is"), text
        assert f"'rival_patches' ({rival_patches.__file__})" in text and held in text, text
        assert "undo it as that package documents (or uninstall that package)" in text
    assert all(w.filename == __file__ for w in caught)  # at the line that called uninstall()
    # The other package's functions stay; what is still ours goes back to TileLang's own.
    assert BackendModule.__dict__["get_host_codegen"] is rival_patches.get_host_codegen
    assert KernelCache.__dict__["_generate_key"] is rival_patches._generate_key
    assert BackendModule.__dict__["preprocess_host_codegen"] is stock_pre
    assert backend.get_host_codegen(Target("c")) == "tilelang's own codegen"  # ours in the wrapper hands it on
    assert backend.preprocess_host_codegen(None, Target("c"), Target("cuda")) == "tilelang's own hooks ran"
    assert not integration.is_installed()
    assert [r.name for r in registry.registrations()] == ["plugin-c"]  # no default of TileLang's left


def _shapes() -> dict[str, tuple[str, object]]:
    """Points TileLang's callers cannot call as they call them: the attribute, its new value, the problem."""

    def purpose(self, target_host, purpose):  # a third argument TileLang does not pass
        return "tilelang's own codegen"

    def keyword_target(self, mod, target_host, *, target):  # TileLang passes target by position
        return mod

    def generator():
        yield from ()

    return {"required purpose": ("get_host_codegen", purpose,
                                 "BackendModule.get_host_codegen (parameters (self, target_host, purpose) where its "
                                 "callers pass (self, target_host): missing a required argument: 'purpose')"),
            "keyword-only target": ("preprocess_host_codegen", keyword_target,
                                    "BackendModule.preprocess_host_codegen (parameters (self, mod, target_host, *, "
                                    "target) where its callers pass (self, mod, target_host, target): too many "
                                    "positional arguments)"),
            "generator": ("list_backends", generator, "list_backends (returns a generator, not a mapping)")}


def _callable_shapes() -> dict[str, tuple[str, object]]:
    """Points of another parameter list that TileLang's callers can still call as they call them."""

    def purpose(self, target_host, *, purpose="build"):
        return "tilelang's own codegen"

    def five(self, mod, target_host, target, options=None):
        return mod

    def positional_only(self, target_host, /):
        return "tilelang's own codegen"

    def renamed(self, host):  # TileLang passes it by position
        return "tilelang's own codegen"

    return {"keyword-only purpose": ("get_host_codegen", purpose), "fifth parameter": ("preprocess_host_codegen", five),
            "positional-only": ("get_host_codegen", positional_only),
            "renamed parameter": ("get_host_codegen", renamed)}


@WITHOUT_TILELANG
@pytest.mark.parametrize("case", sorted(_callable_shapes()))
def test_a_point_its_callers_can_still_call_is_accepted(stand_in_tilelang, monkeypatch, case):
    from tilelang.backend import module

    import tilelang_hostcg.tilelang as integration

    name, value = _callable_shapes()[case]
    monkeypatch.setattr(module.BackendModule, name, value)
    integration.install(registry=Registry())
    try:
        assert integration.is_installed()
    finally:
        integration.uninstall()


@WITHOUT_TILELANG
@pytest.mark.parametrize("case", sorted(_shapes()))
def test_a_point_of_another_shape_is_refused_naming_it(stand_in_tilelang, monkeypatch, case):
    from tilelang.backend import module

    import tilelang_hostcg.tilelang as integration

    name, value, problem = _shapes()[case]
    owner = module if name == "list_backends" else module.BackendModule
    monkeypatch.setattr(owner, name, value)
    with pytest.raises(integration.UnsupportedTileLangError) as info:
        integration.install(registry=Registry())
    assert problem in str(info.value) and "pip install" not in str(info.value), str(info.value)
    assert not integration.is_installed()


@WITHOUT_TILELANG
def test_a_renamed_point_kept_as_an_alias_is_a_hint_not_a_refusal(stand_in_tilelang):
    """``get_host_codegen`` renamed, the old name an alias the backend's own code no longer calls:
    its shape is fine, so it is installed; reading the code only hints that a build may not call it."""
    from tilelang.backend.module import BackendModule

    import tilelang_hostcg.tilelang as integration
    from tilelang_hostcg.tilelang._points import hints

    def codegen_host(self, mod, target_host):
        return self.select_host_codegen(target_host).lower(mod, target_host)

    BackendModule.select_host_codegen = BackendModule.get_host_codegen
    BackendModule.codegen_host = codegen_host
    integration.install(registry=Registry())
    try:
        assert hints("backend") == ["tilelang.backend.module.BackendModule.get_host_codegen: the code of "
                                    "tilelang.backend.module.BackendModule.codegen_host does not name it (a "
                                    "renamed or leftover point?)"]
    finally:
        integration.uninstall()


def _stand_in_build(target_host: str = "c") -> object:
    """What the stand-in's lowering does for a build: the hooks, then the codegen's choice."""
    from tilelang.backend.module import BackendContext, list_backends

    backend = list_backends()["cuda"]
    BackendContext(backend, Target("cuda"), Target(target_host)).preprocess_host_codegen(None)
    return backend.get_host_codegen(Target(target_host))


@WITHOUT_TILELANG
def test_a_rival_holding_the_route_without_calling_it_is_not_routed_once_a_build_shows_it(routed_stand_in):
    """Before a build, what can be known: the rival holds our route, so it may call it (routed, not
    by a build). The build shows it calls TileLang's own: not routed, by that build."""
    from tilelang.backend.module import BackendModule

    import tilelang_hostcg.tilelang as integration
    from tilelang_hostcg import PluginWarning
    from tilelang_hostcg.clients._interface import routing

    ours = BackendModule.__dict__["get_host_codegen"]
    stock = ours.__wrapped__

    def holding(held):
        def rival(self, target_host):  # holds our route in its closure, calls TileLang's own
            return stock(self, target_host) if held else None
        return rival

    BackendModule.get_host_codegen = holding(ours)
    answer = routing(integration.CLIENT)
    assert answer.routed is True and not answer.by_build and integration.is_installed()
    assert not integration.CLIENT.live().by_build
    assert _stand_in_build() == "tilelang's own codegen"  # a build: stock
    live = integration.CLIENT.live()
    assert not integration.is_installed() and live.by_build and live.who is not None and __file__ in live.who
    answer = routing(integration.CLIENT)
    assert answer.routed is False and answer.by_build
    route = "tilelang.backend.module.BackendModule.get_host_codegen"
    assert f"the last build did not call the route {route}" in answer.reason
    with pytest.warns(PluginWarning, match="around tilelang_hostcg's replacement"):
        integration.uninstall()


@WITHOUT_TILELANG
@pytest.mark.parametrize("edit", ["dead branch", "another object's method"])
def test_a_point_the_lowering_no_longer_reaches_is_installed_until_a_build_shows_it_unused(stand_in_tilelang, edit):
    """Every point there and of its shape, and the code still names ``get_host_codegen``, but no build
    calls ours: before a build, installed (what can be known); after it, not (what it did)."""
    from tilelang.backend import module

    import tilelang_hostcg.tilelang as integration
    from tilelang_hostcg.tilelang._points import hints

    class Selector:  # another object with a method of the same name
        def get_host_codegen(self, target_host):
            return "the selector's codegen"

    _LEGACY = False

    def dead_branch(self, mod, target_host):
        if _LEGACY:
            return self.get_host_codegen(target_host).lower(mod, target_host)
        return "tilelang's own codegen"

    def other_object(self, mod, target_host):
        return Selector().get_host_codegen(target_host)

    module.BackendModule.codegen_host = dead_branch if edit == "dead branch" else other_object
    integration.install(registry=Registry())
    try:
        assert hints("backend") == []  # the code names it: reading it would confirm, wrongly
        assert integration.is_installed() and not integration.CLIENT.live().by_build
        context = module.BackendContext(module.list_backends()["cuda"], Target("cuda"), Target("c"))
        context.preprocess_host_codegen(None)  # a build, as the lowering runs it
        context.codegen_host(None)
        live = integration.CLIENT.live()
        assert not integration.is_installed() and live.by_build
        assert live.unused == "tilelang.backend.module.BackendModule.get_host_codegen"
    finally:
        integration.uninstall()


@WITHOUT_TILELANG
def test_functools_wraps_on_the_lowering_and_on_codegen_host_are_accepted_and_routed(routed_stand_in):
    from tilelang.backend import module
    from tilelang.engine import lower

    import tilelang_hostcg.tilelang as integration
    from tilelang_hostcg.tilelang import _points

    def traced(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)
        return wrapper

    lower.host_codegen = traced(lower.host_codegen)
    module.BackendModule.codegen_host = traced(module.BackendModule.codegen_host)
    module.BackendContext.codegen_host = traced(module.BackendContext.codegen_host)
    assert _points.problems("backend") == [] and _points.hints("backend") == []  # read through __wrapped__
    assert _stand_in_build().name == "plugin-c"
    assert integration.is_installed() and integration.CLIENT.live().by_build


@WITHOUT_TILELANG
def test_a_freed_wrapper_is_never_confused_with_a_new_function_at_its_address(routed_stand_in):
    """A profiler wraps ``get_host_codegen`` (calling ours), a build goes through it, the profiler
    unwraps and its wrapper is freed; a tool then pins TileLang's own codegen choice. Whatever address
    the pinned function gets, it is not the route: not installed."""
    import gc

    from tilelang.backend.module import BackendModule

    import tilelang_hostcg.tilelang as integration

    ours = BackendModule.__dict__["get_host_codegen"]
    stock = ours.__wrapped__

    def profiled(self, target_host):
        return ours(self, target_host)

    BackendModule.get_host_codegen = profiled
    assert _stand_in_build().name == "plugin-c" and integration.CLIENT.live().by_build
    BackendModule.get_host_codegen = ours
    del profiled
    gc.collect()
    for _ in range(64):  # new functions, some at the freed wrapper's address
        BackendModule.get_host_codegen = lambda self, target_host: stock(self, target_host)
        assert not integration.is_installed()
    assert _stand_in_build() == "tilelang's own codegen"  # and a build shows the same
    assert not integration.is_installed() and integration.CLIENT.live().by_build
    BackendModule.get_host_codegen = ours
    assert integration.is_installed()


@WITHOUT_TILELANG
def test_builds_of_two_threads_interleaved_are_told_apart(routed_stand_in):
    """Thread A runs its hooks, thread B runs its hooks, then each chooses its codegen: two builds that
    each called both routes, never a build that missed one."""
    from concurrent.futures import ThreadPoolExecutor

    from tilelang.backend.module import BackendContext, list_backends

    import tilelang_hostcg.tilelang as integration

    backend = list_backends()["cuda"]
    context = BackendContext(backend, Target("cuda"), Target("c"))
    with ThreadPoolExecutor(1) as a, ThreadPoolExecutor(1) as b:
        for thread in (a, b):
            thread.submit(context.preprocess_host_codegen, None).result()
        for thread in (a, b):
            assert thread.submit(backend.get_host_codegen, Target("c")).result().name == "plugin-c"
            assert integration.is_installed() and integration.CLIENT.live().by_build


@WITHOUT_TILELANG
def test_a_tracer_keeping_the_route_in_its_module_dict_is_routed_before_and_after_a_build(routed_stand_in):
    """The ``_orig = B.f`` idiom: reachable from the tracer's globals before a build; the build shows it."""
    import types

    import tilelang_hostcg.tilelang as integration
    from tilelang_hostcg.clients._interface import routing

    tracer = types.ModuleType("codegen_tracer")
    exec("from tilelang.backend.module import BackendModule as B\n_orig = B.__dict__['get_host_codegen']\n"
         "calls = []\ndef traced(self, target_host):\n    calls.append(1)\n    return _orig(self, target_host)\n"
         "B.get_host_codegen = traced\n", tracer.__dict__)
    try:
        assert routing(integration.CLIENT).routed is True and not integration.CLIENT.live().by_build
        assert _stand_in_build().name == "plugin-c" and tracer.calls == [1]
        assert routing(integration.CLIENT).routed is True and integration.CLIENT.live().by_build
    finally:
        from tilelang.backend.module import BackendModule
        BackendModule.get_host_codegen = tracer._orig


# ------------------------------------------------------------------ registry defaults
def test_a_default_serves_only_when_nothing_else_matches():
    registry = Registry()
    registry.register_host_codegen("llvm", llvm_codegen("tilelang-llvm"), origin=TILELANG,
                                   default=True)
    assert registry.resolve_host_codegen(Target("llvm")).name == "tilelang-llvm"
    # A narrower predicate wins where it matches, whatever its priority.
    registry.register_host_codegen("llvm", llvm_codegen(
        "narrow", priority=-5, supports_target=lambda t: "acme" in str(t.attrs.get("mtriple", ""))))
    assert registry.resolve_host_codegen(Target("llvm")).name == "tilelang-llvm"
    acme = Target({"kind": "llvm", "mtriple": "x86_64-acme-linux-gnu"})
    assert registry.resolve_host_codegen(acme).name == "narrow"
    # A registration made in code wins over the default.
    registry.register_host_codegen("llvm", llvm_codegen("mine"))
    assert registry.resolve_host_codegen(Target("llvm")).name == "mine"
    assert registry.allowed_host_codegens_for_target(Target("llvm")) == ["mine", "tilelang-llvm"]
    origins = {r.name: (r.origin, r.default) for r in registry.registrations()}
    assert origins["tilelang-llvm"] == (TILELANG, True)
    assert origins["mine"][1] is False


def test_a_client_default_supersedes_the_cores_own_codegen():
    registry = Registry()
    registry.register_host_codegen("llvm", llvm_codegen("llvm"), origin=CORE)
    assert registry.resolve_host_codegen(Target("llvm")).name == "llvm"
    registry.register_host_codegen("llvm", llvm_codegen("tilelang-llvm"), origin=TILELANG,
                                   default=True)
    assert registry.resolve_host_codegen(Target("llvm")).name == "tilelang-llvm"
    assert registry.allowed_host_codegens_for_target(Target("llvm")) == ["tilelang-llvm", "llvm"]


def test_defaults_and_origins_survive_refresh_and_unregister_undoes_them():
    registry = Registry(discover=True)
    codegen = registry.register_host_codegen("c", llvm_codegen("tilelang-c"), origin=TILELANG,
                                             default=True)
    hook = registry.register_host_codegen_hook(
        "cuda", HostCodegenHook("tilelang-cuda", lambda m, h, t: m), origin=TILELANG)
    registry.refresh()
    assert [r.obj for r in registry.registrations(kind="c") if r.origin == TILELANG] == [codegen]
    groups = registry.registrations("tilelang.host_codegen_hooks", "cuda")
    assert [r.obj for r in groups] == [hook]
    assert registry.unregister_host_codegen("c", "tilelang-c").obj is codegen
    assert registry.unregister_host_codegen("c", "tilelang-c") is None
    assert registry.unregister_host_codegen_hook("cuda", "tilelang-cuda").obj is hook
    assert registry.registrations("tilelang.host_codegen_hooks", "cuda") == []


def test_an_origin_given_in_code_cannot_claim_an_entry_point_group():
    with pytest.raises(ValueError, match="group must be None"):
        Registry().register_host_codegen(
            "llvm", llvm_codegen("x"), origin=Origin("d", "1", "tilelang.host_codegen", "llvm = m"))


# ------------------------------------------------------------------ global functions
def test_global_function_is_looked_up_at_every_call():
    name = "tilelang_hostcg.test.build_at_every_call"
    tvm.register_global_func(name, lambda mod, target: "first", override=True)
    build = global_func_host_codegen(name)
    assert build(None, None) == "first"
    tvm.register_global_func(name, lambda mod, target: "second", override=True)
    assert build(None, None) == "second"


def test_missing_global_function_names_it_and_the_tvm_in_use():
    build = global_func_host_codegen("target.build.no_such_codegen")
    with pytest.raises(MissingGlobalFuncError, match=r"'target\.build\.no_such_codegen'") as info:
        build(None, Target("llvm"))
    assert f"apache-tvm {version('apache-tvm')}" in str(info.value)


def test_a_codegen_whose_build_function_is_missing_does_not_match():
    registry = Registry()
    registry.register_host_codegen("llvm", HostCodegen(
        "ghost", global_func_host_codegen("target.build.no_such_codegen"), priority=10))
    with pytest.raises(NoHostCodegenError, match=r"'target\.build\.no_such_codegen'"):
        registry.resolve_host_codegen(Target("llvm"))
    registry.register_host_codegen("llvm", llvm_codegen("real"))
    assert registry.resolve_host_codegen(Target("llvm")).name == "real"
    assert registry.allowed_host_codegens_for_target(Target("llvm")) == ["real"]


# ------------------------------------------------------------------ which TVM
def test_the_commands_report_apache_tvm_as_the_tvm_in_use(capsys: pytest.CaptureFixture[str]) -> None:
    from tilelang_hostcg.cli import main

    assert main(["list", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)["tvm"]
    assert info["provider"] == info["distribution"] == "apache-tvm"
    assert info["provider_version"] == version("apache-tvm")
    assert info["describe"].startswith(f"apache-tvm {version('apache-tvm')}")
    assert main(["explain", "llvm", "--json"]) == 0  # its LLVM is there, and used
    explained = json.loads(capsys.readouterr().out)
    codegen = explained["codegen"]
    assert codegen["name"] == "llvm" and codegen["buildable"] is tvm.runtime.enabled("llvm")
    # With TVM imported, the document says what it can do (docs/cli.md, JSON documents).
    info = explained["tvm"]
    assert info["llvm"] is tvm.runtime.enabled("llvm") and info["cuda_host"] is True
    assert info["tir_module"] == "tvm.tirx" and info["version"] == tvm.__version__
    assert info["path"] == tvm.__file__


# ------------------------------------------------------------------ requirements
@pytest.mark.parametrize(("requires", "installed", "problem"), [
    # The provider in use is named: its version counts.
    (["apache-tvm>=0.27,<0.28"], {"apache-tvm": "0.27.0"}, None),
    (["apache-tvm>=0.28"], {"apache-tvm": "0.27.0"}, "'apache-tvm>=0.28' but apache-tvm 0.27.0"),
    (["tilelang>=0.1.12"], {"tilelang": "0.1.15"}, None),
    (["tilelang>=0.1.16"], {"tilelang": "0.1.15"}, "'tilelang>=0.1.16' but tilelang 0.1.15"),
    # The other provider stands in for one that is not installed.
    (["apache-tvm>=0.27,<0.28"], {"tilelang": "0.1.15"}, None),
    (["tilelang>=0.1.12"], {"apache-tvm": "0.27.0"}, None),
    # Alternatives: one met is enough.
    (["apache-tvm>=0.28", "tilelang>=0.1.12"], {"apache-tvm": "0.27.0", "tilelang": "0.1.15"},
     None),
    # No TVM at all.
    (["apache-tvm>=0.27"], {}, "no TVM is installed"),
    # Extras never count: that is how a plugin offers a TVM without pinning one.
    (['apache-tvm>=9; extra == "tvm"'], {"tilelang": "0.1.15"}, None),
])
def test_tvm_requirements_know_both_providers(requires, installed, problem):
    reason = check_requirements("plugin", requires, {"tilelang-hostcg": "0.1.0", **installed})
    if problem is None:
        assert reason is None
    else:
        assert reason is not None and problem in reason


# ------------------------------------------------------------------ build driver
def test_build_rejects_a_device_target_as_host_with_our_error():
    from tilelang_hostcg import DeviceAsHostError

    with pytest.raises(DeviceAsHostError, match="'cuda' of 'cuda' is a device kind") as info:
        tilelang_hostcg.build(gpu_vector_add, Target("cuda", host="cuda"))
    assert isinstance(info.value, HostCodegenError) and info.value.kind == "cuda"


def _two_device_module(first: str, second: str) -> tvm.IRModule:
    @T.prim_func
    def kernel(a: T.handle):
        A = T.match_buffer(a, (64,), "float32")
        for i in T.thread_binding(64, thread="threadIdx.x"):
            A[i] = A[i] + T.float32(1)

    funcs = {}
    for name, arch in ((first, "sm_80"), (second, "sm_90")):
        funcs[name] = kernel.with_attr("global_symbol", name).with_attr(
            "target", Target({"kind": "cuda", "arch": arch}, host="llvm"))
    return tvm.IRModule(funcs)


def test_build_runs_the_hooks_of_every_device_target_in_a_fixed_order():
    seen: list[list[str]] = []
    for first, second in (("a", "b"), ("b", "a")):
        calls: list[str] = []
        registry = Registry()
        registry.register_host_codegen("llvm", llvm_codegen("llvm"))
        registry.register_host_codegen_hook("cuda", HostCodegenHook(
            "record", lambda m, h, t, calls=calls: calls.append(str(t.attrs["arch"])) or m))
        tilelang_hostcg.build(_two_device_module(first, second), None, registry=registry)
        seen.append(calls)
    assert seen[0] == seen[1] and sorted(seen[0]) == ["sm_80", "sm_90"]

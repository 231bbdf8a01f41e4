"""The TVM integration in this process, with the real apache-tvm of the test environment:
the one activation rule both clients call, the version gate, a rival replacement, a failing
decision, ``install()``/``uninstall()`` identity. The subprocess tests are in ``test_tvm.py``."""

from __future__ import annotations

import functools
import sys
import types
import warnings
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.utils import canonicalize_name

import tilelang_hostcg.discovery as discovery  # the door every decision imports it through
import tilelang_hostcg.tvm as integration
from tilelang_hostcg import PluginWarning
from tilelang_hostcg.core import PROCESS
from tilelang_hostcg.core._names import normalize_name
from tilelang_hostcg.tvm import _activation as activation
from tilelang_hostcg.tvm import _points as gate


@pytest.fixture
def build_module() -> Iterator[types.ModuleType]:
    """TVM's ``tvm.tirx.build`` module, its ``tir_to_runtime`` put back afterwards."""
    import tvm  # noqa: F401

    module = sys.modules["tvm.tirx.build"]
    original = module.tir_to_runtime
    assert gate.is_tvms_own(original, module)
    yield module
    integration.uninstall()
    module.tir_to_runtime = original


@given(st.text(alphabet="aZ0-_.", max_size=12))
def test_normalize_name_is_packagings_canonicalize_name(name):
    assert normalize_name(name) == canonicalize_name(name)


def test_the_points_of_the_installed_apache_tvm(build_module):
    """The contract, for the apache-tvm CI tests: every point of the table, of its shape."""
    import tvm

    assert [point.problem() for point in gate.POINTS] == [None] * len(gate.POINTS)
    assert gate.check(tvm, activation=True) is build_module.tir_to_runtime


def test_both_activations_decide_by_one_function(monkeypatch, build_module):
    calls = []

    def decide(controls):
        calls.append(controls)
        return False

    monkeypatch.setattr(discovery, "third_party_planned", decide)
    from tilelang_hostcg.tilelang._activation import activate

    activate()
    activation.autoload()
    assert len(calls) == 2  # TileLang's activation and TVM's: the same function decides
    assert not integration.is_installed() and gate.is_tvms_own(build_module.tir_to_runtime, build_module)
    monkeypatch.setattr(discovery, "third_party_planned", lambda controls: True)
    activation.autoload()
    route = build_module.tir_to_runtime
    assert integration.is_installed() and route.__module__ == "tilelang_hostcg.tvm._route"
    integration.uninstall()
    assert build_module.tir_to_runtime is route.__wrapped__  # the identical object


def test_the_off_switch_is_read_before_anything(monkeypatch, build_module):
    monkeypatch.setattr(discovery, "third_party_planned", lambda controls: pytest.fail("decided"))
    monkeypatch.setenv("TILELANG_HOSTCG_AUTO_INSTALL", "0")
    activation.autoload()
    assert not integration.is_installed()


def test_a_failing_decision_is_one_warning_and_never_raises(monkeypatch, build_module):
    def broken(controls):
        raise RuntimeError("metadata exploded")

    monkeypatch.setattr(discovery, "third_party_planned", broken)
    with pytest.warns(PluginWarning,
                      match="did not activate its TVM integration: RuntimeError: metadata exploded") as caught:
        activation.autoload()
    assert len(caught) == 1 and "TILELANG_HOSTCG_AUTO_INSTALL=0" in str(caught[0].message)
    # Where warnings are errors, it is shown all the same (recorded here), never raised.
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("error")
        activation.autoload()
    assert [str(w.message) for w in shown] == [str(caught[0].message)]
    assert not integration.is_installed()


def test_a_rival_replacement_is_detected_warned_and_left_alone(monkeypatch, build_module):
    original = build_module.tir_to_runtime

    @functools.wraps(original)  # copies __name__, __module__, __qualname__: still not TVM's own
    def rival(*args):
        return original(*args)

    build_module.tir_to_runtime = rival
    with pytest.raises(gate.UnsupportedTVMError, match="already replaced by another package"):
        integration.install()
    monkeypatch.setattr(discovery, "third_party_planned", lambda controls: True)
    with pytest.warns(PluginWarning, match="already replaced") as caught:
        activation.autoload()
    assert len(caught) == 1
    assert build_module.tir_to_runtime is rival and not integration.is_installed()


def test_any_version_with_the_points_is_routed_and_one_without_is_refused_naming_it(monkeypatch, build_module):
    monkeypatch.setattr(discovery, "third_party_planned", lambda controls: True)
    monkeypatch.setattr(sys.modules["tvm"], "__version__", "0.29.0")  # a release no list could know
    activation.autoload()
    assert integration.is_installed()
    integration.uninstall()
    # codegen_build renamed, as a TVM that changed what the route calls would ship it.
    monkeypatch.delattr(build_module, "codegen_build")
    with pytest.raises(gate.UnsupportedTVMError, match=r"lacks tvm\.tirx\.build\.codegen_build \(missing\)") as info:
        integration.install()
    assert "0.29.0" in str(info.value) and "pip install" not in str(info.value)
    with pytest.warns(PluginWarning, match=r"codegen_build \(missing\)") as caught:
        activation.autoload()
    assert len(caught) == 1 and "TILELANG_HOSTCG_AUTO_INSTALL=0" in str(caught[0].message)
    assert not integration.is_installed() and gate.is_tvms_own(build_module.tir_to_runtime, build_module)


def test_a_wrapped_route_still_routes_and_uninstall_hands_it_to_tvm(monkeypatch, build_module):
    from tilelang_hostcg.clients._interface import routing

    integration.install()
    route = build_module.tir_to_runtime

    @functools.wraps(route)  # another tvm.backends package wraps the route and calls it
    def wrapper(*args):
        return route(*args)

    build_module.tir_to_runtime = wrapper
    # Before a build, what can be known: the wrapper reaches the route. The first build shows it.
    answer = routing(integration.CLIENT)
    assert integration.is_installed() and answer.routed is True and not answer.by_build
    import tvm
    from tvm.script import tirx as T

    @T.prim_func
    def zero(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(0)

    tvm.compile(zero, target="llvm")
    assert integration.is_installed() and routing(integration.CLIENT).routed and integration.CLIENT.live().by_build
    with pytest.warns(PluginWarning, match=r"left tvm\.tirx\.build\.tir_to_runtime as it is: .*test_tvm_unit.* around"):
        integration.uninstall()  # its wrapper stays; the route in it hands every build to TVM's original
    assert build_module.tir_to_runtime is wrapper and not integration.is_installed()
    calls = []
    monkeypatch.setattr(PROCESS, "thread", _Recorder(calls))

    @T.prim_func
    def one(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(1)

    assert "define" in tvm.compile(one, target="llvm").mod.inspect_source("ll")
    assert calls == []  # the route never entered a routed build
    with pytest.raises(gate.UnsupportedTVMError, match="already replaced by another package"):
        integration.install()  # the wrapper is another package's: left alone


class _Recorder:
    """A stand-in for the threads' state that records every flag set (a routed build sets one)."""

    def __init__(self, calls: list[str]) -> None:
        object.__setattr__(self, "calls", calls)

    def __getattr__(self, name: str) -> bool:
        return False

    def __setattr__(self, name: str, value: object) -> None:
        self.calls.append(name)


def test_a_replaced_route_is_not_installed_and_names_its_replacer(monkeypatch, build_module):
    from tilelang_hostcg.clients._interface import routing

    monkeypatch.setattr(discovery, "third_party_planned", lambda controls: True)
    integration.install()
    original = build_module.tir_to_runtime.__wrapped__

    @functools.wraps(original)  # replaces the route, never calls it: copies TVM's __module__
    def rival(*args):
        return original(*args)

    build_module.tir_to_runtime = rival
    answer = routing(integration.CLIENT)
    assert not integration.is_installed() and answer.routed is False
    assert answer.blocker is not None and __name__ in answer.blocker and __file__ in answer.blocker
    assert "'tvm.tirx.build'" not in answer.blocker
    with pytest.warns(PluginWarning, match="in place of tilelang_hostcg's replacement"):
        integration.uninstall()
    assert build_module.tir_to_runtime is rival  # left alone


def test_runtime_only_and_tilelang_processes_are_left_alone(monkeypatch, build_module, tmp_path):
    monkeypatch.setattr(discovery, "third_party_planned", lambda controls: True)
    monkeypatch.setattr(sys.modules["tvm"], "_RUNTIME_ONLY", True)
    activation.autoload()
    assert not integration.is_installed()
    monkeypatch.setattr(sys.modules["tvm"], "_RUNTIME_ONLY", False)
    tilelang = types.ModuleType("tilelang")  # TileLang: its package holds a layout's module
    (tmp_path / "tilelang" / "engine").mkdir(parents=True)
    (tmp_path / "tilelang" / "engine" / "__init__.py").write_text("")
    (tmp_path / "tilelang" / "engine" / "lower.py").write_text("")
    tilelang.__path__ = [str(tmp_path / "tilelang")]
    monkeypatch.setitem(sys.modules, "tilelang", tilelang)
    activation.autoload()
    assert not integration.is_installed()


# ------------------------------------------------------------------ used is shown by a build
def _zero():
    """A tiny TIR function (built for a ``c`` or ``llvm`` host: no device needed)."""
    from tvm import te

    a = te.placeholder((4,), "float32", name="A")
    b = te.compute((4,), lambda i: a[i] + 1.0, name="B")
    return te.create_prim_func([a, b])


def test_a_wrapper_seen_in_a_build_is_held_not_remembered_by_its_address(build_module):
    """A profiler wraps the route (and calls it), a build goes through it, the profiler unwraps and
    its wrapper is freed; then a tool pins TVM's own function. No address of a freed wrapper can
    confirm the new one: not routed, whatever ``id()`` the new function gets."""
    import gc

    import tvm

    integration.install()
    route = build_module.tir_to_runtime

    def profile(*args):
        return route(*args)

    build_module.tir_to_runtime = profile
    tvm.tirx.build(_zero(), target="c")
    assert integration.is_installed() and integration.CLIENT.live().by_build
    build_module.tir_to_runtime = route
    del profile
    gc.collect()
    pinned = [lambda *args, original=route.__wrapped__: original(*args) for _ in range(64)]  # many new addresses
    for pin in pinned:
        build_module.tir_to_runtime = pin
        assert not integration.is_installed()
    build_module.tir_to_runtime = route


def test_a_tracer_keeping_the_route_in_its_module_dict_is_routed_before_and_after_a_build(build_module):
    """The ``_orig = B.f`` idiom: the route is reachable from the tracer's globals, and the build shows it."""
    import tvm

    integration.install()
    tracer = types.ModuleType("route_tracer")
    exec("import sys\nB = sys.modules['tvm.tirx.build']\n_orig = B.tir_to_runtime\ncalls = []\n"
         "def traced(*args):\n    calls.append(1)\n    return _orig(*args)\n"
         "B.tir_to_runtime = traced\n", tracer.__dict__)
    live = integration.CLIENT.live()
    assert live.routed and not live.by_build
    tvm.tirx.build(_zero(), target="c")
    live = integration.CLIENT.live()
    assert live.routed and live.by_build and tracer.calls == [1]
    build_module.tir_to_runtime = tracer._orig

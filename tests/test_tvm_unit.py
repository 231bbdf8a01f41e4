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

import tilelang_hostcg.discovery._planning as discovery
import tilelang_hostcg.tvm as integration
from tilelang_hostcg import PluginWarning
from tilelang_hostcg.discovery._planning import normalize_name
from tilelang_hostcg.tvm import activation, gate


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


def test_both_activations_decide_by_one_function(monkeypatch, build_module):
    calls = []

    def decide(controls):
        calls.append(controls)
        return False

    monkeypatch.setattr(discovery, "third_party_planned", decide)
    from tilelang_hostcg.tilelang.activation import activate

    activate()
    activation.autoload()
    assert len(calls) == 2  # TileLang's activation and TVM's: the same function decides
    assert not integration.is_installed() and gate.is_tvms_own(build_module.tir_to_runtime, build_module)
    monkeypatch.setattr(discovery, "third_party_planned", lambda controls: True)
    activation.autoload()
    route = build_module.tir_to_runtime
    assert integration.is_installed() and route.__module__ == "tilelang_hostcg.tvm.route"
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
    with pytest.warns(PluginWarning, match="did not activate its TVM integration: metadata exploded") as caught:
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


def test_another_tvm_version_is_refused_naming_it_and_the_range():
    fake = types.SimpleNamespace(__version__="0.26.0", __file__="/x/tvm/__init__.py")
    with pytest.raises(gate.UnsupportedTVMError, match=r"TVM 0\.26\.0 .*\(apache-tvm>=0\.27,<0\.28\)"):
        gate.check(fake, None)  # type: ignore[arg-type]
    assert gate.supported_version("0.27.1.dev3") and not gate.supported_version("0.28.0")


def test_runtime_only_and_tilelang_processes_are_left_alone(monkeypatch, build_module):
    monkeypatch.setattr(discovery, "third_party_planned", lambda controls: True)
    monkeypatch.setattr(sys.modules["tvm"], "_RUNTIME_ONLY", True)
    activation.autoload()
    assert not integration.is_installed()
    monkeypatch.setattr(sys.modules["tvm"], "_RUNTIME_ONLY", False)
    monkeypatch.setitem(sys.modules, "tilelang", types.ModuleType("tilelang"))
    activation.autoload()
    assert not integration.is_installed()

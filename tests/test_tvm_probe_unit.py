"""Whether TVM's builds use the route is shown by a build, never by reading code: real apache-tvm,
its ``tvm.tirx.build`` edited in this process the ways maintainers edit it (a decorator on
``build``, ``tir_to_runtime`` kept only under a dead branch), and ``check``'s probe build."""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import textwrap
import types
from collections.abc import Iterator

import pytest

import tilelang_hostcg.tvm as integration
from tilelang_hostcg.clients._probe import CONFIRMED, NOT_CALLED, probe
from tilelang_hostcg.tvm import _points as gate


@pytest.fixture
def build_module() -> Iterator[types.ModuleType]:
    """TVM's ``tvm.tirx.build`` module; its ``build`` and ``tir_to_runtime`` put back afterwards."""
    import tvm  # noqa: F401

    module = sys.modules["tvm.tirx.build"]
    original, build, code = module.tir_to_runtime, module.build, module.build.__code__
    assert gate.is_tvms_own(original, module)
    yield module
    integration.uninstall()
    module.tir_to_runtime, module.build = original, build
    build.__code__ = code
    for name in ("_LEGACY", "_tir_to_runtime_v2"):
        module.__dict__.pop(name, None)


def _dead_branch(module: types.ModuleType) -> None:
    """TVM's ``build`` as a release that keeps ``tir_to_runtime`` only under a dead ``if _LEGACY:``
    branch ships it: the same function object, its code changed."""
    source = textwrap.dedent(inspect.getsource(module.build))
    call = "return tir_to_runtime(host_mod, device_mod_dict, target_host)"
    assert source.count(call) == 1
    source = source.replace(call, "if _LEGACY:\n        " + call + "\n    return _tir_to_runtime_v2(host_mod, "
                                  "device_mod_dict, target_host)")
    namespace = dict(module.__dict__)
    exec(compile(source, module.__file__, "exec"), namespace)
    module._LEGACY = False
    module._tir_to_runtime_v2 = module.tir_to_runtime.__wrapped__ if hasattr(
        module.tir_to_runtime, "__wrapped__") else module.tir_to_runtime
    module.build.__code__ = namespace["build"].__code__


def test_the_probe_build_confirms_the_route(build_module):
    integration.install()
    found = probe(integration.CLIENT)
    assert found is not None and found.called is True and found.text == CONFIRMED and found.hints == ()
    assert found.seconds < 1.0, found.seconds  # the probe costs at most about a second
    assert integration.is_installed() and integration.CLIENT.live().by_build


def test_no_probe_where_the_integration_is_not_installed(build_module):
    assert probe(integration.CLIENT) is None


def test_a_route_kept_only_under_a_dead_branch_is_not_used_and_the_probe_says_so(build_module):
    """Every point is there and of its shape, so install works; TVM's build never calls the route."""
    integration.install()
    _dead_branch(build_module)
    assert [point.problem() for point in gate.POINTS] == [None] * len(gate.POINTS)
    found = probe(integration.CLIENT)
    assert found is not None and found.called is False and found.text == NOT_CALLED
    assert integration.CLIENT.state is not None and integration.CLIENT.state.calls == 0  # never called


def test_a_decorated_build_is_accepted_and_routed(build_module):
    """``functools.wraps`` on ``tvm.tirx.build.build``: its code is the wrapper's, the route is
    still what it calls."""
    inner = build_module.build

    @functools.wraps(inner)
    def build(*args, **kwargs):
        return inner(*args, **kwargs)

    build_module.build = build
    assert [point.problem() for point in gate.POINTS] == [None] * len(gate.POINTS)
    assert [point.hint() for point in gate.POINTS] == [None] * len(gate.POINTS)  # read through __wrapped__
    integration.install()
    found = probe(integration.CLIENT)
    assert found is not None and found.called is True
    assert integration.is_installed()


def test_codegen_build_as_an_ffi_function_is_accepted_and_builds(build_module, monkeypatch):
    """TVM's ``codegen_build`` as a compiled FFI function (its parameters cannot be read): called by
    position, it is the shape the route needs, and the route is still used."""
    import tvm

    def codegen_build(mod, target):  # what an FFI function called by position does
        return tvm.get_global_func("target.build." + target.kind.name)(mod, target)

    ffi = tvm.get_global_func("tilelang_hostcg.test.codegen_build", allow_missing=True)
    if ffi is None:
        tvm.register_global_func("tilelang_hostcg.test.codegen_build", codegen_build)
        ffi = tvm.get_global_func("tilelang_hostcg.test.codegen_build")
    monkeypatch.setattr(build_module, "codegen_build", ffi)
    with pytest.raises((TypeError, ValueError)):
        inspect.signature(ffi)
    assert [point.problem() for point in gate.POINTS] == [None] * len(gate.POINTS)
    integration.install()
    found = probe(integration.CLIENT)
    assert found is not None and found.called is True


def test_a_tracer_keeping_the_original_in_its_module_dict_passes_check(build_module):
    """The ``_orig = B.f`` idiom (a tracer wraps the route and calls what it kept): ``check``'s
    client answer and its probe build both say routed, so ``--strict`` has nothing to fail on."""
    from tilelang_hostcg.cli._probe_process import probed_client

    integration.install()
    tracer = types.ModuleType("route_tracer")
    exec("import sys\nB = sys.modules['tvm.tirx.build']\n_orig = B.tir_to_runtime\n"
         "def traced(*args):\n    return _orig(*args)\nB.tir_to_runtime = traced\n", tracer.__dict__)
    before, _ = probed_client(None)
    assert before["routed"] is True and before["probe"] is None
    client, _ = probed_client(probe)  # in this process, where the tracer is
    assert client["routed"] is True and client["problem"] is None and client["probe"]["confirmed"] is True
    build_module.tir_to_runtime = tracer._orig


@pytest.mark.parametrize("failing, error", [
    (lambda mod, target: 1 / 0, "ZeroDivisionError: division by zero"),
    (lambda mod, target: sys.exit(0), "SystemExit: sys.exit(0) was called, which ends a user's program"),
], ids=["raises", "sys-exit"])
def test_a_build_that_takes_the_route_and_fails_is_never_confirmed(build_module, failing, error):
    """The route is called, and the codegen it resolves fails: a failure, told (never raised), not a
    confirmation; ``watch_calls`` saw the codegen called."""
    from tilelang_hostcg import HostCodegen, Registry
    from tilelang_hostcg.clients._probe import RAISED

    registry = Registry()
    registry.register_host_codegen("c", HostCodegen("failing-c", failing, priority=100))
    seen = []
    registry.watch_calls(lambda reg: contextlib.nullcontext(seen.append(reg.name)))
    integration.install(registry=registry)
    found = probe(integration.CLIENT)
    assert found is not None and found.called is True and not found.confirmed
    assert found.failure is not None and (found.failure.how, found.failure.error) == (RAISED, error)
    assert found.text == f"the probe build failed: {error}" and seen == ["failing-c"]

"""A build that completes without taking the route is noticed, by that build: real apache-tvm, its
``tvm/tirx/build.py`` as releases that edit it would ship it (the installed file's text, edited, run as
the module: :func:`release`), and a later package that takes the route out of TVM's builds. The
first such build is one warning naming the point, and ``is_installed()`` is false from then on; a
point that gains ``**options`` hands a call it cannot serve to TVM's own function, with one warning,
and the user's compile never fails."""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import json
import sys
import types
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tilelang_hostcg.tvm as integration
from tilelang_hostcg import HostCodegen, PluginWarning, Registry
from tilelang_hostcg.clients._interface import routing
from tilelang_hostcg.tvm import _points as gate

POINT = "tvm.tirx.build.tir_to_runtime"
CALL = "    return tir_to_runtime(host_mod, device_mod_dict, target_host)\n"
MOVED = "    return _build_runtime(host_mod, device_mod_dict, target_host)\n"
ALIAS = '''

def tir_to_runtime(host_mod, device_mod_dict, target_host):
    """Deprecated: use build_runtime_module."""
    logging.getLogger(__name__).warning("tir_to_runtime is deprecated: use build_runtime_module")
    return build_runtime_module(host_mod, device_mod_dict, target_host)
'''
HELPER = '''

class _RuntimeBuilder:
    """Turns split TIR modules into one runtime module."""

    def tir_to_runtime(self, host_mod, device_mod_dict, target_host):
        return _build_runtime(host_mod, device_mod_dict, target_host)


_RUNTIME = _RuntimeBuilder()
'''
# Each: the edits of tvm/tirx/build.py a release makes (``COPY``: ``tir_to_runtime``'s body is also
# kept under another name, ``_build_runtime``, as a release that moved it ships it).
RELEASES: dict[str, list[tuple[str, str]]] = {
    "dead branch": [("COPY", ""), (CALL, "    if target_host is None:  # never: it was made above\n"
                                         "    " + CALL + MOVED)],
    "same-named helper": [("COPY", HELPER), (CALL, "    return _RUNTIME.tir_to_runtime(host_mod, device_mod_dict, "
                                                   "target_host)\n")],
    "renamed point, deprecated alias": [("def tir_to_runtime(", "def build_runtime_module("),
                                        (CALL, CALL.replace("tir_to_runtime", "build_runtime_module") + ALIAS),
                                        ("import tvm\n", "import logging\n\nimport tvm\n")],
    "legacy flag": [("COPY", ""), (CALL, '    if os.environ.get("TVM_LEGACY_TIR_TO_RUNTIME") == "1":\n'
                                         "    " + CALL + MOVED),
                    ("import tvm\n", "import os\n\nimport tvm\n")],
}
OPTIONS = [("dict[Target, IRModule], target_host: Target\n):", "dict[Target, IRModule], target_host: Target, "
            "**options\n):"), (CALL, CALL.replace("target_host)", 'target_host, purpose="host")'))]


@pytest.fixture
def build_module() -> Iterator[types.ModuleType]:
    """TVM's ``tvm.tirx.build`` module; afterwards its namespace, ``tvm.tirx.build`` and the
    ``tirx.build`` global function are as they were."""
    import tvm

    module = sys.modules["tvm.tirx.build"]
    saved, build = dict(module.__dict__), tvm.tirx.build
    assert gate.is_tvms_own(module.tir_to_runtime, module)
    yield module
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        integration.uninstall()
    module.__dict__.clear()
    module.__dict__.update(saved)
    tvm.tirx.build = build
    tvm.register_global_func("tirx.build", saved["build"], override=True)


def release(module: types.ModuleType, edits: list[tuple[str, str]]) -> None:
    """``tvm/tirx/build.py`` as a release that made ``edits`` ships it: the installed file's text,
    edited, run as the module (``tvm.tirx.build`` and the ``tirx.build`` global function its new
    ``build``, as at ``import tvm``)."""
    import tvm

    path = Path(module.__file__)  # type: ignore[arg-type]
    source = path.read_text(encoding="utf-8")
    for old, new in edits:
        if old == "COPY":  # tir_to_runtime's code kept as _build_runtime, before build, with what is added
            copy = _function(source, "tir_to_runtime").replace("def tir_to_runtime(", "def _build_runtime(", 1)
            old, new = "\n\ndef build(", f"\n\n{copy}\n{new}\n\ndef build("
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    source = source.replace('register_global_func("tirx.build", build)',
                            'register_global_func("tirx.build", build, override=True)')
    exec(compile(source, str(path), "exec"), module.__dict__)
    tvm.tirx.build = module.build


def _function(source: str, name: str) -> str:
    """The text of the module-level function ``name`` in ``source``."""
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return "\n".join(source.splitlines()[node.lineno - 1:node.end_lineno])


def _function_for(target: str) -> Any:
    """A tiny TIR function, built for ``target``'s host (no device needed)."""
    from tvm import te

    a = te.placeholder((4,), "float32", name="A")
    b = te.compute((4,), lambda i: a[i] + 1.0, name="B")
    return te.create_prim_func([a, b])


def _plugin_registry(built: list[str]) -> Registry:
    """A registry whose ``c`` codegen is a plugin's: it records each build, then builds as TVM does."""
    import tvm

    def build(mod: Any, target: Any) -> Any:
        built.append("plugin")
        return tvm.get_global_func("target.build.c")(mod, target)

    registry = Registry()
    registry.register_host_codegen("c", HostCodegen("plugin-c", build, priority=10))
    return registry


def _compile() -> list[str]:
    """``tvm.compile`` for a ``c`` host, as a program calls it; the PluginWarnings it gave."""
    import tvm

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tvm.compile(_function_for("c"), target="c")
    return [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]


def _cli(*argv: str) -> dict[str, Any]:
    """A command of the command line, run in this process; its JSON document."""
    from tilelang_hostcg.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main([*argv, "--json"])
    return json.loads(out.getvalue())


def _checked_client() -> dict[str, Any]:
    """``check``'s client document, its probe build run in this process, where the edited release is
    (``check`` runs it in a process of its own, which imports TVM's files as they are on disk)."""
    from tilelang_hostcg.cli._probe_process import probed_client
    from tilelang_hostcg.clients._probe import probe

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client, _ = probed_client(probe)
    return client


@pytest.mark.parametrize("case", list(RELEASES))
def test_the_first_build_that_bypasses_the_route_is_one_warning_naming_it(build_module, case, monkeypatch):
    """Every point is there and of its shape, so ``install()`` works and, before a build,
    ``is_installed()`` says what can be known (true). The first build completes stock: one warning
    naming the point, and ``is_installed()`` is false from then on, as every client line says."""
    release(build_module, RELEASES[case])
    assert [point.problem() for point in gate.POINTS] == [None] * len(gate.POINTS)
    built: list[str] = []
    integration.install(registry=_plugin_registry(built))
    assert integration.is_installed() and not integration.CLIENT.live().by_build
    (warning,) = _compile()
    assert built == [] and not integration.is_installed() and integration.CLIENT.live().by_build
    assert f"a TVM build completed without calling {POINT} (TVM's code no longer reaches it)" in warning
    assert "is_installed() is false" in warning and "TILELANG_HOSTCG_AUTO_INSTALL=0" in warning
    assert "pip install" not in warning
    assert _compile() == [] and not integration.is_installed()  # one warning: the next build says nothing
    reason = routing(integration.CLIENT).reason
    assert reason.startswith(f"the last build did not call the route {POINT}: TVM's code no longer reaches it")
    for argv in (("list", "--load"), ("explain", "c")):
        client = _cli(*argv)["client"]
        assert client["routed"] is False and client["active"] is None and client["problem"] == reason, argv
    checked = _checked_client()
    assert checked["routed"] is False and checked["probe"]["called"] is False
    assert POINT in checked["problem"]
    if case == "legacy flag":  # the build decides: where the flag sends builds through the route, routed
        monkeypatch.setenv("TVM_LEGACY_TIR_TO_RUNTIME", "1")
        assert _compile() == [] and built == ["plugin"] and integration.is_installed()


def test_where_warnings_are_errors_the_build_still_returns_and_the_warning_is_shown(build_module):
    import tvm

    release(build_module, RELEASES["dead branch"])
    integration.install(registry=_plugin_registry([]))
    with warnings.catch_warnings(record=True) as shown:  # shown (recorded here), never raised
        warnings.simplefilter("error")
        executable = tvm.compile(_function_for("c"), target="c")
    assert "int32_t" in executable.mod.inspect_source() and not integration.is_installed()
    assert [f"without calling {POINT}" in str(w.message) for w in shown] == [True]


def test_a_point_that_gains_options_hands_the_call_to_tvm_and_warns_once(build_module):
    """``tir_to_runtime(..., **options)``, called with ``purpose="host"``: the route cannot serve it,
    so TVM's own function builds, with one warning naming the point; the compile never fails."""
    release(build_module, OPTIONS)
    built: list[str] = []
    integration.install(registry=_plugin_registry(built))
    assert integration.is_installed()
    (warning,) = _compile()
    assert built == [] and f"TVM called {POINT}, which tilelang_hostcg.tvm replaced, with purpose=" in warning
    assert "TVM's own tir_to_runtime served the call" in warning and "pip install" not in warning
    assert not integration.is_installed() and _compile() == []
    live = integration.CLIENT.live()
    assert live.by_build and live.unused == POINT and live.unserved == "purpose="
    assert routing(integration.CLIENT).reason.startswith(
        f"the last build called the route {POINT} with purpose=, which it was not written for")


def test_a_later_rival_that_takes_the_route_out_is_noticed_naming_it(build_module):
    """Another package replaces the route after ours, with a ``functools.wraps`` wrapper (so it
    reaches ours) that calls TVM's own function: what can be known says routed; the first build
    shows it is not, naming that package, and ``check`` names it too."""
    integration.install(registry=_plugin_registry([]))
    rival = types.ModuleType("later_rival")
    rival.__file__ = "/site-packages/later_rival.py"
    exec(compile("import functools, inspect, sys\nB = sys.modules['tvm.tirx.build']\nfound = B.tir_to_runtime\n"
                 "own = inspect.unwrap(found)\n@functools.wraps(found)\ndef tir_to_runtime(*args):\n"
                 "    return own(*args)\nB.tir_to_runtime = tir_to_runtime\n", rival.__file__, "exec"),
         rival.__dict__)
    sys.modules["later_rival"] = rival
    try:
        assert integration.is_installed()  # before a build: it holds ours, so it may call it
        (warning,) = _compile()
        assert f"{POINT} (held by 'later_rival' (/site-packages/later_rival.py), which does not call it)" in warning
        assert "that package must call the function it replaced" in warning
        assert not integration.is_installed()
        client = _checked_client()
        assert client["problem"].startswith("the probe build did not call the route: plugins are not used")
        assert "later_rival" in client["problem"]
    finally:
        del sys.modules["later_rival"]
        build_module.tir_to_runtime = rival.found


def test_builds_tvm_hands_to_its_own_function_on_purpose_are_not_noticed(build_module):
    """A compile nested in a plugin's codegen goes to TVM's original on purpose: neither it nor the
    routed build around it is a build that bypassed the route."""
    import tvm

    nested: list[str] = []

    def build(mod: Any, target: Any) -> Any:
        nested.append(tvm.compile(_function_for("c"), target="c").mod.inspect_source()[:0])
        return tvm.get_global_func("target.build.c")(mod, target)

    registry = Registry()
    registry.register_host_codegen("c", HostCodegen("nesting-c", build, priority=10))
    integration.install(registry=registry)
    assert _compile() == [] and nested == [""] and integration.is_installed()
    assert integration.CLIENT.live().by_build


def test_uninstall_puts_tvms_build_back(build_module):
    import tvm

    build = tvm.tirx.build
    integration.install()
    assert tvm.tirx.build is not build and inspect.unwrap(tvm.tirx.build) is build
    assert tvm.tirx.build.__name__ == "build" and tvm.tirx.build.__doc__ == build.__doc__
    integration.uninstall()
    assert tvm.tirx.build is build


def test_a_build_that_fails_before_the_route_shows_nothing(build_module):
    """A build that raises before it reaches ``tir_to_runtime`` (an unknown pipeline) did not complete:
    no warning, and ``is_installed()`` still says what can be known."""
    import tvm

    integration.install(registry=_plugin_registry([]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(Exception, match="no-such-pipeline"):
            tvm.compile(_function_for("c"), target="c", tir_pipeline="no-such-pipeline")
    assert [w for w in caught if issubclass(w.category, PluginWarning)] == []
    assert integration.is_installed() and not integration.CLIENT.live().by_build
    assert _compile() == [] and integration.CLIENT.live().by_build  # the next build that completes decides


def test_a_build_that_uninstall_overtakes_is_not_noticed(build_module, monkeypatch):
    """``uninstall()`` (from another thread, here from inside TVM's build before it reaches
    ``tir_to_runtime``) hands the build to TVM's original: that is no bypass, and nothing warns."""
    import tvm

    integration.install(registry=_plugin_registry([]))
    split = build_module.split_host_device_mods

    def uninstalling(mod: Any) -> Any:
        integration.uninstall()
        return split(mod)

    monkeypatch.setattr(build_module, "split_host_device_mods", uninstalling)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tvm.compile(_function_for("c"), target="c")
    assert [str(w.message) for w in caught if issubclass(w.category, PluginWarning)] == []
    assert integration.CLIENT.state is None and not integration.is_installed()

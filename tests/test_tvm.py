"""The second client: plain apache-tvm 0.27 users get a plugin's host code from ``pip install`` alone.

Real apache-tvm, real plugin wheels pip-installed into fresh environments (layered over the
running one, where the core is installed with its ``tvm.backends`` entry point), and
unchanged user programs run in fresh interpreters: ``tvm.compile`` for ``llvm`` (run on
the CPU), ``c``, a Relax module and a CUDA kernel with an ``llvm`` host (built on the CPU).
"""

from __future__ import annotations

import json
import subprocess
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .plugin_factory import MARKERS_ENV, Plugin, install, module, tvm_backend_env

pytestmark = pytest.mark.slow

CODEGEN_STAMP = "tilelang_hostcg_stamp_codegen"
HOOK_STAMP = "tilelang_hostcg_stamp_hook"
OFF = {"TILELANG_HOSTCG_AUTO_INSTALL": "0"}

# An unchanged apache-tvm program: it never names tilelang_hostcg.
PROGRAM = '''
import json, sys
import numpy as np
import tvm
from tvm.script import ir as I, relax as R, tirx as T
from tvm.target import Target


@T.prim_func
def vector_add(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for i in range(n):
        C[i] = A[i] + B[i]


@T.prim_func
def gpu_vector_add(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for bx in T.thread_binding((n + 127) // 128, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            if bx * 128 + tx < n:
                C[bx * 128 + tx] = A[bx * 128 + tx] + B[bx * 128 + tx]


@I.ir_module
class Model:
    @T.prim_func
    def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = A[i] + T.float32(1)

    @R.function
    def main(x: R.Tensor((8,), "float32")) -> R.Tensor((8,), "float32"):
        cls = Model
        y = R.call_tir(cls.add_one, (x,), R.Tensor((8,), dtype="float32"))
        return y


def tree(mod):
    """Every module's source in an import tree (host first)."""
    out = []
    for m in [mod, *mod.imports]:
        for fmt in ("ll", ""):
            try:
                out.append(m.inspect_source(fmt))
                break
            except Exception:
                continue
    return out


def programs():
    a = np.arange(16, dtype="float32")
    b = np.full(16, 0.5, dtype="float32")
    c = tvm.runtime.tensor(np.zeros(16, dtype="float32"))
    llvm = tvm.compile(vector_add, target="llvm")
    llvm(tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
    ex = tvm.compile(Model, target="llvm")
    vm = tvm.relax.VirtualMachine(ex, tvm.cpu())
    relax_out = vm["main"](tvm.runtime.tensor(np.arange(8, dtype="float32"))).numpy()
    cuda = Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    cuda_host = Target({"kind": "cuda", "arch": "sm_90a"}, host="cuda_host")
    return {
        "llvm": tree(llvm.mod), "llvm_runs": bool(np.allclose(c.numpy(), a + b)),
        "c": tree(tvm.compile(vector_add, target="c").mod),
        "relax": tree(ex.mod), "relax_runs": bool(np.allclose(relax_out, np.arange(8) + 1)),
        "cuda_llvm": tree(tvm.compile(gpu_vector_add, target=cuda).mod),
        "cuda_host": tree(tvm.tirx.build(gpu_vector_add, target=cuda_host)),
        "global_func": tree(tvm.get_global_func("tirx.build")(vector_add, Target("c"), "default")),
    }


def state():
    build = sys.modules["tvm.tirx.build"]
    route = build.tir_to_runtime
    return {"routed": getattr(route, "__module__", "") == "tilelang_hostcg.tvm._route",
            "registry_imported": any("Registry" in vars(module) for name, module in list(sys.modules.items())
                                     if name.startswith("tilelang_hostcg.") and module is not None),
            "packaging_imported": "packaging" in sys.modules}
'''


def run(env: PluginEnvironment, code: str, *, env_vars: dict[str, str] | None = None) -> Any:
    """Run ``PROGRAM`` + ``code`` as a script file (TVMScript reads its source) in a fresh
    interpreter of ``env``, outside the checkout; returns the JSON document it prints last
    and its stderr."""
    script = env.path / f"program_{uuid.uuid4().hex[:8]}.py"
    script.write_text(PROGRAM + textwrap.dedent(code))
    proc = subprocess.run([env.python, str(script)], capture_output=True, text=True,
                          env=env.environ(env_vars), cwd=env.path, timeout=600)
    assert proc.returncode == 0, f"subprocess failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def stamped(sources: list[str]) -> list[bool]:
    return [any(s in text for text in sources) for s in (CODEGEN_STAMP, HOOK_STAMP)]


@pytest.fixture(scope="module")
def stamp_env(environments: Environments, first_party_wheels: dict[str, Path]) -> PluginEnvironment:
    """apache-tvm with the stamp plugin's wheel pip-installed."""
    env = environments.new("tvm-stamp")
    env.pip("install", "-q", "--no-deps", "--no-index", str(first_party_wheels["tilelang-hostcg-stamp"]))
    return env


@pytest.fixture(scope="module")
def stock(stamp_env: PluginEnvironment) -> dict[str, Any]:
    """Stock TVM's outputs: the same environment with activation off."""
    out, err = run(stamp_env, "print(json.dumps({'out': programs(), 'state': state()}))", env_vars=OFF)
    assert not out["state"]["routed"] and not out["state"]["registry_imported"]
    assert err == ""
    return out["out"]  # type: ignore[no-any-return]


def test_an_unchanged_program_picks_up_the_stamp_plugin(stamp_env, stock):
    (out, err) = run(stamp_env, """
        before = state()
        got = programs()
        import tilelang_hostcg.tvm as integration
        route = sys.modules["tvm.tirx.build"].tir_to_runtime
        integration.uninstall()
        back = sys.modules["tvm.tirx.build"].tir_to_runtime is route.__wrapped__
        print(json.dumps({"before": before, "got": got, "after": state(), "back": back,
                          "installed": integration.is_installed(), "again": tree(
                              tvm.compile(vector_add, target="c").mod)}))
    """)
    assert err == ""
    # import tvm routed the build with a tiny wrapper: no registry, no packaging yet.
    assert out["before"] == {"routed": True, "registry_imported": False, "packaging_imported": False}
    got = out["got"]
    assert got["llvm_runs"] and got["relax_runs"]
    assert stamped(got["llvm"]) == [True, False]  # the llvm codegen; no device, no hook
    assert stamped(got["c"]) == [True, False]
    assert stamped(got["relax"]) == [True, False]
    assert stamped(got["cuda_llvm"][:1]) == [True, True]  # the hook's mark in the host IR
    assert got["cuda_llvm"][1:] == stock["cuda_llvm"][1:]  # device code: TVM's, as before
    assert stamped(got["cuda_host"][:1]) == [False, True]  # TVM's cuda_host default, the hook
    assert got["cuda_host"][1:] == stock["cuda_host"][1:]
    assert stamped(got["global_func"]) == [True, False]  # the tirx.build global function too
    for name in ("llvm", "c", "relax", "cuda_llvm", "cuda_host", "global_func"):
        assert stamped(stock[name]) == [False, False]
    # uninstall(): TVM's very function is back, and the output is stock again.
    assert out["back"] and not out["installed"] and not out["after"]["routed"]
    assert out["again"] == stock["c"]


@pytest.fixture(scope="module")
def defaults_env(environments: Environments, tmp_path_factory: pytest.TempPathFactory) -> PluginEnvironment:
    """apache-tvm with a third-party plugin that serves none of the kinds built (a ``rocm``
    hook): the route is active and TVM's own codegens are the ones chosen."""
    env = environments.new("tvm-defaults")
    install(env, tmp_path_factory.mktemp("tvm-defaults"), [Plugin(
        "hcgt-tvm-rocm", hooks={"rocm": "hcgt_tvm_rocm:HOOKS"},
        files={"hcgt_tvm_rocm.py": module("HOOKS = (_hook('rocm_mark'),)\n")})])
    return env


def test_routed_with_tvms_defaults_only_the_output_is_byte_identical(defaults_env):
    stock, _ = run(defaults_env, "print(json.dumps({'out': programs(), 'state': state()}))", env_vars=OFF)
    routed, err = run(defaults_env, """
        import tilelang_hostcg as hc
        from tvm.target import Target
        got = programs()
        chosen = {kind: [hc.resolve_host_codegen(Target(kind)).name,
                         hc.default_registry().resolution(Target(kind)).choice.registration.origin.distribution]
                  for kind in ("llvm", "c", "cuda_host")}
        print(json.dumps({'out': got, 'state': state(), 'chosen': chosen}))
    """)
    assert err == ""
    assert not stock["state"]["routed"]
    assert routed["state"]["routed"] and routed["state"]["registry_imported"]  # the route ran
    assert routed["chosen"] == {"llvm": ["apache-tvm-llvm", "apache-tvm"], "c": ["apache-tvm-c", "apache-tvm"],
                                "cuda_host": ["apache-tvm-cuda_host", "apache-tvm"]}
    assert routed["out"] == stock["out"]  # LLVM IR, C source, CUDA host and device: byte for byte


@pytest.mark.parametrize("switch", [
    {"TILELANG_HOSTCG_AUTO_INSTALL": "0"},
    {"TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD": "1"},
    {"TILELANG_HOSTCG_DISABLE": "tilelang-hostcg-stamp"},
    {"TILELANG_HOSTCG_ONLY": "nothing-installed"},
], ids=["auto-install-0", "disable-autoload", "disable-dist", "only-other"])
def test_the_switches_leave_tvm_untouched(stamp_env, stock, switch):
    env_vars = dict(switch)
    (out, _) = run(stamp_env, "print(json.dumps({'state': state(), 'c': tree(tvm.compile(vector_add, "
                              "target='c').mod)}))", env_vars=env_vars)
    assert out["state"]["routed"] is False
    assert out["c"] == stock["c"]


def test_without_a_plugin_tvm_is_untouched(environments: Environments):
    env = environments.new("tvm-bare")
    (out, err) = run(env, "print(json.dumps({'state': state(), 'mods': sorted(m for m in sys.modules "
                          "if m.startswith('tilelang_hostcg'))}))")
    assert err == ""
    assert out["state"] == {"routed": False, "registry_imported": False, "packaging_imported": False}


def test_runtime_only_mode_is_silent(stamp_env):
    proc = stamp_env.python_run("import sys, tvm; print(sys.modules['tvm.tirx.build'].tir_to_runtime.__module__ "
                                "if 'tvm.tirx.build' in sys.modules else 'none')",
                                env={"TVM_USE_RUNTIME_LIB": "1"}, cwd=stamp_env.path)
    proc_w = stamp_env.python_run("import tvm", env={"TVM_USE_RUNTIME_LIB": "1", "PYTHONWARNINGS": "error"},
                                  cwd=stamp_env.path)
    assert proc.returncode == 0 and proc_w.returncode == 0, proc.stderr + proc_w.stderr
    assert proc.stderr == "" and proc_w.stderr == ""
    assert proc.stdout.strip() in ("tvm.tirx.build", "none")


@pytest.fixture(scope="module")
def broken_env(environments: Environments, tmp_path_factory: pytest.TempPathFactory) -> PluginEnvironment:
    """A plugin whose ``c`` codegen module raises at import."""
    env = environments.new("tvm-broken")
    install(env, tmp_path_factory.mktemp("tvm-broken"), [Plugin(
        "hcgt-tvm-broken", codegens={"c": "hcgt_tvm_broken"},
        files={"hcgt_tvm_broken.py": module("raise RuntimeError('broken on purpose')\n")})])
    return env


def test_a_broken_plugin_never_breaks_import_tvm_and_is_reported_where_used(broken_env, tmp_path):
    markers = tmp_path / "markers"
    # PYTHONWARNINGS=error: python -W error, for every process
    strict = broken_env.python_run("import tvm", env={"PYTHONWARNINGS": "error", MARKERS_ENV: str(markers)},
                                   cwd=broken_env.path)
    assert strict.returncode == 0 and strict.stderr == "", strict.stderr
    assert not markers.exists()  # nothing of the plugin ran at import tvm
    (out, _) = run(broken_env, """
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            source = tree(tvm.compile(vector_add, target="c").mod)
        print(json.dumps({"state": state(), "warnings": [[w.category.__name__, str(w.message)] for w in caught],
                          "ok": "int32_t" in source[0]}))
    """)
    assert out["state"]["routed"] and out["ok"]  # another provider (TVM's c) still serves
    assert [w[0] for w in out["warnings"]] == ["SkippedPluginWarning"]
    assert "hcgt-tvm-broken" in out["warnings"][0][1] and "broken on purpose" in out["warnings"][0][1]


RIVAL = '''
import sys


def _autoload():
    build = sys.modules["tvm.tirx.build"]
    original = build.tir_to_runtime

    def rival_tir_to_runtime(host_mod, device_mod_dict, target_host):
        sys.modules[__name__].calls += 1
        return original(host_mod, device_mod_dict, target_host)

    build.tir_to_runtime = rival_tir_to_runtime


calls = 0
'''


@pytest.fixture(scope="module")
def rival_env(environments: Environments, tmp_path_factory: pytest.TempPathFactory,
              first_party_wheels: dict[str, Path]) -> PluginEnvironment:
    """The stamp plugin and another ``tvm.backends`` package that replaces ``tir_to_runtime``
    (installed in the layer, it is found before the core's entry point)."""
    return tvm_backend_env(environments.new("tvm-rival"), tmp_path_factory.mktemp("tvm-rival"),
                           first_party_wheels["tilelang-hostcg-stamp"], "aaa-rival-backend", "aaa_rival", RIVAL)


def test_a_rival_replacement_is_warned_once_and_left_alone(rival_env, stock):
    (out, err) = run(rival_env, """
        import aaa_rival
        route = sys.modules["tvm.tirx.build"].tir_to_runtime
        source = tree(tvm.compile(vector_add, target="c").mod)
        print(json.dumps({"name": route.__name__, "calls": aaa_rival.calls, "c": source, "state": state()}))
    """)
    assert out["name"] == "rival_tir_to_runtime" and out["calls"] == 1
    assert out["c"] == stock["c"] and not out["state"]["routed"]
    assert err.count("PluginWarning") == 1 and "already replaced by another package" in err
    assert "aaa_rival" in err and "TILELANG_HOSTCG_AUTO_INSTALL=0" in err
    # Where warnings are errors, the same warning is shown once, never raised.
    strict = rival_env.python_run("import tvm", env={"PYTHONWARNINGS": "error"}, cwd=rival_env.path)
    assert strict.returncode == 0 and strict.stderr.count("PluginWarning") == 1, strict.stderr
    assert "already replaced by another package" in strict.stderr


NESTED = module('''
import tvm
from tvm.script import tirx as T


@T.prim_func
def inner(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = T.float32(2)


def build(mod, target_host):
    _mark("codegen")
    nested = tvm.compile(inner, target="llvm")  # inside a plugin's codegen: TVM's original
    _mark("nested:" + str("nested_stamp" in nested.mod.inspect_source("ll")))
    return tvm.get_global_func("target.build.llvm")(mod, target_host)


hc.register_host_codegen("llvm", hc.HostCodegen("nested_llvm", build, priority=10))
''')


@pytest.fixture(scope="module")
def nested_env(environments: Environments, tmp_path_factory: pytest.TempPathFactory) -> PluginEnvironment:
    env = environments.new("tvm-nested")
    install(env, tmp_path_factory.mktemp("tvm-nested"), [Plugin(
        "hcgt-tvm-nested", codegens={"llvm": "hcgt_tvm_nested"}, files={"hcgt_tvm_nested.py": NESTED})])
    return env


def test_a_compile_nested_in_a_plugins_codegen_goes_to_tvms_original(nested_env, tmp_path):
    markers = tmp_path / "markers"
    (out, _) = run(nested_env, """
        a = np.arange(4, dtype="float32")
        c = tvm.runtime.tensor(np.zeros(4, dtype="float32"))
        mod = tvm.compile(vector_add, target="llvm")
        mod(tvm.runtime.tensor(a), tvm.runtime.tensor(a), c)
        print(json.dumps({"ok": bool(np.allclose(c.numpy(), 2 * a)), "state": state()}))
    """, env_vars={MARKERS_ENV: str(markers)})
    assert out["ok"] and out["state"]["routed"]
    # One codegen call: the nested compile did not come back to the plugin (no recursion).
    assert markers.read_text().split() == ["import:hcgt_tvm_nested", "codegen", "nested:False"]


def test_eight_threads_compiling_during_first_use(stamp_env, tmp_path):
    (out, _) = run(stamp_env, """
        import threading
        results, errors = [None] * 8, []
        barrier = threading.Barrier(8)

        def work(i):
            try:
                barrier.wait()
                target = "c" if i % 2 else "llvm"
                results[i] = [target, tree(tvm.compile(vector_add, target=target).mod)[0]]
            except Exception as exc:
                errors.append(repr(exc))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        import tilelang_hostcg as hc
        regs = sorted(r.name for g in ("tilelang.host_codegen",) for r in hc.default_registry().registrations(g))
        print(json.dumps({"errors": errors, "stamped": [CODEGEN_STAMP in r[1] for r in results],
                          "same": len({r[1] for r in results if r[0] == "c"}) == 1, "regs": regs}))
    """.replace("CODEGEN_STAMP", repr(CODEGEN_STAMP)))
    assert out["errors"] == []
    assert out["stamped"] == [True] * 8 and out["same"]
    # Each default and each plugin codegen registered once, whichever thread came first.
    assert out["regs"] == sorted(["apache-tvm-c", "apache-tvm-cuda_host", "apache-tvm-llvm", "c", "llvm",
                                  "stamp_c", "stamp_llvm"])


def _cli(env: PluginEnvironment, *argv: str, env_vars: dict[str, str] | None = None) -> Any:
    proc = env.command(*argv, env=env_vars, cwd=env.path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout) if "--json" in argv else proc.stdout


def test_the_cli_says_which_client_is_active(stamp_env, defaults_env):
    listed = _cli(stamp_env, "list", "--json")  # imports nothing: cannot know whether TVM has the points
    assert listed["client"]["client"] == "tvm" and listed["client"]["routed"] is None
    assert listed["client"]["active"] is None and listed["client"]["predicted"]
    checked = _cli(stamp_env, "check", "--json")
    probe = checked["client"].pop("probe")
    assert checked["client"] == {"active": "tvm", "client": "tvm", "routed": True, "predicted": False,
                                 "problem": None,
                                 "describe": "TVM integration (tilelang_hostcg.tvm) (confirmed by a probe build)",
                                 "native": None}
    assert probe == {"called": True, "confirmed": True, "text": "confirmed by a probe build", "hints": []}
    assert checked["ok"], checked["problems"]
    explained = _cli(stamp_env, "explain", "llvm", "--json")
    assert explained["client"].pop("probe") is None  # only check builds a probe
    assert explained["client"] == {**checked["client"], "describe": "TVM integration (tilelang_hostcg.tvm)"}
    assert explained["codegen"]["name"] == "stamp_llvm"
    text = _cli(defaults_env, "explain", "llvm")
    assert "client:   TVM integration (tilelang_hostcg.tvm)" in text
    assert "Client: TVM integration (tilelang_hostcg.tvm) (confirmed by a probe build)" in _cli(defaults_env, "check")
    off = _cli(stamp_env, "check", "--json", env_vars=OFF)
    assert off["client"]["active"] is None and "TILELANG_HOSTCG_AUTO_INSTALL=0" in off["client"]["describe"]
    assert [p["severity"] for p in off["problems"] if p["code"] == "client"] == ["info"]  # the user's switch
    assert "Client: none: activation is off" in _cli(stamp_env, "list", env_vars=OFF)
    # TVM's own switch: TVM never calls the entry point. Said so, never "see the warning".
    no_autoload = {"TVM_DEVICE_BACKEND_AUTOLOAD": "0"}
    strict = stamp_env.command("check", "--strict", env=no_autoload, cwd=stamp_env.path)
    assert strict.returncode == 0 and "Client: none: TVM's autoload is off (TVM_DEVICE_BACKEND_AUTOLOAD=0)" in (
        strict.stdout), strict.stdout
    assert "warning" not in _cli(stamp_env, "list", env_vars=no_autoload).lower()


def test_a_rival_that_took_the_route_fails_check_strict_naming_it(rival_env):
    checked = _cli(rival_env, "check", "--json")
    (problem,) = [p for p in checked["problems"] if p["code"] == "client"]
    assert problem["severity"] == "warning" and "aaa_rival" in problem["message"]
    assert "already replaced by another package" in problem["message"] and checked["ok"]
    strict = rival_env.command("check", "--strict", cwd=rival_env.path)
    assert strict.returncode == 1 and "error [client]" in strict.stdout


@pytest.fixture(scope="module")
def tvm26_env(environments: Environments, first_party_wheels: dict[str, Path]) -> PluginEnvironment:
    """apache-tvm 0.26.0, pip-installed from the index into the layer (over the test
    environment's 0.27), and the stamp plugin."""
    env = environments.new("tvm-0.26")
    env.pip("install", "-q", "--no-deps", "apache-tvm==0.26.0")
    env.pip("install", "-q", "--no-deps", "--no-index", str(first_party_wheels["tilelang-hostcg-stamp"]))
    return env


def test_apache_tvm_0_26_has_the_points_and_is_routed(tvm26_env):
    code = """
        c = tree(tvm.compile(vector_add, target="c").mod)
        import tilelang_hostcg.tvm as integration
        print(json.dumps({"version": tvm.__version__, "c": c, "installed": integration.is_installed(),
                          "state": state()}))
    """
    (out, err), (stock, _) = run(tvm26_env, code), run(tvm26_env, code, env_vars=OFF)
    assert out["version"] == "0.26.0" and err == ""
    assert out["installed"] and out["state"]["routed"] and stamped(out["c"]) == [True, False]
    assert stamped(stock["c"]) == [False, False] and not stock["installed"]
    checked = _cli(tvm26_env, "check", "--strict", "--json")
    assert checked["client"]["routed"] and checked["tvm"]["provider_version"] == "0.26.0"

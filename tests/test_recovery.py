"""Failure states recover: ``refresh()`` at any moment and transient failures; what a
thread a plugin starts registers is the program's (real distributions, fresh processes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .plugin_factory import Plugin, install, module, run

pytestmark = pytest.mark.slow

# Calls refresh() on the default registry while that registry imports it.
REFRESHER = Plugin("hcgt-r-refresher", codegens={"test": "hcgt_r_refresher"},
                   files={"hcgt_r_refresher.py": module("""
                       hc.register_host_codegen("test", _codegen("refresher-test"))
                       hc.refresh()
                   """)})
SLOW = Plugin("hcgt-r-slow", codegens={"composite": "hcgt_r_slow"},
              files={"hcgt_r_slow.py": module("""
                  import time
                  time.sleep(0.5)
                  hc.register_host_codegen("composite", _codegen("slow-composite"))
              """)})
# Raises the exception named by $HCG_ARM_EXC once (while $HCG_ARM_FILE exists).
TRANSIENT = Plugin("hcgt-r-transient", codegens={"test": "hcgt_r_transient"},
                   files={"hcgt_r_transient.py": module("""
                       import builtins
                       _armed = _os.environ.get("HCG_ARM_FILE")
                       if _armed and _os.path.exists(_armed):
                           _os.remove(_armed)
                           raise getattr(builtins, _os.environ["HCG_ARM_EXC"])("out of it for now")
                       hc.register_host_codegen("test", _codegen("transient-test"))
                   """)})
# Registers from a thread it starts and waits for (registrations that are the program's).
THREADED = Plugin("hcgt-r-threaded", codegens={"test": "hcgt_r_threaded"},
                  hooks={"cuda": "hcgt_r_threaded"},
                  files={"hcgt_r_threaded.py": module("""
                      import threading

                      def _work():
                          hc.register_host_codegen("test", _codegen("threaded-test"))
                          hc.register_host_codegen_hook("cuda", _hook("threaded-cuda"))

                      _thread = threading.Thread(target=_work)
                      _thread.start()
                      _thread.join()
                  """)})


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> PluginEnvironment:
    root = tmp_path_factory.mktemp("recovery")
    environment = environments.new("recovery")
    install(environment, root, [REFRESHER, SLOW, TRANSIENT, THREADED])
    return environment


def test_refresh_by_a_plugin_during_its_own_import(env, tmp_path):
    out = run(env, """
        out["first"] = attempt(lambda: resolve("test"))
        out["again"] = resolve("test")
        out["llvm"] = resolve("llvm")
        out["source"] = [s["state"] for s in sources() if s["distribution"] == "hcgt-r-refresher"]
        out["origin"] = [r[4:] for r in snapshot() if r[2] == "refresher-test"]
    """, tmp_path / "m.txt", {"TILELANG_HOSTCG_ONLY": "hcgt-r-refresher"})
    assert out["first"] == {"ok": True, "value": "refresher-test", "warnings": []}
    assert out["again"] == "refresher-test" and out["llvm"] == "apache-tvm-llvm"  # TVM's own: the integration is on
    assert out["source"] == ["loaded"]
    assert out["origin"] == [["hcgt-r-refresher", "1.0", "test = hcgt_r_refresher"]]


def test_refresh_from_another_thread_during_first_use(env, tmp_path):
    out = run(env, """
        import time
        first = {}
        worker = threading.Thread(target=lambda: first.update(attempt(lambda: resolve("composite"))))
        worker.start()
        deadline = time.monotonic() + 60
        while "import:hcgt_r_slow" not in markers() and time.monotonic() < deadline:
            time.sleep(0.01)
        hc.refresh()  # the plugin is being imported now (it sleeps 0.5 s after its marker)
        worker.join(30)
        out["first"] = first
        out["next"] = [attempt(lambda: resolve("composite")), attempt(lambda: resolve("llvm"))]
    """, tmp_path / "m.txt", {"TILELANG_HOSTCG_ONLY": "hcgt-r-slow"})
    assert out["next"] == [{"ok": True, "value": "slow-composite", "warnings": []},
                           {"ok": True, "value": "apache-tvm-llvm", "warnings": []}]  # kept by refresh()
    # The call that raced with refresh() loaded again rather than failing.
    assert out["first"]["value"] == "slow-composite", out["first"]


def test_refresh_at_any_moment_leaves_the_core_resolvable(env, tmp_path):
    """refresh() at random moments of other threads' first uses: the call after each
    refresh resolves, and so do the calls it overtook."""
    out = run(env, """
        import random, time
        from tvm.target import Target
        stop = threading.Event()
        racing = []

        def resolver():
            while not stop.is_set():
                try:
                    hc.resolve_host_codegen(Target(random.choice(["llvm", "c"])))
                except Exception as exc:
                    racing.append(type(exc).__name__)

        threads = [threading.Thread(target=resolver) for _ in range(2)]
        for thread in threads:
            thread.start()
        after = []
        rng = random.Random(7)
        for _ in range(150):
            time.sleep(rng.random() / 1000)
            hc.refresh()
            try:
                after.append(hc.resolve_host_codegen(Target("llvm")).name)
            except Exception as exc:
                after.append(type(exc).__name__)
        stop.set()
        for thread in threads:
            thread.join(30)
        out["after"] = sorted(set(after))
        out["racing"] = racing
    """, tmp_path / "m.txt", {"TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert out["after"] == ["llvm"]
    assert out["racing"] == []


@pytest.mark.parametrize("exc", ["RecursionError", "MemoryError"])
def test_transient_failures_are_not_remembered_as_broken(env, tmp_path, exc):
    armed = tmp_path / "armed"
    armed.touch()
    out = run(env, """
        out["first"] = attempt(lambda: resolve("test"))
        out["state"] = [s["state"] for s in sources() if s["distribution"] == "hcgt-r-transient"]
        out["second"] = attempt(lambda: resolve("test"))
        out["after"] = [s["state"] for s in sources() if s["distribution"] == "hcgt-r-transient"]
    """, tmp_path / "m.txt", {"TILELANG_HOSTCG_ONLY": "hcgt-r-transient",
                              "HCG_ARM_FILE": str(armed), "HCG_ARM_EXC": exc})
    first = out["first"]
    assert not first["ok"] and first["error"]["type"] == "PluginLoadError"
    assert first["error"]["cause"]["type"] == exc
    assert "hcgt-r-transient" in first["error"]["message"]
    assert "retried" in first["error"]["message"]
    assert out["state"] == ["lazy"]  # not "broken": the next use tries again
    assert out["second"] == {"ok": True, "value": "transient-test", "warnings": []}
    assert out["after"] == ["loaded"]


def test_registrations_from_a_thread_the_plugin_starts_are_the_programs(env, tmp_path):
    """A registration is a plugin's only when its import made it: what a thread it starts
    registers is registered in code, in the default registry (the façade's, in that
    thread), and the plugin, which registered nothing itself, is broken and says why."""
    out = run(env, """
        registry = isolated("hcgt-r-threaded")
        out["resolve"] = attempt(lambda: resolve("test", registry))
        out["mine"] = [r for r in snapshot(registry) if r[4] == "hcgt-r-threaded"]
        out["default"] = [r[1:3] + r[4:] for r in snapshot() if r[2].startswith("threaded")]
    """, tmp_path / "m.txt")
    assert not out["resolve"]["ok"] and out["resolve"]["error"]["type"] == "PluginLoadError"
    message = out["resolve"]["error"]["message"]
    assert "registered no host codegen for kind 'test'" in message and "other threads" in message
    assert out["mine"] == []
    assert sorted(out["default"]) == [["cuda", "threaded-cuda", None, None, None],
                                      ["test", "threaded-test", None, None, None]]


def test_transient_failure_inside_the_core_process(tmp_path: Path, modules) -> None:
    """In-process: a lazy module raising RecursionError is retried at the next use."""
    from tvm.target import Target

    from tilelang_hostcg import PluginLoadError, Registry

    flag = tmp_path / "flag"
    flag.touch()
    name = modules.write(f"""
        import os
        import tilelang_hostcg as hc
        if os.path.exists({str(flag)!r}):
            os.remove({str(flag)!r})
            raise RecursionError("deep")
        hc.register_host_codegen("test", hc.HostCodegen("ok", lambda m, t: m))
    """)
    registry = Registry()
    registry.register_lazy_host_codegen("test", name)
    with pytest.raises(PluginLoadError) as info:
        registry.resolve_host_codegen(Target("test"))
    assert isinstance(info.value.__cause__, RecursionError)
    assert registry.resolve_host_codegen(Target("test")).name == "ok"

"""Plugins that misbehave while they load, installed as real distributions and used in
fresh processes: any exception but ``KeyboardInterrupt`` is the plugin's failure (its
program goes on, the command line gives its documents), a registration belongs to a
plugin only when its import made it, a module replacing itself in ``sys.modules`` is
replayed like any other, and ``refresh()`` at any moment never changes an answer."""

from __future__ import annotations

import json
import textwrap

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .plugin_factory import Plugin, install, module, run

pytestmark = pytest.mark.slow

# Raises what $HCG_RAISE names, at line 10 of its body (the line the warning names).
HOSTILE = Plugin("hcgt-h-hostile", codegens={"test": "hcgt_h_hostile"}, files={
    "hcgt_h_hostile.py": module("""
        import asyncio, sys
        _what = _os.environ.get("HCG_RAISE", "")
        _armed = _os.environ.get("HCG_ARM_FILE", "")
        if _what == "interrupt" and _armed and _os.path.exists(_armed):
            _os.remove(_armed)
        elif _what == "interrupt":
            _what = ""

        def _fail():
            if _what == "exit":
                sys.exit(3)
            if _what == "generator-exit":
                raise GeneratorExit("closing")
            if _what == "cancelled":
                async def probe():
                    raise asyncio.CancelledError("device probe cancelled")
                asyncio.run(probe())
            if _what == "base":
                class Stop(BaseException):
                    pass
                raise Stop("stop")
            if _what == "interrupt":
                raise KeyboardInterrupt

        _fail()
        hc.register_host_codegen("test", _codegen("hostile-test", 10))
    """)})
HOSTILE_FILE = "hcgt_h_hostile.py"
GOOD = Plugin("hcgt-h-good", codegens={"test": "hcgt_h_good:CODEGEN"},
              files={"hcgt_h_good.py": module('CODEGEN = _codegen("good-test")\n')})

# Waits, once imported, until the file $HCG_GO exists, then registers a `c` codegen.
SLOW_C = Plugin("hcgt-h-slow-c", codegens={"c": "hcgt_h_slow_c"}, files={
    "hcgt_h_slow_c.py": module("""
        import time
        _deadline = time.monotonic() + 60
        while not _os.path.exists(_os.environ["HCG_GO"]) and time.monotonic() < _deadline:
            time.sleep(0.01)
        hc.register_host_codegen("c", _codegen("slow-c", 10))
    """)})

# Replace themselves in sys.modules: a bare stand-in (no __spec__), one that keeps the
# spec (as transformers' _LazyModule does), and one that registers after replacing itself.
_STAND_IN = """
    import sys, types

    class _StandIn(types.ModuleType):
        def __getattr__(self, name):
            return getattr(_real, name)

    _real = sys.modules[__name__]
"""


def stand_in(body: str) -> str:
    """A plugin module defining ``_StandIn`` (``_STAND_IN``), then ``body``."""
    return module(textwrap.dedent(_STAND_IN) + textwrap.dedent(body))

FACADES = Plugin("hcgt-h-facades", codegens={"c": "hcgt_h_facade_bare", "llvm": "hcgt_h_facade_spec",
                                             "test": "hcgt_h_facade_after"}, files={
    "hcgt_h_facade_bare.py": stand_in("""
        hc.register_host_codegen("c", _codegen("facade-c", 10))
        sys.modules[__name__] = _StandIn(__name__)
    """),
    "hcgt_h_facade_spec.py": stand_in("""
        hc.register_host_codegen("llvm", _codegen("facade-llvm", 10))
        _stand_in = _StandIn(__name__)
        _stand_in.__spec__, _stand_in.__file__ = __spec__, __file__
        sys.modules[__name__] = _stand_in
    """),
    "hcgt_h_facade_after.py": stand_in("""
        sys.modules[__name__] = _StandIn(__name__)
        hc.register_host_codegen("test", _codegen("facade-test"))
    """)})
FACADE_ANSWERS = {"c": "facade-c", "llvm": "facade-llvm", "test": "facade-test"}

# The top-priority codegen of `llvm`, above the core's, and a hook for `cuda`.
TOP = Plugin("hcgt-h-top", codegens={"llvm": "hcgt_h_top"}, hooks={"cuda": "hcgt_h_top"}, files={
    "hcgt_h_top.py": module("""
        hc.register_host_codegen("llvm", _codegen("top-llvm", 10))
        hc.register_host_codegen_hook("cuda", _hook("top-cuda"))
    """)})


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> PluginEnvironment:
    environment = environments.new("hostile")
    install(environment, tmp_path_factory.mktemp("hostile"), [HOSTILE, GOOD, SLOW_C, FACADES, TOP])
    return environment


def only(*dists: str, **extra: str) -> dict[str, str]:
    return {"TILELANG_HOSTCG_ONLY": ",".join(dists), **extra}


# ---------------------------------------------------------------------- any exception but an interrupt
NOT_INTERRUPTS = ["exit", "generator-exit", "cancelled", "base"]
RAISED = {"exit": "exited while being imported (sys.exit(3))", "generator-exit": "GeneratorExit: closing",
          "cancelled": "failed to load: CancelledError", "base": "Stop: stop"}  # 3.10 drops its text


@pytest.mark.parametrize("what", NOT_INTERRUPTS)
def test_a_plugins_exception_at_import_is_its_failure_and_the_next_provider_serves(env, tmp_path, what):
    out = run(env, """
        out["first"] = attempt(lambda: resolve("test"))
        out["again"] = attempt(lambda: resolve("test"))
        out["state"] = [s["state"] for s in sources() if s["distribution"] == "hcgt-h-hostile"]
        out["going on"] = True
    """, tmp_path / "m.txt", only("hcgt-h-hostile", "hcgt-h-good", HCG_RAISE=what))
    assert out["going on"] and out["state"] == ["broken"]
    assert out["first"]["value"] == "good-test" and out["again"] == {
        "ok": True, "value": "good-test", "warnings": []}  # one warning, at the first use
    ((category, message),) = out["first"]["warnings"]
    assert category == "SkippedPluginWarning"
    assert "'hcgt-h-hostile'" in message and RAISED[what] in message
    assert f"{HOSTILE_FILE}:" in message  # the file and line where it failed
    assert "TILELANG_HOSTCG_DISABLE=hcgt-h-hostile" in message


def test_a_keyboard_interrupt_propagates_and_the_plugin_is_retried(env, tmp_path):
    armed = tmp_path / "armed"
    armed.touch()
    out = run(env, """
        try:
            resolve("test")
        except KeyboardInterrupt:
            out["interrupted"] = True
        out["state"] = [s["state"] for s in sources() if s["distribution"] == "hcgt-h-hostile"]
        out["next"] = attempt(lambda: resolve("test"))
    """, tmp_path / "m.txt", only("hcgt-h-hostile", "hcgt-h-good", HCG_RAISE="interrupt",
                                  HCG_ARM_FILE=str(armed)))
    assert out["interrupted"] and out["state"] == ["lazy"]
    assert out["next"] == {"ok": True, "value": "hostile-test", "warnings": []}


@pytest.mark.parametrize("what", NOT_INTERRUPTS)
def test_the_commands_give_their_documents(env, tmp_path, what):
    controls = only("hcgt-h-hostile", "hcgt-h-good", HCG_RAISE=what)
    check = env.command("check", "--json", env=controls, cwd=tmp_path)
    assert check.returncode == 1, (check.stdout, check.stderr)
    (problem,) = [p for p in json.loads(check.stdout)["problems"]
                  if p["distribution"] == "hcgt-h-hostile"]
    assert problem["severity"] == "error" and problem["entry_point"] == "test = hcgt_h_hostile"
    assert RAISED[what] in problem["message"] and HOSTILE_FILE in problem["message"]

    listed = env.command("list", "--load", "--json", env=controls, cwd=tmp_path)
    assert listed.returncode == 0, (listed.stdout, listed.stderr)
    states = {e["distribution"]: e["state"] for kind in json.loads(listed.stdout)["codegens"]
              for e in kind["entry_points"] if kind["kind"] == "test" and e["state"] != "disabled"}
    assert states == {"hcgt-h-hostile": "broken", "hcgt-h-good": "loaded"}

    explain = env.command("explain", "test", "--json", env=controls, cwd=tmp_path)
    assert explain.returncode == 0, (explain.stdout, explain.stderr)
    assert json.loads(explain.stdout)["command"] == "explain" and RAISED[what] in explain.stdout

    lock = env.command("lock", env=controls, cwd=tmp_path)
    assert lock.stdout and json.loads(lock.stdout)["command"] == "lock", (lock.returncode, lock.stderr)


# ---------------------------------------------------------------------- attribution by cause
def test_a_program_thread_registering_while_a_plugin_loads_keeps_its_registration(env, tmp_path):
    go = tmp_path / "go"
    out = run(env, """
        import time
        first = {}
        loader = threading.Thread(target=lambda: first.update(attempt(lambda: resolve("c"))))
        loader.start()
        deadline = time.monotonic() + 60
        while "import:hcgt_h_slow_c" not in markers() and time.monotonic() < deadline:
            time.sleep(0.01)
        # The plugin is being imported: a thread of the program, started now, registers.
        mine = threading.Thread(target=lambda: hc.register_host_codegen(
            "llvm", hc.HostCodegen("programs-llvm", lambda mod, t: mod, priority=99)))
        mine.start()
        mine.join()
        open(os.environ["HCG_GO"], "w").close()
        loader.join(60)
        out["c"] = first
        out["llvm"] = attempt(lambda: resolve("llvm"))
        out["programs"] = [r[4:] for r in snapshot() if r[2] == "programs-llvm"]
        out["state"] = [s["state"] for s in sources() if s["distribution"] == "hcgt-h-slow-c"]
    """, tmp_path / "m.txt", only("hcgt-h-slow-c", HCG_GO=str(go)))
    assert out["c"] == {"ok": True, "value": "slow-c", "warnings": []}
    assert out["llvm"] == {"ok": True, "value": "programs-llvm", "warnings": []}
    assert out["programs"] == [[None, None, None]]  # registered in code: the program's
    assert out["state"] == ["loaded"]


def test_a_thread_started_while_an_isolated_registry_loads_uses_the_default_registry(env, tmp_path):
    go = tmp_path / "go"
    out = run(env, """
        import time
        registry = isolated("hcgt-h-slow-c")
        first = {}
        loader = threading.Thread(target=lambda: first.update(attempt(lambda: resolve("c", registry))))
        loader.start()
        deadline = time.monotonic() + 60
        while "import:hcgt_h_slow_c" not in markers() and time.monotonic() < deadline:
            time.sleep(0.01)
        seen = {}

        def program():  # no warnings.catch_warnings here: the loading thread is in one
            hc.register_host_codegen("test", hc.HostCodegen("programs-test", lambda mod, t: mod, priority=99))
            try:
                seen["test"] = hc.resolve_host_codegen("test").name
            except Exception as exc:
                seen["test"] = describe(exc)

        mine = threading.Thread(target=program)
        mine.start()
        mine.join()
        open(os.environ["HCG_GO"], "w").close()
        loader.join(60)
        out["c"], out["seen"] = first, seen
        out["isolated"] = [r[2] for r in snapshot(registry)]
        out["default"] = [r[2] for r in snapshot() if r[2].startswith("programs")]
    """, tmp_path / "m.txt", {"HCG_GO": str(go)})
    assert out["c"] == {"ok": True, "value": "slow-c", "warnings": []}
    assert out["seen"]["test"] == "programs-test"
    assert out["default"] == ["programs-test"]
    assert "programs-test" not in out["isolated"]


# ---------------------------------------------------------------------- modules that replace themselves
@pytest.mark.parametrize("kind", sorted(FACADE_ANSWERS))
def test_a_module_replacing_itself_is_replayed_after_refresh_and_in_a_second_registry(env, tmp_path, kind):
    out = run(env, f"""
        out["first"] = attempt(lambda: resolve({kind!r}))
        hc.refresh()
        out["refreshed"] = attempt(lambda: resolve({kind!r}))
        out["second"] = attempt(lambda: resolve({kind!r}, isolated("hcgt-h-facades")))
        out["state"] = [s["state"] for s in sources()
                        if s["distribution"] == "hcgt-h-facades" and s["kind"] == {kind!r}]
    """, tmp_path / "m.txt", only("hcgt-h-facades"))
    answer = {"ok": True, "value": FACADE_ANSWERS[kind], "warnings": []}
    assert out["first"] == answer
    assert out["refreshed"] == answer
    assert out["second"] == answer
    assert out["state"] == ["loaded"]


def test_check_plugin_after_an_earlier_import_of_modules_replacing_themselves(env, tmp_path):
    out = run(env, """
        import hcgt_h_facade_bare, hcgt_h_facade_spec, hcgt_h_facade_after  # the user's, first
        from tilelang_hostcg.testing import check_plugin
        try:
            out["kinds"] = check_plugin("hcgt-h-facades")
        except AssertionError as exc:
            out["kinds"] = str(exc)
    """, tmp_path / "m.txt")
    assert out["kinds"] == ["c", "llvm", "test"]


# ---------------------------------------------------------------------- refresh() at any moment
def test_refresh_every_5_ms_never_changes_an_answer(env, tmp_path):
    out = run(env, """
        import time
        from tvm.target import Target
        sys.setswitchinterval(1e-5)  # threads switch every 10 us: any window between two reads shows
        llvm, cuda = Target("llvm"), Target({"kind": "cuda", "arch": "sm_90a"})
        registry = hc.default_registry()
        stop = threading.Event()
        answers, hook_answers, errors, done = set(), set(), [], []

        def resolver():
            while not stop.is_set():
                try:
                    answers.add(registry.resolve_host_codegen(llvm).name)
                    hook_answers.add(tuple(r.name for r in registry.matching_hooks(cuda)))
                    done.append(1)
                except Exception as exc:
                    errors.append(f"{type(exc).__name__}: {exc}"[:300])

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            threads = [threading.Thread(target=resolver) for _ in range(4)]
            for thread in threads:
                thread.start()
            refreshes, deadline = 0, time.monotonic() + 3
            while time.monotonic() < deadline:
                time.sleep(0.005)
                registry.refresh()
                refreshes += 1
            stop.set()
            for thread in threads:
                thread.join(60)
        out["answers"], out["hooks"] = sorted(answers), sorted(hook_answers)
        out["errors"] = sorted(set(errors))[:5]
        out["warnings"] = sorted({str(w.message)[:200] for w in caught})[:5]
        out["refreshes"], out["done"] = refreshes, len(done)
    """, tmp_path / "m.txt", only("hcgt-h-top"), timeout=300)
    assert out["refreshes"] > 50 and out["done"] > out["refreshes"]
    assert out["errors"] == []
    assert out["answers"] == ["top-llvm"]
    assert out["hooks"] == [["top-cuda"]]
    assert out["warnings"] == []

"""Fault injection over real installed plugin distributions, and the security controls.

One throwaway environment holds every distribution below. Each scenario selects
the ones it needs with ``TILELANG_HOSTCG_ONLY`` (or builds isolated registries with
``Controls(only=...)``) and runs in a fresh interpreter. For each fault the test
checks that other kinds keep working, that the error or warning names the
distribution, version and entry point, and that the registry ends up exactly as
if the faulty distribution were not installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from textwrap import dedent

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .plugin_factory import Plugin, install, module, read_markers, run

pytestmark = pytest.mark.slow

GOOD_OTHER = Plugin(
    "hcgt-good-other", codegens={"cuda_host": "hcgt_good_other:CODEGEN"},
    hooks={"cuda": "hcgt_good_other:HOOKS"},
    files={"hcgt_good_other.py": module("""
        CODEGEN = _codegen("other-cuda-host")
        HOOKS = [_hook("other-cuda")]
    """)})
GOOD_TEST = Plugin("hcgt-good-test", codegens={"test": "hcgt_good_test:CODEGEN"},
                   files={"hcgt_good_test.py": module('CODEGEN = _codegen("good-test")\n')})


@dataclass(frozen=True)
class Fault:
    """A distribution advertising a broken ``test`` codegen, and the exception it gives."""

    plugin: Plugin
    cause: str

    @property
    def value(self) -> str:
        return self.plugin.codegens["test"]


def _fault(slug: str, version: str, value: str, cause: str, body: str | None = None) -> Fault:
    dist = f"hcgt-f-{slug}"
    mod = dist.replace("-", "_")
    files = {} if body is None else {f"{mod}.py": module(body)}
    return Fault(Plugin(dist, version, codegens={"test": value.format(mod=mod)}, files=files),
                 cause)


FAULTS = {
    f.plugin.dist.removeprefix("hcgt-f-"): f for f in [
        _fault("missing-module", "2.1", "{mod}_gone.codegen", "ModuleNotFoundError"),
        _fault("import-error", "2.2", "{mod}", "ImportError",
               'raise ImportError("libfoo.so.1 is required by this backend")\n'),
        _fault("runtime-error", "2.3", "{mod}", "RuntimeError",
               'raise RuntimeError("device runtime not initialised")\n'),
        _fault("native-library", "2.4", "{mod}", "OSError",
               'import ctypes\nctypes.CDLL("libhcgt_does_not_exist.so")\n'),
        _fault("missing-attr", "2.5", "{mod}:NOPE", "AttributeError", "PRESENT = 1\n"),
        _fault("wrong-type", "2.6", "{mod}:HOOK", "TypeError",
               'HOOK = _hook("a hook where a codegen belongs")\n'),
        _fault("wrong-value", "2.7", "{mod}:VALUE", "TypeError", 'VALUE = "llvm"\n'),
        _fault("empty-sequence", "2.8", "{mod}:CODEGENS", "TypeError", "CODEGENS = []\n"),
        _fault("callable-raises", "2.9", "{mod}:make", "ValueError", """
            def make():
                raise ValueError("cannot configure codegen")
        """),
        # Registers other kinds (codegen and hook) but nothing for "test".
        _fault("registers-nothing", "3.0", "{mod}", "LookupError", """
            hc.register_host_codegen("composite", _codegen("stray-composite"))
            hc.register_host_codegen_hook("cuda", _hook("stray-cuda"))
        """),
        _fault("registers-then-raises", "3.1", "{mod}", "RuntimeError", """
            hc.register_host_codegen("test", _codegen("half-test"))
            hc.register_host_codegen("composite", _codegen("half-composite"))
            hc.register_host_codegen_hook("cuda", _hook("half-cuda"))
            hc.register_host_codegen("llvm", _codegen("llvm"), override=True)
            raise RuntimeError("failed half-way")
        """),
        _fault("lazy-then-raises", "3.2", "{mod}", "RuntimeError", """
            hc.register_lazy_host_codegen("composite", "hcgt_nowhere")
            hc.register_lazy_host_codegen_hooks("cuda", "hcgt_nowhere")
            raise RuntimeError("failed after lazy registrations")
        """),
        # An exception that cannot even be printed must not break the registry.
        _fault("unprintable-error", "3.3", "{mod}", "Hostile", """
            class Hostile(Exception):
                def __str__(self):
                    raise RuntimeError("no text")

            raise Hostile()
        """),
    ]
}

INTERRUPT = Plugin("hcgt-f-interrupt", "4.0", codegens={"test": "hcgt_f_interrupt"},
                   hooks={"vulkan": "hcgt_f_interrupt"},
                   files={"hcgt_f_interrupt.py": module("""
    import builtins
    hc.register_host_codegen("test", _codegen("interrupted"))
    hc.register_host_codegen_hook("vulkan", _hook("interrupted-vulkan"))
    _armed = _os.environ.get("HCG_ARM_FILE")
    if _armed and _os.path.exists(_armed):
        _os.remove(_armed)
        raise getattr(builtins, _os.environ["HCG_ARM_EXC"])()
""")})
DUP_A = Plugin("hcgt-f-dup-a", "1.1", codegens={"test": "hcgt_f_dup_a:CODEGEN"},
               files={"hcgt_f_dup_a.py": module('CODEGEN = _codegen("dup")\n')})
DUP_B = Plugin("hcgt-f-dup-b", "1.2", codegens={"test": "hcgt_f_dup_b"},
               files={"hcgt_f_dup_b.py": module(
                   'hc.register_host_codegen("test", _codegen("dup"))\n')})
TIE_A = Plugin("hcgt-f-tie-a", "1.3", codegens={"test": "hcgt_f_tie_a:CODEGEN"},
               files={"hcgt_f_tie_a.py": module('CODEGEN = _codegen("tie-a", 2)\n')})
TIE_B = Plugin("hcgt-f-tie-b", "1.4", codegens={"test": "hcgt_f_tie_b:CODEGEN"},
               files={"hcgt_f_tie_b.py": module('CODEGEN = _codegen("tie-b", 2)\n')})
REENTRANT = Plugin("hcgt-f-reentrant", "5.0", codegens={"test": "hcgt_f_reentrant"},
                   hooks={"metal": "hcgt_f_reentrant"},
                   files={"hcgt_f_reentrant.py": module("""
    from tvm.target import Target
    FOUND = {k: hc.resolve_host_codegen(Target(k)).name for k in ("llvm", "cuda_host")}
    hc.register_host_codegen_hook("metal", _hook("reentrant-metal"))
    HOOKS = [reg.name for reg in hc.default_registry().matching_hooks(Target("cuda"))]
    hc.register_host_codegen("test", _codegen("reentrant"))
    OWN = hc.resolve_host_codegen(Target("test")).name
""")})
SLOW = Plugin("hcgt-f-slow", "5.1", codegens={"composite": "hcgt_f_slow"},
              files={"hcgt_f_slow.py": module("""
    import time
    time.sleep(0.3)
    hc.register_host_codegen("composite", _codegen("slow"))
""")})
HOOK_BROKEN = Plugin("hcgt-f-hook-broken", "6.0", hooks={"cuda": "hcgt_f_hook_broken"},
                     files={"hcgt_f_hook_broken.py": module(
                         'raise ImportError("libcudart.so.99 not found")\n')})
HOOK_GOOD = Plugin("hcgt-f-hook-good", "6.1", hooks={"cuda": "hcgt_f_hook_good:HOOKS"},
                   files={"hcgt_f_hook_good.py": module(
                       'HOOKS = [_hook("good-high", 3), _hook("good-low", -1)]\n')})
HOOK_RAISES = Plugin("hcgt-f-hook-raises", "6.2", hooks={"cuda": "hcgt_f_hook_raises:HOOK"},
                     files={"hcgt_f_hook_raises.py": module("""
    def _apply(mod, target_host, target):
        raise RuntimeError("hook failed on this module")

    HOOK = hc.HostCodegenHook("raising", _apply)
""")})
LLVM_VARIANT = Plugin("hcgt-f-llvm-variant", "7.0", codegens={"llvm": "hcgt_f_llvm_variant:CG"},
                      files={"hcgt_f_llvm_variant.py": module(
                          'CG = _codegen("fast-llvm", 10)\n')})
LLVM_OVERRIDE = Plugin("hcgt-f-llvm-override", "7.1", codegens={"llvm": "hcgt_f_llvm_override"},
                       files={"hcgt_f_llvm_override.py": module(
                           'hc.register_host_codegen("llvm", _codegen("llvm"), override=True)\n')})
# Advertises "test" only, but also takes over "llvm" when imported.
LLVM_HIJACK = Plugin("hcgt-f-llvm-hijack", "7.2", codegens={"test": "hcgt_f_llvm_hijack"},
                     files={"hcgt_f_llvm_hijack.py": module("""
    hc.register_host_codegen("test", _codegen("hijack-test"))
    hc.register_host_codegen("llvm", _codegen("llvm"), override=True)
""")})

EXTRA = [INTERRUPT, DUP_A, DUP_B, TIE_A, TIE_B, REENTRANT, SLOW, HOOK_BROKEN, HOOK_GOOD,
         HOOK_RAISES, LLVM_VARIANT, LLVM_OVERRIDE, LLVM_HIJACK]
EVERY = [GOOD_OTHER, GOOD_TEST, *(f.plugin for f in FAULTS.values()), *EXTRA]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> PluginEnvironment:
    root = tmp_path_factory.mktemp("faults")
    environment = environments.new("faults")
    install(environment, root, EVERY)
    return environment


def only(*plugins: Plugin) -> dict[str, str]:
    return {"TILELANG_HOSTCG_ONLY": ",".join(p.dist for p in plugins)}


# Registrations and sources of a registry, everything loaded, without the sources of
# the distribution under test: equal to the same for a registry without it installed.
# TVM's defaults (distribution apache-tvm) are the TVM integration's, not a plugin's: the
# default registry gets them at its first answer where a plugin turns the integration on.
STATE = """
def plugins_and_code(rows):
    return [r for r in rows if r[4] != "apache-tvm"]

def state(registry, skip=""):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        registry.load_all()
    srcs = sorted([s["group"], s["kind"], s["value"], s["distribution"], s["state"]]
                  for s in sources(registry) if s["distribution"] != skip)
    return {"registrations": plugins_and_code(snapshot(registry)), "sources": srcs}
"""

MATRIX = STATE + """
FAULT = os.environ["FAULT_DIST"]
out["resolve"] = attempt(lambda: resolve("test"))
out["allowed"] = attempt(lambda: hc.allowed_host_codegens_for_target(target("test")))
out["others"] = {k: attempt(lambda k=k: resolve(k)) for k in ("llvm", "c", "cuda_host")}
out["hooks"] = attempt(lambda: apply_hooks("cuda"))
out["source"] = [s for s in sources() if s["distribution"] == FAULT]
out["with"] = state(hc.default_registry(), FAULT)
out["without"] = state(isolated("hcgt-good-other"), FAULT)
served = isolated("hcgt-good-other", "hcgt-good-test", FAULT)
out["served"] = attempt(lambda: resolve("test", served))
out["served_with"] = state(served, FAULT)
out["served_without"] = state(isolated("hcgt-good-other", "hcgt-good-test"), FAULT)
"""


def names_plugin(text: str, plugin: Plugin, kind: str = "test") -> None:
    """Assert that ``text`` names the distribution, its version and the entry point."""
    group = plugin.codegens if kind in plugin.codegens else plugin.hooks
    assert f"'{plugin.dist}' {plugin.version}" in text, text
    assert f"'{kind} = {group[kind]}'" in text, text


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_fault_is_isolated(env: PluginEnvironment, tmp_path: Path, name: str) -> None:
    fault = FAULTS[name]
    plugin = fault.plugin
    out = run(env, MATRIX, tmp_path / "markers",
              {**only(GOOD_OTHER, plugin), "FAULT_DIST": plugin.dist})

    # Alone for its kind: PluginLoadError naming the plugin, chained to the real error.
    error = out["resolve"]["error"]
    assert error["type"] == "PluginLoadError", error
    names_plugin(error["message"], plugin)
    assert f"TILELANG_HOSTCG_DISABLE={plugin.dist}" in error["message"]
    assert "\n" not in error["message"]
    assert error["cause"]["type"] == fault.cause
    (source,) = out["source"]
    assert source["state"] == "broken" and source["error"]["type"] == fault.cause

    # The listing call never raises: it warns and skips.
    assert out["allowed"]["ok"] and out["allowed"]["value"] == []
    (warning,) = out["allowed"]["warnings"]
    assert warning[0] == "SkippedPluginWarning"
    names_plugin(warning[1], plugin)

    # Other kinds are untouched (the plugins turn TVM's integration on: TVM's own codegens serve).
    assert out["others"] == {
        "llvm": {"ok": True, "value": "apache-tvm-llvm", "warnings": []},
        "c": {"ok": True, "value": "apache-tvm-c", "warnings": []},
        "cuda_host": {"ok": True, "value": "other-cuda-host", "warnings": []},
    }
    assert out["hooks"] == {"ok": True, "value": ["other-cuda"], "warnings": []}

    # Nothing of the plugin remains: the registry is as if it were not installed.
    assert out["with"] == out["without"]

    # Where another provider serves the kind: success, and one warning naming the plugin.
    assert out["served"]["value"] == "good-test", out["served"]
    (warning,) = out["served"]["warnings"]
    assert warning[0] == "SkippedPluginWarning"
    names_plugin(warning[1], plugin)
    assert out["served_with"] == out["served_without"]


def test_system_exit_during_import_is_the_plugins_failure_and_rolled_back(
        env: PluginEnvironment, tmp_path: Path) -> None:
    """Only an interrupt propagates: ``sys.exit()`` half-way through a plugin's import
    breaks that plugin (its half-made registrations rolled back), and the program goes on."""
    armed = tmp_path / "armed"
    armed.touch()
    out = run(env, STATE + dedent("""
        out["before"] = plugins_and_code(snapshot())
        out["first"] = attempt(lambda: resolve("test"))
        out["after"] = plugins_and_code(snapshot())
        out["source"] = [s["state"] for s in sources() if s["distribution"] == "hcgt-f-interrupt"]
        out["second"] = attempt(lambda: resolve("test"))
        out["others"] = [resolve("cuda_host"), apply_hooks("cuda")]
    """), tmp_path / "markers", {**only(GOOD_OTHER, INTERRUPT), "HCG_ARM_FILE": str(armed),
                                "HCG_ARM_EXC": "SystemExit"})
    first = out["first"]
    assert not first["ok"] and first["error"]["type"] == "PluginLoadError"
    assert first["error"]["cause"]["type"] == "SystemExit"
    assert "hcgt-f-interrupt" in first["error"]["message"]
    assert out["after"] == out["before"]  # the half-made registrations are gone
    assert out["source"] == ["broken", "lazy"]  # its codegen entry point; the hook's is unused
    assert not out["second"]["ok"]  # not retried until refresh()
    assert out["others"] == ["other-cuda-host", ["other-cuda"]]
    assert read_markers(tmp_path / "markers").count("import:hcgt_f_interrupt") == 1


@pytest.mark.parametrize("exc", ["KeyboardInterrupt"])
def test_interrupt_during_import_propagates_and_can_retry(env: PluginEnvironment,
                                                          tmp_path: Path, exc: str) -> None:
    armed = tmp_path / "armed"
    armed.touch()
    out = run(env, STATE + dedent("""
        out["warm"] = [resolve("llvm"), resolve("cuda_host"), apply_hooks("cuda")]
        out["before"] = plugins_and_code(snapshot()), markers()
        try:
            resolve("test")
            out["first"] = "returned"
        except (KeyboardInterrupt, SystemExit) as exc:
            out["first"] = type(exc).__name__
        out["after"] = plugins_and_code(snapshot())
        out["markers"] = markers()[len(out["before"][1]):]
        out["source"] = [s["state"] for s in sources() if s["distribution"] == "hcgt-f-interrupt"]
        # No load is left current: a registration made in code now is the user's own.
        hc.register_host_codegen("probe", hc.HostCodegen("after-interrupt", lambda m, t: m))
        out["probe"] = [r[4:] for r in snapshot() if r[2] == "after-interrupt"]
        hc.default_registry().unregister_host_codegen("probe", "after-interrupt")
        out["others"] = [resolve("cuda_host"), apply_hooks("cuda")]
        out["second"] = attempt(lambda: resolve("test"))
        out["third"] = resolve("test")
        out["hooks"] = apply_hooks("cuda"), apply_hooks("vulkan")
    """), tmp_path / "markers", {**only(GOOD_OTHER, INTERRUPT), "HCG_ARM_FILE": str(armed),
                                "HCG_ARM_EXC": exc})
    assert out["first"] == exc
    assert out["warm"] == ["apache-tvm-llvm", "other-cuda-host", ["other-cuda"]]
    assert out["after"] == out["before"][0]  # the half-made registrations are gone
    assert out["markers"] == ["import:hcgt_f_interrupt"]
    assert out["source"] == ["lazy", "lazy"]  # its codegen and hook entry points
    assert out["probe"] == [[None, None, None]]
    assert out["others"] == ["other-cuda-host", ["other-cuda"]]
    assert out["second"] == {"ok": True, "value": "interrupted", "warnings": []}
    assert out["third"] == "interrupted"
    assert out["hooks"] == [["other-cuda"], ["interrupted-vulkan"]]
    assert read_markers(tmp_path / "markers").count("import:hcgt_f_interrupt") == 2


def test_two_distributions_claiming_one_name_or_one_priority(env: PluginEnvironment,
                                                             tmp_path: Path) -> None:
    out = run(env, STATE + dedent("""
        dup = isolated("hcgt-good-other", "hcgt-f-dup-a", "hcgt-f-dup-b")
        out["dup"] = attempt(lambda: resolve("test", dup))
        out["dup_origin"] = [r for r in snapshot(dup) if r[2] == "dup"]
        out["dup_with"] = state(dup, "hcgt-f-dup-b")
        out["dup_without"] = state(isolated("hcgt-good-other", "hcgt-f-dup-a"), "hcgt-f-dup-b")
        out["tie"] = attempt(lambda: resolve("test"))
        out["tie_allowed"] = attempt(lambda: hc.allowed_host_codegens_for_target(target("test")))
        out["tie_others"] = [resolve("llvm"), resolve("cuda_host"), apply_hooks("cuda")]
        preferred = isolated("hcgt-f-tie-a", "hcgt-f-tie-b", prefer={"test": "tie-b"})
        out["tie_preferred"] = attempt(lambda: resolve("test", preferred))
    """), tmp_path / "markers", only(GOOD_OTHER, TIE_A, TIE_B))

    # Same name: the first distribution by name keeps it; the second is skipped, loudly.
    assert out["dup"]["value"] == "dup"
    (warning,) = out["dup"]["warnings"]
    assert warning[0] == "SkippedPluginWarning"
    names_plugin(warning[1], DUP_B)
    assert "'hcgt-f-dup-a'" in warning[1] and "already registered" in warning[1]
    assert [r[4] for r in out["dup_origin"]] == ["hcgt-f-dup-a"]
    assert out["dup_with"] == out["dup_without"]

    # Equal top priority across distributions: an explicit ambiguity, never a silent pick.
    error = out["tie"]["error"]
    assert error["type"] == "AmbiguousHostCodegenError"
    for part in ("'tie-a' from 'hcgt-f-tie-a'", "'tie-b' from 'hcgt-f-tie-b'",
                 "TILELANG_HOSTCG_PREFER=test=tie-a"):
        assert part in error["message"]
    assert out["tie_allowed"] == {"ok": True, "value": ["tie-a", "tie-b"], "warnings": []}
    assert out["tie_others"] == ["apache-tvm-llvm", "other-cuda-host", ["other-cuda"]]
    assert out["tie_preferred"] == {"ok": True, "value": "tie-b", "warnings": []}


def test_plugin_resolving_and_registering_during_its_import(env: PluginEnvironment,
                                                            tmp_path: Path) -> None:
    out = run(env, """
        out["test"] = resolve("test")
        plugin = sys.modules["hcgt_f_reentrant"]
        out["seen"] = [plugin.FOUND, plugin.HOOKS, plugin.OWN]
        out["metal"] = hooks("metal")
        out["origins"] = {r[2]: r[4] for r in snapshot()}
    """, tmp_path / "markers", only(GOOD_OTHER, REENTRANT), timeout=60)
    assert out["test"] == "reentrant"
    assert out["seen"] == [{"llvm": "apache-tvm-llvm", "cuda_host": "other-cuda-host"}, ["other-cuda"],
                           "reentrant"]
    assert out["metal"] == ["reentrant-metal"]
    assert out["origins"]["reentrant-metal"] == "hcgt-f-reentrant"
    assert out["origins"]["other-cuda-host"] == "hcgt-good-other"


def test_slow_plugin_with_32_threads_imports_once(env: PluginEnvironment,
                                                  tmp_path: Path) -> None:
    out = run(env, """
        barrier = threading.Barrier(32)
        results, errors = [], []

        def worker(i):
            barrier.wait()
            try:
                for kind in (("composite", "cuda_host") if i % 2 else ("composite",)):
                    results.append((kind, id(hc.resolve_host_codegen(target(kind)))))
            except BaseException as exc:
                errors.append(repr(exc))

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        out["alive"] = sum(t.is_alive() for t in threads)
        out["errors"] = errors
        out["answers"] = sorted({f"{kind}:{ident}" for kind, ident in results})
        out["count"] = len(results)
        out["names"] = [resolve("composite"), resolve("cuda_host")]
    """, tmp_path / "markers", only(GOOD_OTHER, SLOW), timeout=60)
    assert out["alive"] == 0 and out["errors"] == []
    assert out["count"] == 48
    assert len(out["answers"]) == 2  # one object per kind
    assert out["names"] == ["slow", "other-cuda-host"]
    assert read_markers(tmp_path / "markers").count("import:hcgt_f_slow") == 1


def test_broken_hook_plugin_beside_working_hooks(env: PluginEnvironment, tmp_path: Path) -> None:
    out = run(env, STATE + dedent("""
        out["applied"] = attempt(lambda: apply_hooks("cuda"))
        out["again"] = attempt(lambda: apply_hooks("cuda"))
        out["codegen"] = attempt(lambda: resolve("cuda_host"))
        out["with"] = state(hc.default_registry(), "hcgt-f-hook-broken")
        out["without"] = state(isolated("hcgt-good-other", "hcgt-f-hook-good"),
                               "hcgt-f-hook-broken")
        raising = isolated("hcgt-good-other", "hcgt-f-hook-raises")
        out["raising"] = attempt(lambda: apply_hooks("cuda", raising))
        try:
            apply_hooks("cuda", raising)
        except RuntimeError as exc:
            out["notes"] = getattr(exc, "__notes__", [])
    """), tmp_path / "markers", only(GOOD_OTHER, HOOK_BROKEN, HOOK_GOOD))
    # A hook plugin that cannot load: warn once, run every other hook in order.
    assert out["applied"]["ok"]
    assert out["applied"]["value"] == ["good-high", "other-cuda", "good-low"]
    (warning,) = out["applied"]["warnings"]
    assert warning[0] == "SkippedPluginWarning"
    names_plugin(warning[1], HOOK_BROKEN, "cuda")
    assert "ImportError" in warning[1] and "TILELANG_HOSTCG_DISABLE=hcgt-f-hook-broken" in warning[1]
    assert out["again"] == {"ok": True, "value": out["applied"]["value"], "warnings": []}
    assert out["codegen"] == {"ok": True, "value": "other-cuda-host", "warnings": []}
    assert out["with"] == out["without"]
    # A hook that loads but fails on a module propagates: skipping it would build a
    # different program. The error says which plugin raised it.
    assert out["raising"]["error"]["type"] == "RuntimeError"
    (note,) = out["notes"]
    assert "'raising'" in note
    names_plugin(note, HOOK_RAISES, "cuda")


def test_third_party_llvm_codegens_are_visible(env: PluginEnvironment, tmp_path: Path) -> None:
    out = run(env, """
        def llvm_view(registry):
            chosen = resolve("llvm", registry)
            regs = [[r.name, r.priority, r.origin.distribution]
                    for r in registry.registrations("tilelang.host_codegen", "llvm")]
            srcs = sorted([s["distribution"], s["entry_point"], s["state"]]
                          for s in sources(registry) if s["kind"] == "llvm")
            return chosen, regs, srcs

        out["variant"] = llvm_view(hc.default_registry())
        out["override"] = attempt(lambda: llvm_view(isolated("hcgt-f-llvm-override")))
        hijacked = isolated("hcgt-f-llvm-hijack")
        out["hijack_before"] = attempt(lambda: llvm_view(hijacked))
        out["hijack_test"] = attempt(lambda: resolve("test", hijacked))
        out["hijack_after"] = attempt(lambda: llvm_view(hijacked))
    """, tmp_path / "markers", only(LLVM_VARIANT))
    chosen, regs, srcs = out["variant"]
    # A higher-priority variant wins, and it, TVM's own codegen (the plugin turns TVM's integration
    # on) and the core's show their origin.
    assert chosen == "fast-llvm"
    assert regs == [["fast-llvm", 10, "hcgt-f-llvm-variant"], ["apache-tvm-llvm", 0, "apache-tvm"],
                    ["llvm", 0, "tilelang-hostcg"]]
    assert srcs == [
        ["hcgt-f-llvm-override", "llvm = hcgt_f_llvm_override", "disabled"],
        ["hcgt-f-llvm-variant", "llvm = hcgt_f_llvm_variant:CG", "loaded"],
        ["tilelang-hostcg", "llvm = tilelang_hostcg.builtin:LLVM_HOST_CODEGEN", "loaded"],
    ]
    # Replacing the core's own codegen in place is allowed with override=True, but the
    # registration then names the third party: never silent in listings.
    assert out["override"]["ok"], out["override"]
    chosen, regs, _ = out["override"]["value"]
    assert chosen == "llvm"
    assert regs == [["llvm", 0, "hcgt-f-llvm-override"]]
    # A plugin advertising another kind cannot take over llvm through a side door: it may
    # register only for the kinds its distribution advertises, so it is broken, its
    # registrations are rolled back, and the error names it and the stray kind.
    assert out["hijack_before"]["value"][1] == [["llvm", 0, "tilelang-hostcg"]]
    assert not out["hijack_test"]["ok"]
    error = out["hijack_test"]["error"]
    assert error["type"] == "PluginLoadError"
    assert "host codegen for kind 'llvm'" in error["message"]
    assert "does not advertise" in error["message"]
    names_plugin(error["message"], LLVM_HIJACK, "test")
    assert out["hijack_after"]["ok"] and out["hijack_after"]["warnings"] == []
    assert out["hijack_after"]["value"][1] == [["llvm", 0, "tilelang-hostcg"]]


def test_autoload_off_runs_no_plugin_code(env: PluginEnvironment, tmp_path: Path) -> None:
    out = run(env, """
        hc.default_registry().load_all()
        out["kinds"] = {k: attempt(lambda k=k: resolve(k))["ok"]
                        for k in ("llvm", "c", "test", "cuda_host", "composite")}
        out["hooks"] = {k: apply_hooks(k) for k in ("cuda", "metal")}
        out["modules"] = plugin_modules()
    """, tmp_path / "markers", {"TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert out["kinds"] == {"llvm": True, "c": True, "test": False, "cuda_host": False,
                            "composite": False}
    assert out["hooks"] == {"cuda": [], "metal": []}
    assert out["modules"] == []
    assert read_markers(tmp_path / "markers") == []


def test_disabling_one_distribution_runs_none_of_its_code(env: PluginEnvironment,
                                                          tmp_path: Path) -> None:
    out = run(env, """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hc.default_registry().load_all()
        out["states"] = sorted({(str(s["distribution"]), s["state"]) for s in sources()})
        out["modules"] = plugin_modules()
    """, tmp_path / "markers", {"TILELANG_HOSTCG_DISABLE": "HCGT_Good.Test,hcgt-f-slow"})
    states = dict(map(tuple, out["states"]))
    assert states["hcgt-good-test"] == "disabled" and states["hcgt-f-slow"] == "disabled"
    assert states["hcgt-good-other"] == "loaded"
    imported = {tag.removeprefix("import:") for tag in read_markers(tmp_path / "markers")}
    assert "hcgt_good_other" in imported and "hcgt_f_dup_a" in imported
    assert not {"hcgt_good_test", "hcgt_f_slow"} & imported
    assert not {"hcgt_good_test", "hcgt_f_slow"} & set(out["modules"])


def test_only_allowlist_runs_no_other_distribution(env: PluginEnvironment,
                                                   tmp_path: Path) -> None:
    out = run(env, """
        hc.default_registry().load_all()
        out["kinds"] = {k: attempt(lambda k=k: resolve(k)).get("value")
                        for k in ("llvm", "test", "cuda_host")}
        out["modules"] = plugin_modules()
    """, tmp_path / "markers", only(GOOD_OTHER))
    assert out["kinds"] == {"llvm": "apache-tvm-llvm", "test": None, "cuda_host": "other-cuda-host"}
    assert out["modules"] == ["hcgt_good_other"]
    assert read_markers(tmp_path / "markers") == ["import:hcgt_good_other"]

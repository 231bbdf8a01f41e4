"""``tilelang_hostcg.native``, the API a compiler calls itself, with the real apache-tvm: cheap to
import; the compiler's defaults decide alone with no third-party plugin (or with the off switch),
and where they win today with one; a plugin's codegen and hooks build; errors are the project's
and the compiler's own; a broken plugin never fails a build a default can make; the fingerprint
follows the plugin set; a declaration is reported native, a newer API named. Each case runs in a
fresh interpreter with the plugin distributions it plants on ``PYTHONPATH``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from .test_import_cost import loaded_after

# TVM's own autoload off: the routed integration stays out, so only the native calls are seen.
BASE_ENV = {"TVM_DEVICE_BACKEND_AUTOLOAD": "0", "PYTHONDONTWRITEBYTECODE": "1"}

PRELUDE = '''
import json, sys, warnings
import tvm
from tvm.target import Target
import tilelang_hostcg as hc
from tilelang_hostcg import native

__tilelang_hostcg_native__ = 1  # this program is the compiler: it calls the API


def empty_module(kind="llvm"):
    return tvm.get_global_func("target.build." + kind)(tvm.IRModule({}), Target(kind))


class Codegen:  # as TileLang holds its host codegens: a name and build
    def __init__(self, name, result):
        self.name, self.result, self.calls = name, result, 0

    def build(self, mod, target_host):
        self.calls += 1
        return self.result


def hook(mark):
    def apply(mod, target_host, target):
        return mod.with_attr("marks", list(mod.attrs["marks"]) + [mark] if mod.attrs and "marks" in mod.attrs
                             else [mark])
    return apply


def marks(mod):
    return [str(m) for m in mod.attrs["marks"]] if mod.attrs and "marks" in mod.attrs else []
'''

PLUGIN = '''
import tvm
import tilelang_hostcg as hc


def _build(mod, target_host):
    out = tvm.get_global_func("target.build.llvm")(tvm.IRModule({}), target_host)
    out.__dict__["probe"] = "plugin"  # what the program checks
    return out


def _hook(mod, target_host, target):
    marks = list(mod.attrs["marks"]) if mod.attrs and "marks" in mod.attrs else []
    return mod.with_attr("marks", marks + ["plugin-hook"])


CODEGEN = hc.HostCodegen("probe-llvm", _build)
HOOK = hc.HostCodegenHook("probe-cuda", _hook)
'''


def plant(root: Path, name: str, entry_points: dict[str, dict[str, str]], files: dict[str, str]) -> None:
    """An installed distribution ``name`` in ``root`` (metadata as pip leaves it, and its modules)."""
    folder = root / f"{name.replace('-', '_')}-1.0.dist-info"
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
                                     "Requires-Dist: tilelang-hostcg\n")
    (folder / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in items.items()) for group, items in entry_points.items()))
    for path, text in files.items():
        (root / path).write_text(textwrap.dedent(text))


def probe(root: Path) -> None:
    plant(root, "hcgt-native-probe", {"tilelang.host_codegen": {"llvm": "hcgt_native_probe:CODEGEN"},
                                      "tilelang.host_codegen_hooks": {"cuda": "hcgt_native_probe:HOOK"}},
          {"hcgt_native_probe.py": PLUGIN})


def broken(root: Path) -> None:
    plant(root, "hcgt-native-broken", {"tilelang.host_codegen": {"llvm": "hcgt_native_broken:CODEGEN"},
                                       "tilelang.host_codegen_hooks": {"cuda": "hcgt_native_broken:HOOK"}},
          {"hcgt_native_broken.py": "raise RuntimeError('this plugin is broken')\n"})


def run(code: str, root: Path, env: dict[str, str] | None = None) -> tuple[Any, str]:
    """Run PRELUDE + ``code`` in a fresh interpreter (``root``, its folder, on ``PYTHONPATH``); its
    last JSON line and its stderr."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    environ.update(BASE_ENV, **(env or {}))
    environ["PYTHONPATH"] = str(root)
    root.mkdir(parents=True, exist_ok=True)
    script = root / "program.py"
    script.write_text(PRELUDE + textwrap.dedent(code))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=environ, timeout=300)
    assert proc.returncode == 0, f"subprocess failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), quiet(proc.stderr)


_TVM_NOTES = re.compile(r"Unable to detect (CUDA|ROCm) version")


def quiet(stderr: str) -> str:
    """``stderr`` without TVM's own notes that it found no CUDA or ROCm (a CPU machine)."""
    return "".join(line for line in stderr.splitlines(keepends=True) if not _TVM_NOTES.search(line))


def test_importing_the_api_is_cheap():
    """No TVM, no entry point read, no registry, no plugin: only the first call plans."""
    assert loaded_after("import tilelang_hostcg.native") == []
    probe_code = ("import sys, tilelang_hostcg.native as n\n"
                  "print([m for m in sys.modules if m.startswith('tilelang_hostcg.') and m not in "
                  "('tilelang_hostcg.native', 'tilelang_hostcg.core', 'tilelang_hostcg.core._doors', "
                  "'tilelang_hostcg.core._names')])")
    out = subprocess.run([sys.executable, "-c", probe_code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "[]"
    import tilelang_hostcg.native as native

    assert native.API_VERSION == 2 and native.DECLARATION == "__tilelang_hostcg_native__"


def test_without_a_plugin_the_defaults_decide_alone(tmp_path):
    """The compiler's own object is called as it is (its result returned as it is), the registry
    is never built, and the fingerprint says so."""
    out, err = run("""
        own = Codegen("llvm", empty_module())
        got = native.build_host(tvm.IRModule({}), Target("llvm"), defaults={"llvm": own}, client="testcc")
        plain = native.build_host(tvm.IRModule({}), Target("c"), defaults={"c": lambda m, t: "plain"},
                                  client="testcc")
        mod = native.apply_hooks(tvm.IRModule({}), Target("llvm"), Target("cuda"), defaults=(hook("a"), hook("b")),
                                 client="testcc")
        print(json.dumps({"same": got is own.result, "calls": own.calls, "plain": plain, "marks": marks(mod),
                          "registry": "tilelang_hostcg.registry._registry" in sys.modules, "fp": native.fingerprint(),
                          "counted": native.calls()}))
    """, tmp_path)
    assert out == {"same": True, "calls": 1, "plain": "plain", "marks": ["a", "b"], "registry": False,
                   "fp": None, "counted": {"testcc": 3}}
    assert err == ""


def test_a_plugins_codegen_and_hooks_build_and_defaults_win_where_they_win_today(tmp_path):
    probe(tmp_path)
    out, err = run("""
        own = Codegen("llvm", empty_module())
        got = native.build_host(tvm.IRModule({}), Target("llvm"), defaults={"llvm": own}, client="testcc")
        c_own = Codegen("c", empty_module("c"))
        c_got = native.build_host(tvm.IRModule({}), Target("c"), defaults={"c": c_own}, client="testcc")
        mod = native.apply_hooks(tvm.IRModule({}), Target("llvm"), Target("cuda"), defaults=(hook("own"),),
                                 client="testcc")
        rocm = native.apply_hooks(tvm.IRModule({}), Target("llvm"), Target("rocm"), defaults=(hook("own"),),
                                  client="testcc")
        print(json.dumps({"plugin": got.__dict__.get("probe"), "own_calls": own.calls,
                          "c_default": c_got is c_own.result, "marks": marks(mod), "rocm": marks(rocm)}))
    """, tmp_path)
    # llvm: the plugin's codegen beats the compiler's default; c: no plugin's, so the compiler's own
    # (not the core's c codegen, which a client default supersedes); hooks: the compiler's first.
    assert out == {"plugin": "plugin", "own_calls": 0, "c_default": True, "marks": ["own", "plugin-hook"],
                   "rocm": ["own"]}
    assert err == ""


def test_every_off_switch_leaves_the_defaults_alone(tmp_path):
    probe(tmp_path)
    code = """
        own = Codegen("llvm", empty_module())
        got = native.build_host(tvm.IRModule({}), Target("llvm"), defaults={"llvm": own}, client="testcc")
        mod = native.apply_hooks(tvm.IRModule({}), Target("llvm"), Target("cuda"), defaults=(hook("own"),),
                                 client="testcc")
        print(json.dumps({"own": got is own.result, "marks": marks(mod), "fp": native.fingerprint()}))
    """
    for switch in ({"TILELANG_HOSTCG_AUTO_INSTALL": "0"}, {"TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD": "1"},
                   {"TILELANG_HOSTCG_DISABLE": "hcgt-native-probe"}):
        out, _ = run(code, tmp_path, switch)
        assert out == {"own": True, "marks": ["own"], "fp": None}, switch


def test_errors_are_the_projects_and_the_compilers(tmp_path):
    code = """
        try:
            native.build_host(tvm.IRModule({}), Target("cuda_host"), defaults={"llvm": Codegen("llvm", None)},
                              client="testcc")
        except ValueError as exc:  # what TileLang raises for a kind with no codegen
            print(json.dumps({"type": type(exc).__name__, "ours": isinstance(exc, hc.HostCodegenError),
                              "kind": exc.kind, "text": str(exc)}))
    """
    probe(tmp_path / "probe")
    for root in (tmp_path / "none", tmp_path / "probe"):  # the defaults alone; the registry with a plugin
        out, _ = run(code, root)
        assert out["type"] == "NoHostCodegenError" and out["ours"] and out["kind"] == "cuda_host", out
    assert "'cuda_host'" in out["text"]
    out, _ = run("""
        try:
            native.build_host(tvm.IRModule({}), Target("llvm"), defaults={"llvm": 42}, client="testcc")
        except TypeError as exc:
            print(json.dumps({"type": type(exc).__name__, "ours": isinstance(exc, hc.HostCodegenError)}))
    """, tmp_path / "none")
    assert out == {"type": "NativeDefaultError", "ours": True}


def test_a_broken_plugin_never_fails_a_build_a_default_can_make(tmp_path):
    broken(tmp_path)
    out, _ = run("""
        own = Codegen("llvm", empty_module())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = native.build_host(tvm.IRModule({}), Target("llvm"), defaults={"llvm": own}, client="testcc")
            mod = native.apply_hooks(tvm.IRModule({}), Target("llvm"), Target("cuda"), defaults=(),
                                     client="testcc")
        print(json.dumps({"own": got is own.result, "marks": marks(mod),
                          "warnings": [str(w.message) for w in caught]}))
    """, tmp_path)
    assert out["own"] and out["marks"] == []
    assert any("hcgt-native-broken" in w and "this plugin is broken" in w for w in out["warnings"]), out


def test_the_api_1_fingerprint_follows_what_the_plugins_run(tmp_path):
    """API 1's fingerprint: ``None`` where nothing third-party can run (keys unchanged); the same in every
    process with the same set; a broken plugin, which runs nothing, changes nothing; a control that
    decides does."""
    code = "print(json.dumps({'fp': native.fingerprint()}))"
    none, _ = run(code, tmp_path / "none")
    probe(tmp_path / "one")
    one, _ = run(code, tmp_path / "one")
    again, _ = run(code, tmp_path / "one")
    off, _ = run(code, tmp_path / "one", {"TILELANG_HOSTCG_DISABLE": "hcgt-native-probe"})
    probe(tmp_path / "two")
    broken(tmp_path / "two")
    two, _ = run(code, tmp_path / "two")
    prefer, _ = run(code, tmp_path / "one", {"TILELANG_HOSTCG_PREFER": "llvm=probe-llvm"})
    assert none["fp"] is None and off["fp"] is None
    assert one == again == two  # the same in every process with the same set; the broken plugin runs nothing
    assert len({one["fp"], prefer["fp"]}) == 2
    assert len(one["fp"]) == 16


@pytest.mark.parametrize("declared", [3, "1", 0, True])
def test_a_declaration_this_api_does_not_serve_is_warned_once_and_builds_stock(tmp_path, declared):
    """A value the API does not serve: one warning naming the module, the value and what follows (no
    upgrade advice: none can help); the builds are the compiler's own although a plugin's codegen
    would win; the report says the same."""
    probe(tmp_path)
    out, _ = run(f"""
        from tilelang_hostcg.cli._client import client_document
        from tilelang_hostcg.environment._compiler import tvm_document
        build = sys.modules["tvm.tirx.build"]  # TVM's module, declaring as a compiler does
        build.__tilelang_hostcg_native__ = {declared!r}
        exec("from tilelang_hostcg import native as _api\\n"
             "def _probe_build(defaults):\\n"
             "    return _api.build_host(tvm.IRModule({{}}), tvm.target.Target('llvm'), defaults=defaults, "
             "client='tvm')\\n", build.__dict__)
        own = Codegen("llvm", empty_module())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = [build._probe_build({{"llvm": own}}) is own.result for _ in range(2)]
        report = client_document(tvm_document())
        print(json.dumps({{"got": got, "warnings": [str(w.message) for w in caught], "routed": report["routed"],
                          "problem": report["problem"]}}))
    """, tmp_path)
    assert out["got"] == [True, True]  # the compiler's own, though the plugin's llvm codegen would win
    (text,) = out["warnings"]  # once
    assert f"tvm.tirx.build declares __tilelang_hostcg_native__ = {declared!r}" in text, text
    assert "pip install" not in text and "1 and 2" in text
    assert out["routed"] is False and out["problem"] == text


def test_a_declaring_compiler_is_reported_native_and_install_patches_nothing(tmp_path):
    """TVM's ``tvm.tirx.build`` declaring it (set here, as the patch does): routed activation
    patches nothing, install() says why once, the client line says native, confirmed after a call."""
    probe(tmp_path)
    out, _ = run("""
        import tilelang_hostcg.tvm as integration
        from tilelang_hostcg.cli._client import client_document
        from tilelang_hostcg.environment._compiler import tvm_document
        build = sys.modules["tvm.tirx.build"]
        build.__tilelang_hostcg_native__ = 1
        before = client_document(tvm_document())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            integration.install()
            integration.install()
        own = build.tir_to_runtime.__module__ == "tvm.tirx.build"
        native.build_host(tvm.IRModule({}), Target("llvm"), defaults={"llvm": Codegen("llvm", empty_module())},
                          client="tvm")
        after = client_document(tvm_document())
        print(json.dumps({"before": before, "after": after, "installed": integration.is_installed(),
                          "warnings": [str(w.message) for w in caught], "own": own}))
    """, tmp_path)
    assert out["own"] and out["installed"]
    assert out["before"]["routed"] is True and "native: TVM calls tilelang-hostcg itself" in out["before"]["describe"]
    assert "tvm.tirx.build declares native API 1" in out["before"]["describe"]
    assert "not yet confirmed by a build" in out["before"]["describe"]
    assert out["after"]["describe"].endswith("; confirmed by a build")
    (text,) = out["warnings"]  # once
    assert "install() patches nothing" in text

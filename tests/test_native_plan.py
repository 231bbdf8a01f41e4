"""Native API 2 (``tilelang_hostcg.native.plan``) with the real apache-tvm, called by small compiler
modules of the tests' own (real modules declaring the API, real Targets, TVM's ``target.build.*``):
a plan resolves once and is kept; its fingerprint comes from the resolution and changes exactly where
host code can; each compiler gets its own defaults; bad arguments are named; the compiler's hooks get
Targets; a build that re-enters works; the controls act; reports say what the builds do. Each case
runs in a fresh interpreter with the plugin distributions it plants on ``PYTHONPATH``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .test_native import plant, run

STAMP = '''
import tvm
import tilelang_hostcg as hc


def _build(kind):
    def build(mod, target_host):
        out = tvm.get_global_func("target.build." + kind)(mod, target_host)
        out.__dict__["built_by"] = "stampish-" + kind
        return out
    return build


def _hook(mod, target_host, target):
    marks = list(mod.attrs["marks"]) if mod.attrs and "marks" in mod.attrs else []
    return mod.with_attr("marks", marks + ["stampish-hook"])


C = hc.HostCodegen("stampish-c", _build("c"), priority=10)  # above the core's own, as the stamp plugin's
LLVM = hc.HostCodegen("stampish-llvm", _build("llvm"), priority=10)
HOOK = hc.HostCodegenHook("stampish-cuda", _hook)
'''

HOOK_ONLY = '''
import tilelang_hostcg as hc
HOOK = hc.HostCodegenHook("rocm-only", lambda mod, target_host, target: mod)
'''

# A compiler module of the tests' own: it declares API 2 and builds host code through a plan.
COMPILER = '''
from tilelang_hostcg import native
import tvm
from tvm.target import Target

__tilelang_hostcg_native__ = 2

NAME = "cc"
SEEN = []


def own_build(kind):
    def build(mod, target_host):
        SEEN.append([NAME, kind, type(target_host).__name__])
        out = tvm.get_global_func("target.build." + kind)(mod, target_host)
        out.__dict__["built_by"] = NAME + "-own-" + kind
        return out
    return build


def own_hook(mod, target_host, target):
    SEEN.append([NAME, "hook", type(target_host).__name__, type(target).__name__])
    marks = list(mod.attrs["marks"]) if mod.attrs and "marks" in mod.attrs else []
    return mod.with_attr("marks", marks + [NAME + "-hook"])


CODEGENS = {"c": own_build("c"), "llvm": own_build("llvm")}


def plan(target_host, target=None):
    return native.plan(target_host, target, codegens=CODEGENS, hooks=[own_hook], client=NAME)


def compile_host(target_host, target=None):
    made = plan(target_host, target)
    mod = made.apply_hooks(tvm.IRModule({}))
    marks = [str(m) for m in mod.attrs["marks"]] if mod.attrs and "marks" in mod.attrs else []
    return made.build(tvm.IRModule({})).__dict__.get("built_by"), marks
'''


def stampish(root: Path, name: str = "hcgt-stampish") -> None:
    """A plugin like the stamp plugin: ``c`` and ``llvm`` codegens, a ``cuda`` hook."""
    module = name.replace("-", "_")
    plant(root, name, {"tilelang.host_codegen": {"c": f"{module}:C", "llvm": f"{module}:LLVM"},
                       "tilelang.host_codegen_hooks": {"cuda": f"{module}:HOOK"}},
          {f"{module}.py": STAMP})


def hook_only(root: Path) -> None:
    plant(root, "hcgt-rocm-only", {"tilelang.host_codegen_hooks": {"rocm": "hcgt_rocm_only:HOOK"}},
          {"hcgt_rocm_only.py": HOOK_ONLY})


def compilers(root: Path, *names: str) -> None:
    """Compiler modules ``names`` (``cc`` by default) on ``root``, each its own client."""
    root.mkdir(parents=True, exist_ok=True)
    for name in names or ("cc",):
        (root / f"{name}.py").write_text(COMPILER.replace('NAME = "cc"', f"NAME = {name!r}"))


def test_a_plan_resolves_once_and_builds_as_it_says(tmp_path):
    """The targets are parsed once (strings given); the compiler's own hooks get Targets with a plugin
    and without one; where a plugin serves, the plan says so and builds with it."""
    code = """
        import cc
        made = cc.plan("c", '{"kind": "cuda", "arch": "sm_80"}')
        mod = made.apply_hooks(tvm.IRModule({}))
        built = made.build(tvm.IRModule({}))
        print(json.dumps({"codegen": made.codegen, "hooks": list(made.hooks), "third_party": made.third_party,
                          "fp": made.fingerprint, "host": type(made.target_host).__name__,
                          "target": made.target.kind.name, "built_by": built.__dict__.get("built_by"),
                          "marks": marks(mod), "seen": cc.SEEN, "calls": native.calls()}))
    """
    compilers(tmp_path / "none")
    bare, err = run(code, tmp_path / "none")
    assert bare == {"codegen": "cc-c", "hooks": ["cc-cuda-0"], "third_party": False, "fp": None, "host": "Target",
                    "target": "cuda", "built_by": "cc-own-c", "marks": ["cc-hook"],
                    "seen": [["cc", "hook", "Target", "Target"], ["cc", "c", "Target"]], "calls": {"cc": 2}}
    assert err == ""
    compilers(tmp_path / "stamp")
    stampish(tmp_path / "stamp")
    stamped, _ = run(code, tmp_path / "stamp")
    assert stamped["codegen"] == "stampish-c" and stamped["hooks"] == ["cc-cuda-0", "stampish-cuda"]
    assert stamped["third_party"] is True and len(stamped["fp"]) == 16
    assert stamped["built_by"] == "stampish-c" and stamped["marks"] == ["cc-hook", "stampish-hook"]
    assert stamped["seen"] == [["cc", "hook", "Target", "Target"]]  # the same argument types as without


FINGERPRINTS = """
    import cc
    if USED_FIRST:  # another history: the registry asked, every kind loaded, before any plan
        hc.resolve_host_codegen(Target("c"))
        hc.default_registry().load_all()
    got = {}
    for host in ("c", "llvm"):
        for device in (None, "cuda", "rocm"):
            got[host + "+" + str(device)] = cc.plan(host, device).fingerprint
    print(json.dumps(got))
"""


def fingerprints(root: Path, env: dict[str, str] | None = None, *, used_first: bool = False) -> dict[str, str]:
    out, _ = run(FINGERPRINTS.replace("USED_FIRST", repr(used_first)), root, env)
    return out  # type: ignore[no-any-return]


def test_the_fingerprint_changes_exactly_where_host_code_can(tmp_path):
    compilers(tmp_path)
    stampish(tmp_path)
    plain = fingerprints(tmp_path)
    # The stamp codegens serve c and llvm, its hook cuda: each target's plan runs something of it.
    assert None not in plain.values() and len(set(plain.values())) == len(plain)
    off = {kind: fingerprints(tmp_path, {"TILELANG_HOSTCG_DISABLE": f"hcgt-stampish:{kind}"})
           for kind in ("c", "llvm", "cuda")}
    # Each control changes the targets it affects ...
    assert off["c"]["c+None"] is None and off["c"]["c+cuda"] not in (None, plain["c+cuda"])
    assert off["llvm"]["llvm+None"] is None and off["llvm"]["llvm+cuda"] not in (None, plain["llvm+cuda"])
    assert off["cuda"]["c+cuda"] not in (None, plain["c+cuda"])
    assert len({off["c"]["c+cuda"], off["llvm"]["c+cuda"], off["cuda"]["c+cuda"]}) == 3
    # ... and no other: the same host code, the same value.
    assert off["c"]["llvm+cuda"] == plain["llvm+cuda"] and off["llvm"]["c+cuda"] == plain["c+cuda"]
    assert off["cuda"]["llvm+None"] == plain["llvm+None"]
    # The same installed set and controls: the same values in every process, whatever ran before.
    assert fingerprints(tmp_path, used_first=True) == plain
    assert fingerprints(tmp_path, {"TILELANG_HOSTCG_DISABLE": "hcgt-stampish:c"}, used_first=True) == off["c"]
    # A preference that decides is part of it.
    preferred = fingerprints(tmp_path, {"TILELANG_HOSTCG_PREFER": "c=cc-c"})
    assert preferred["c+None"] is None  # the compiler's own c alone
    assert preferred["c+cuda"] not in (None, plain["c+cuda"], off["c"]["c+cuda"])


@pytest.mark.parametrize("env", [{}, {"TILELANG_HOSTCG_DISABLE": "hcgt-stampish"},
                                 {"TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD": "1"},
                                 {"TILELANG_HOSTCG_AUTO_INSTALL": "0"}])
def test_with_nothing_third_party_active_the_fingerprint_is_none(tmp_path, env):
    """No plugin, or every one switched off: ``None`` (cache keys unchanged), also after the program
    made the default registry (its core codegens never serve a plan)."""
    compilers(tmp_path)
    if env:
        stampish(tmp_path)
    assert set(fingerprints(tmp_path, env).values()) == {None}
    assert set(fingerprints(tmp_path, env, used_first=True).values()) == {None}


def test_the_routed_cache_key_follows_the_same_rule(tmp_path):
    """TileLang's routed cache key part (``plugin_fingerprint``) is the plan's fingerprint: with the
    plugin's ``c`` codegen disabled, and with its ``cuda`` hook disabled, two different keys."""
    stampish(tmp_path)
    code = """
        from tilelang_hostcg.tilelang import plugin_fingerprint
        device = Target({"kind": "cuda", "arch": "sm_80"}, host="c")
        routed = plugin_fingerprint(device)
        made = native.plan(device.host, device, client="tilelang")
        print(json.dumps({"routed": routed["fingerprint"], "native": made.fingerprint,
                          "third_party": routed["third_party"]}))
    """
    keys = {kind: run(code, tmp_path, {"TILELANG_HOSTCG_DISABLE": f"hcgt-stampish:{kind}"} if kind else {})[0]
            for kind in ("", "c", "cuda")}
    assert all(k["routed"] == k["native"] and k["third_party"] for k in keys.values())
    assert len({k["routed"] for k in keys.values()}) == 3
    none, _ = run(code, tmp_path, {"TILELANG_HOSTCG_DISABLE": "hcgt-stampish"})
    assert none == {"routed": None, "native": None, "third_party": False}


def test_two_native_compilers_each_build_with_their_own_defaults(tmp_path):
    """Two compilers in one process, each with its own ``c`` and ``llvm``, beside a hook-only plugin
    and TVM's routed defaults (registered by ``tilelang_hostcg.tvm.install()``): no ambiguity, each
    build is its own compiler's."""
    compilers(tmp_path, "alpha", "beta")
    hook_only(tmp_path)
    out, err = run("""
        import alpha, beta
        import tilelang_hostcg.tvm as integration
        integration.install()
        tvm.compile(tvm.IRModule({}), target="c")  # TVM's own defaults join the registry
        got = [alpha.compile_host("c")[0], beta.compile_host("c")[0], alpha.compile_host("llvm", "rocm")[0],
               beta.compile_host("llvm")[0]]
        print(json.dumps({"got": got}))
    """, tmp_path)
    assert out["got"] == ["alpha-own-c", "beta-own-c", "alpha-own-llvm", "beta-own-llvm"]
    assert "Ambiguous" not in err


def test_calling_without_declaring_never_registers_twice(tmp_path):
    """A module calling API 1 without declaring, while the routed TVM integration has registered TVM's
    own defaults: it builds with its own, registers nothing, and is told once what to declare."""
    hook_only(tmp_path)
    out, _ = run("""
        import types
        import tilelang_hostcg.tvm as integration
        integration.install()
        tvm.compile(tvm.IRModule({}), target="c")
        before = [(r.kind, r.name) for r in hc.default_registry()]
        mod = types.ModuleType("undeclared")
        exec("from tilelang_hostcg import native\\n"
             "def build(defaults):\\n"
             "    return native.build_host(None, 'c', defaults=defaults, client='apache-tvm')\\n", mod.__dict__)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = [mod.build({"c": lambda m, t: "own"}) for _ in range(2)]
        print(json.dumps({"got": got, "same": [(r.kind, r.name) for r in hc.default_registry()] == before,
                          "warnings": [str(w.message) for w in caught]}))
    """, tmp_path)
    assert out["got"] == ["own", "own"] and out["same"]
    (text,) = out["warnings"]
    assert "undeclared calls tilelang_hostcg.native.build_host without declaring __tilelang_hostcg_native__" in text


@pytest.mark.parametrize("arguments, named", [
    ("codegens=(kv for kv in ())", "plan(codegens=...)"),
    ("codegens=[('c', lambda m, t: m)]", "plan(codegens=...)"),
    ("codegens={'c': 42}", "plan(codegens=...)['c']"),
    ("hooks=(h for h in ())", "plan(hooks=...)"),
    ("hooks=[('cuda', lambda m, h, t: m)]", "plan(hooks=...)[0]"),
    ("hooks={'cuda': None}", "plan(hooks=...)"),
])
def test_bad_arguments_are_named(tmp_path, arguments, named):
    out, _ = run(f"""
        try:
            native.plan("c", "cuda", {arguments}, client="cc")
        except TypeError as exc:
            print(json.dumps({{"type": type(exc).__name__, "ours": isinstance(exc, hc.HostCodegenError),
                              "text": str(exc)}}))
    """, tmp_path)
    assert out["type"] == "NativeDefaultError" and out["ours"]
    assert f"tilelang_hostcg.native.{named}" in out["text"]


@pytest.mark.parametrize("plugin, env", [(True, {}), (False, {}),
                                         (True, {"TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD": "1"})])
def test_empty_defaults_give_one_answer(tmp_path, plugin, env):
    """``codegens={}`` for a ``c`` host: the same error with an unrelated hook-only plugin, without one and
    with autoload off (the core's own ``c`` never serves a compiler's plan)."""
    if plugin:
        hook_only(tmp_path)
    out, _ = run("""
        made = native.plan("c", codegens={}, client="cc")
        try:
            made.build(tvm.IRModule({}))
        except ValueError as exc:
            print(json.dumps({"type": type(exc).__name__, "codegen": made.codegen, "fp": made.fingerprint}))
    """, tmp_path, env)
    assert out == {"type": "NoHostCodegenError", "codegen": None, "fp": None}


REENTRANT = '''
import tvm
import tilelang_hostcg as hc

OUTER = []  # a plan made before this codegen ran, to build with inside it


def _build(mod, target_host):
    if OUTER:
        return OUTER[0].build(mod)
    import cc  # the compiler, built again for a helper while this codegen runs
    helper, _ = cc.compile_host("c")
    out = tvm.get_global_func("target.build.c")(mod, target_host)
    out.__dict__["built_by"] = "reentrant+" + str(helper)
    return out


C = hc.HostCodegen("reentrant-c", _build)
'''


def test_a_codegen_that_builds_through_the_compiler_again_works(tmp_path):
    """A plugin codegen compiling a helper with the compiler it serves: the inner build is planned past
    it (the compiler's own); a plan made before it ran and used inside fails naming it."""
    compilers(tmp_path)
    plant(tmp_path, "hcgt-reentrant", {"tilelang.host_codegen": {"c": "hcgt_reentrant:C"}},
          {"hcgt_reentrant.py": REENTRANT})
    out, _ = run("""
        import cc, hcgt_reentrant
        got, _ = cc.compile_host("c")
        outer = cc.plan("c")
        hcgt_reentrant.OUTER.append(outer)
        try:
            outer.build(tvm.IRModule({}))
        except hc.HostCodegenError as exc:
            error = str(exc)
        print(json.dumps({"got": got, "error": error}))
    """, tmp_path)
    assert out["got"] == "reentrant+cc-own-c"
    assert out["error"].startswith("'reentrant-c' (distribution 'hcgt-reentrant' 1.0")
    assert "while it runs" in out["error"]


@pytest.mark.parametrize("env, routed", [({}, True), ({"TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD": "1"}, False),
                                         ({"TILELANG_HOSTCG_DISABLE": "hcgt-stampish"}, False),
                                         ({"TILELANG_HOSTCG_AUTO_INSTALL": "0"}, False)])
def test_the_controls_act_on_the_native_path_and_the_report_says_so(tmp_path, env, routed):
    stampish(tmp_path)
    out, _ = run("""
        import tilelang_hostcg.tvm as integration
        from tilelang_hostcg.cli._client import client_document
        from tilelang_hostcg.environment._compiler import tvm_document
        build = sys.modules["tvm.tirx.build"]
        build.__tilelang_hostcg_native__ = 2  # TVM declaring, as a native TVM does
        exec("from tilelang_hostcg import native as _api\\n"
             "def _host(codegens):\\n"
             "    return _api.plan('llvm', codegens=codegens, client='tvm').build(tvm.IRModule({}))\\n",
             build.__dict__)
        built = build._host({"llvm": lambda m, t: "own"})
        report = client_document(tvm_document())
        print(json.dumps({"stock": built == "own", "installed": integration.is_installed(),
                          "routed": report["routed"], "describe": report["describe"]}))
    """, tmp_path, env)
    assert out["stock"] is not routed and out["installed"] is routed and out["routed"] is routed
    assert out["describe"].startswith("native: TVM calls tilelang-hostcg itself" if routed else "none: native: TVM")
    if not routed:
        assert "the compiler's own codegens and hooks decide alone" in out["describe"]


def test_a_damaged_native_module_is_one_message(tmp_path):
    """An emptied ``tilelang_hostcg/native.py`` under a compiler that declares the API: ``list --load`` and
    ``check`` name it in one message, with the reinstall, and print no traceback."""
    source = Path(__file__).resolve().parents[1]
    shutil.copytree(source / "tilelang_hostcg", tmp_path / "tilelang_hostcg")
    shutil.copy(source / "_tilelang_hostcg_switch.py", tmp_path)
    (tmp_path / "tilelang_hostcg" / "native.py").write_text("")
    stampish(tmp_path)
    program = tmp_path / "cli.py"
    program.write_text("import sys, tvm\n"
                       "sys.modules['tvm.tirx.build'].__tilelang_hostcg_native__ = 1\n"
                       "from tilelang_hostcg.cli.main import main\n"
                       "sys.exit(main(sys.argv[1:]))\n")
    env = {"PYTHONPATH": str(tmp_path), "TVM_DEVICE_BACKEND_AUTOLOAD": "0"}
    for argv in (["list", "--load"], ["check"]):
        proc = subprocess.run([sys.executable, str(program), *argv], capture_output=True, text=True,
                              env={**_environ(), **env}, timeout=300)
        assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
        line = next(line for line in proc.stdout.splitlines() if line.startswith("Client:"))
        assert "tilelang_hostcg.native lacks API_VERSION, plan" in line and "Reinstall it: pip install" in line


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}


def test_json_reports_name_the_declaring_module(tmp_path):
    out, _ = run("""
        from tilelang_hostcg.cli._client import client_document
        from tilelang_hostcg.environment._compiler import tvm_document
        before = client_document(tvm_document())["native"]
        sys.modules["tvm.tirx.build"].__tilelang_hostcg_native__ = 2
        print(json.dumps({"before": before, "after": client_document(tvm_document())["native"]}))
    """, tmp_path)
    assert out == {"before": None, "after": "tvm.tirx.build"}



@pytest.mark.slow
def test_a_compiler_that_declares_but_never_calls_fails_check_strict(tmp_path):
    """A TVM whose ``tvm.tirx.build`` declares native API 2 but whose builds never call it (a copy of
    the installed apache-tvm, ``RECORD`` kept true): ``check``'s probe build shows it, and ``--strict``
    fails naming the declaration; the same TVM without the declaration is routed and passes."""
    import site

    from tilelang_hostcg.testing import PluginEnvironment

    from .native_patches import record_hash, standalone_copy
    from .plugin_factory import Plugin, install, module

    site_dir = next(Path(p) for p in site.getsitepackages() if (Path(p) / "tvm").is_dir())
    _, new_site = standalone_copy(site_dir, tmp_path / "env")
    build = new_site / "tvm" / "tirx" / "build.py"
    stock = build.read_text(encoding="utf-8")

    def write(text: str) -> None:  # written anew (never through the hard link), its RECORD line true
        build.unlink()
        build.write_text(text, encoding="utf-8")
        data = build.read_bytes()
        for record in new_site.glob("*.dist-info/RECORD"):
            lines = record.read_text(encoding="utf-8").splitlines()
            if not any(line.startswith("tvm/tirx/build.py,") for line in lines):
                continue
            record.unlink()
            record.write_text("\n".join(f"tvm/tirx/build.py,{record_hash(data)},{len(data)}"
                                        if line.startswith("tvm/tirx/build.py,") else line for line in lines) + "\n",
                              encoding="utf-8")

    write(stock + "\n__tilelang_hostcg_native__ = 2  # declared, never called\n")
    env = PluginEnvironment(tmp_path / "env")
    install(env, tmp_path, [Plugin("hcgt-rocm-hook", hooks={"rocm": "hcgt_rocm_hook:HOOKS"},
                                   files={"hcgt_rocm_hook.py": module("HOOKS = (_hook('rocm_mark'),)\n")})])
    declared = env.command("check", "--strict", "--json", cwd=tmp_path)
    doc = json.loads(declared.stdout)
    assert declared.returncode != 0 and not doc["ok"]
    assert doc["client"]["probe"]["called"] is False and doc["client"]["native"] == "tvm.tirx.build"
    (problem,) = [p for p in doc["problems"] if p["code"] == "route-unused"]
    assert "did not call tilelang-hostcg: tvm.tirx.build declares native API 2" in problem["message"]
    assert "its declaration is its maintainers' to fix" in problem["message"]
    write(stock)
    undeclared = env.command("check", "--strict", "--json", cwd=tmp_path)
    assert undeclared.returncode == 0, undeclared.stdout
    assert json.loads(undeclared.stdout)["client"]["probe"]["called"] is True


def test_a_plan_follows_registrations_and_predicates(tmp_path):
    """A kind's resolution is kept only while the registrations stay and only where it depends on the
    kind alone: a codegen registered in code later takes over; a predicate decides per target."""
    compilers(tmp_path)
    hook_only(tmp_path)
    out, _ = run("""
        import cc
        first = cc.plan("c").codegen
        hc.register_host_codegen("c", hc.HostCodegen("code-c", lambda m, t: m, priority=5))
        second = cc.plan("c").codegen
        hc.register_host_codegen("llvm", hc.HostCodegen(
            "znver-llvm", lambda m, t: m, supports_target=lambda t: str(t.attrs.get("mcpu", "")) == "znver4"))
        plain = cc.plan("llvm").codegen
        wide = cc.plan(Target({"kind": "llvm", "mcpu": "znver4"})).codegen
        print(json.dumps([first, second, plain, wide, cc.plan("llvm").codegen]))
    """, tmp_path)
    assert out == ["cc-c", "code-c", "cc-llvm", "znver-llvm", "cc-llvm"]

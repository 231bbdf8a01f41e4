"""A plugin author's path, as a user walks it: plugins broken on purpose in every way an
author might, really installed (wheels), and the commands and builds run in fresh
processes. Every failure is traced to its file and line (a ``SyntaxError`` as an import
error is), a wrong entry-point value is named as such with the nearest existing name, a
codegen that needs a TVM function the TVM in use lacks cannot build for every command
alike (declared, or seen in a wrapped callback), and the advice given is safe to follow:
a suggested ``PREFER`` names only codegens that serve the target and can build, and a
suggested control value keeps what the user already set.

``TILELANG_HOSTCG_ONLY`` picks the distributions a test sees.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment, write_distribution

from .conftest import Environments
from .plugin_factory import build_source_wheels

CG, HOOKS = "tilelang.host_codegen", "tilelang.host_codegen_hooks"
REQUIRES = ["tilelang-hostcg>=0.1,<1"]
MISSING = "target.build.hcga_missing"  # a TVM global function no TVM has

SYNTAX = "import tilelang_hostcg\n\n\ndef build(mod, target:\n    return mod\n"  # line 4
IMPORT = "import os\n\nimport hcga_no_such_dependency\n"  # line 3

_DISTS: dict[str, tuple[dict[str, dict[str, str]], dict[str, str]]] = {
    "hcga-syntax": ({CG: {"c": "hcga_syntax.codegen"}},
                    {"hcga_syntax/__init__.py": "", "hcga_syntax/codegen.py": SYNTAX}),
    "hcga-import": ({CG: {"c": "hcga_import.codegen"}},
                    {"hcga_import/__init__.py": "", "hcga_import/codegen.py": IMPORT}),
    "hcga-wrongmod": ({CG: {"cuda_host": "hcga_wrongmod.codegenz"}}, {
        "hcga_wrongmod/__init__.py": "",
        "hcga_wrongmod/codegen.py": """
            import tilelang_hostcg as hc
            hc.register_host_codegen("cuda_host", hc.HostCodegen("wrongmod", lambda m, t: m))
        """}),
    "hcga-wrongattr": ({HOOKS: {"cuda": "hcga_wrongattr.hooks:HOOKZ"}}, {
        "hcga_wrongattr/__init__.py": "",
        "hcga_wrongattr/hooks.py": """
            from tilelang_hostcg import HostCodegenHook
            HOOKS = [HostCodegenHook("wrongattr", lambda mod, host, target: mod)]
        """}),
    "hcga-declared": ({CG: {"cuda_host": "hcga_declared:CODEGEN"}}, {"hcga_declared.py": f"""
        import tilelang_hostcg as hc

        def build(mod, target):  # the callback is made at every call: nothing to see from outside
            return hc.global_func_host_codegen({MISSING!r})(mod, target)

        CODEGEN = hc.HostCodegen("declared", build, global_funcs=({MISSING!r},))
    """}),
    "hcga-wraps": ({CG: {"cuda_host": "hcga_wraps:CODEGEN"}}, {"hcga_wraps.py": f"""
        import tilelang_hostcg as hc

        _missing = hc.global_func_host_codegen({MISSING!r})

        def build(mod, target):
            return _missing(mod, target)

        CODEGEN = hc.HostCodegen("wraps", build)
    """}),
    "hcga-raises": ({CG: {"c": "hcga_raises:CODEGENS"}}, {"hcga_raises.py": f"""
        import tilelang_hostcg as hc

        _c = hc.global_func_host_codegen("target.build.c")

        def fails(mod, target):
            raise RuntimeError("the acme toolchain is missing")

        CODEGENS = [
            hc.HostCodegen("raises", fails, priority=10),
            hc.HostCodegen("refuses", _c, supports_target=lambda t: False, priority=5),
            hc.HostCodegen("nobuild", lambda m, t: _c(m, t), global_funcs=({MISSING!r},),
                           priority=5),
        ]
    """}),
    "hcga-other": ({CG: {"c": "hcga_other:CODEGEN"}}, {"hcga_other.py": """
        import tilelang_hostcg as hc
        CODEGEN = hc.HostCodegen("other", lambda m, t: m, supports_target=lambda t: False)
    """}),
}


@dataclass
class Installed:
    env: PluginEnvironment
    work: Path

    def run(self, *argv: str, only: str, extra: Mapping[str, str] | None = None,
            ) -> subprocess.CompletedProcess[str]:
        return self.env.command(*argv, env={"TILELANG_HOSTCG_ONLY": only, **(extra or {})},
                                cwd=self.work)

    def json(self, *argv: str, only: str, expect: int = 0,
             extra: Mapping[str, str] | None = None) -> Any:
        proc = self.run(*argv, "--json", only=only, extra=extra)
        assert proc.returncode == expect, proc.stdout + proc.stderr
        return json.loads(proc.stdout)

    def file(self, relative: str) -> str:
        return str(self.env.site_packages / relative)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> Installed:
    root = tmp_path_factory.mktemp("author-path")
    env = environments.new("author-path")
    folders = [write_distribution(root / "src", name, "1.0", requires=REQUIRES, entry_points=eps,
                                  files=files) for name, (eps, files) in _DISTS.items()]
    wheels = build_source_wheels(root / "wheels", folders)
    env.pip("install", "-q", "--no-deps", "--no-index", *map(str, wheels))
    work = root / "work"
    work.mkdir()
    return Installed(env, work)


# ------------------------------------------------------------ every failure traced to its line
def test_a_syntax_error_is_reported_as_an_import_error_is(installed: Installed) -> None:
    syntax, imported = installed.file("hcga_syntax/codegen.py"), installed.file("hcga_import/codegen.py")
    proc = installed.run("check", only="hcga-syntax,hcga-import")
    assert proc.returncode == 1
    assert f"SyntaxError: '(' was never closed (at {syntax}:4)" in proc.stdout, proc.stdout
    assert "(codegen.py, line 4)" not in proc.stdout  # the short form Python's str() gives
    assert (f"ModuleNotFoundError: No module named 'hcga_no_such_dependency' (at {imported}:3)"
            in proc.stdout)
    traced = installed.run("check", "--traceback", only="hcga-syntax")
    assert f'      File "{syntax}", line 4' in traced.stdout and f"(at {syntax}:4)" in traced.stdout
    doc = installed.json("check", only="hcga-syntax", expect=1)
    (broken,) = [p for p in doc["problems"] if p["code"] == "broken"]
    assert f"(at {syntax}:4)" in broken["message"]
    listed = installed.json("list", "--load", only="hcga-syntax,hcga-import")
    errors = {e["distribution"]: e["error"] for k in listed["codegens"] for e in k["entry_points"]
              if e["error"] is not None}
    assert errors["hcga-syntax"] == {"type": "SyntaxError", "message": "'(' was never closed",
                                     "file": syntax, "line": 4, "wrong_entry_point": None}
    assert (errors["hcga-import"]["file"], errors["hcga-import"]["line"]) == (imported, 3)


def test_list_load_shows_where_and_says_what_can_build(installed: Installed) -> None:
    proc = installed.run("list", "--load", only="hcga-syntax,hcga-wraps")
    assert proc.returncode == 0, proc.stderr
    syntax = installed.file("hcga_syntax/codegen.py")
    (entry,) = [line for line in proc.stdout.splitlines() if "c = hcga_syntax.codegen" in line]
    assert f"broken: SyntaxError: '(' was never closed (at {syntax}:4)" in entry
    (core_c,) = [line for line in proc.stdout.splitlines() if "codegen 'c' priority" in line]
    assert "can build with apache-tvm" in core_c and "'target.build.c' found" in core_c
    (wraps,) = [line for line in proc.stdout.splitlines() if "codegen 'wraps'" in line]
    assert "cannot build with apache-tvm" in wraps and repr(MISSING) in wraps


def test_explain_has_traceback(installed: Installed) -> None:
    syntax = installed.file("hcga_syntax/codegen.py")
    proc = installed.run("explain", "c", "--traceback", only="hcga-syntax")
    assert proc.returncode == 0, proc.stderr
    assert f"(at {syntax}:4)" in proc.stdout
    assert f'        File "{syntax}", line 4' in proc.stdout, proc.stdout
    assert "Traceback" not in installed.run("explain", "c", only="hcga-syntax").stdout
    doc = installed.json("explain", "c", only="hcga-syntax")
    (broken,) = [c for c in doc["candidates"] if c["state"] == "broken"]
    assert broken["error"]["file"] == syntax and broken["traceback"][-1].startswith("SyntaxError")


# ------------------------------------------------------------ a wrong entry point is named as such
def test_a_wrong_entry_point_value_is_named_with_the_nearest_name(installed: Installed) -> None:
    doc = installed.json("check", only="hcga-wrongmod,hcga-wrongattr", expect=1)
    broken = {p["distribution"]: p["message"] for p in doc["problems"] if p["code"] == "broken"}
    module = broken["hcga-wrongmod"]
    assert ("'cuda_host = hcga_wrongmod.codegenz' in group 'tilelang.host_codegen' failed to "
            "load: its entry point is wrong: 'hcga_wrongmod.codegenz' names module "
            "'hcga_wrongmod.codegenz', which does not exist (did you mean "
            "'hcga_wrongmod.codegen'?)") in module
    assert "distribution 'hcga-wrongmod' 1.0" in module
    assert "fix the value of entry point 'cuda_host = hcga_wrongmod.codegenz'" in module
    attr = broken["hcga-wrongattr"]
    assert ("'cuda = hcga_wrongattr.hooks:HOOKZ' in group 'tilelang.host_codegen_hooks' failed "
            "to load: its entry point is wrong: 'hcga_wrongattr.hooks:HOOKZ' names attribute "
            "'HOOKZ', which 'hcga_wrongattr.hooks' does not have (did you mean 'HOOKS'?)") in attr
    listed = installed.run("list", "--load", only="hcga-wrongattr")
    assert "broken: its entry point is wrong:" in listed.stdout and "'HOOKS'?" in listed.stdout


# ------------------------------------------------------------ one rule for "can build"
@pytest.mark.parametrize("dist, name", [("hcga-declared", "declared"), ("hcga-wraps", "wraps")])
def test_a_needed_tvm_function_decides_can_build_for_every_command(
        installed: Installed, dist: str, name: str) -> None:
    off = {"TILELANG_HOSTCG_AUTO_INSTALL": "0"}  # no TVM default (routed builds') serves cuda_host
    doc = installed.json("check", "--strict", "--require", "cuda_host", only=dist, expect=1, extra=off)
    codes = {p["code"]: p for p in doc["problems"]}
    assert repr(MISSING) in codes["missing-codegen"]["message"]
    assert codes["missing-build-function"]["severity"] == "error"
    assert f"host codegen {name!r}" in codes["missing-build-function"]["message"]
    explained = installed.json("explain", "cuda_host", only=dist, expect=1, extra=off)
    (cand,) = [c for c in explained["candidates"] if c["name"] == name]
    assert cand["verdict"] == "missing-build" and cand["global_funcs"] == [MISSING]
    listed = installed.json("list", "--load", only=dist)
    (reg,) = [r for k in listed["codegens"] for r in k["registrations"] or () if r["name"] == name]
    assert reg["buildable"] is False and repr(MISSING) in reg["cannot_build"]


# ------------------------------------------------------------ advice safe to follow
_BUILD = """
import json, tvm
import tilelang_hostcg as hc
try:
    hc.build_host(tvm.IRModule({}), "c")
except RuntimeError as exc:
    print(json.dumps(getattr(exc, "__notes__", [])))
"""


def _build_notes(installed: Installed, extra: Mapping[str, str]) -> str:
    env = {"TILELANG_HOSTCG_ONLY": "hcga-raises,hcga-other", **extra}
    proc = installed.env.python_run(_BUILD, env=env, cwd=installed.work)
    assert proc.returncode == 0, proc.stderr
    return "\n".join(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_prefer_advice_names_only_codegens_that_serve_and_can_build(installed: Installed) -> None:
    notes = _build_notes(installed, {})
    assert "raised by host codegen 'raises'" in notes
    # The plugins turn TVM's integration on: TVM's own c codegen serves too, and the core's.
    assert "choose another codegen with TILELANG_HOSTCG_PREFER=c=apache-tvm-c or TILELANG_HOSTCG_PREFER=c=c" in notes
    assert "=refuses" not in notes and "=nobuild" not in notes and "=other" not in notes
    off = {"TILELANG_HOSTCG_AUTO_INSTALL": "0"}  # no TVM default: the core's c alone serves
    assert "choose another codegen with TILELANG_HOSTCG_PREFER=c=c" in _build_notes(installed, off)
    none = _build_notes(installed, {**off, "TILELANG_HOSTCG_DISABLE": "tilelang-hostcg:c"})
    assert "TILELANG_HOSTCG_PREFER=" not in none  # the core's c is skipped: nothing else serves
    assert "no other codegen of kind 'c' serves this target and can build" in none


def test_suggested_controls_keep_what_is_set(installed: Installed) -> None:
    notes = _build_notes(installed, {"TILELANG_HOSTCG_DISABLE": "hcga-other",
                                     "TILELANG_HOSTCG_PREFER": "llvm=llvm"})
    assert "TILELANG_HOSTCG_DISABLE=hcga-other,hcga-raises:c (that entry point)" in notes
    assert "TILELANG_HOSTCG_DISABLE=hcga-other,hcga-raises (the distribution)" in notes
    assert "TILELANG_HOSTCG_PREFER=llvm=llvm,c=c" in notes
    doc = installed.json("check", only="hcga-syntax,hcga-other", expect=1,
                         extra={"TILELANG_HOSTCG_DISABLE": "hcga-other"})
    (broken,) = [p for p in doc["problems"] if p["code"] == "broken"]
    assert "skip it with TILELANG_HOSTCG_DISABLE=hcga-other,hcga-syntax" in broken["message"]
    proc = installed.run("explain", "c", only="hcga-other")  # ONLY skips hcga-syntax
    assert "not in TILELANG_HOSTCG_ONLY (to use it: TILELANG_HOSTCG_ONLY=hcga-other,hcga-syntax)" \
        in proc.stdout, proc.stdout


def test_reinstall_advice_never_pulls_dependencies(installed: Installed) -> None:
    doc = installed.json("check", only="hcga-import", expect=1)
    (broken,) = [p for p in doc["problems"] if p["code"] == "broken"]
    assert "pip install --force-reinstall --no-deps" in broken["message"], broken["message"]

"""The command line: in-process through ``main(argv)``, and against real installed plugins.

The installed-plugin tests share one throwaway environment (made for this module) with
good and bad plugin distributions; each test picks the distributions it sees with
``TILELANG_HOSTCG_ONLY`` (the core's own entry points are always read).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.cli import main
from tilelang_hostcg.testing import PluginEnvironment, write_distribution

from .conftest import Environments
from .plugin_factory import install_sources

pytestmark = pytest.mark.slow

CG = "tilelang.host_codegen"
HOOKS = "tilelang.host_codegen_hooks"
REQUIRES = ["tilelang-hostcg>=0.1,<1"]

# Every plugin module leaves a marker file when it is imported.
MARK = """\
import os as _os, pathlib as _pathlib
if _os.environ.get("HCG_MARKER_DIR"):
    _pathlib.Path(_os.environ["HCG_MARKER_DIR"], __name__).touch()
"""



def _module(body: str) -> str:
    """A plugin module's source: the marker, then ``body``."""
    return MARK + textwrap.dedent(body)


STOCK = {"TILELANG_HOSTCG_AUTO_INSTALL": "0"}  # TVM stock: the registry's own tiers, no client default
GOOD = "hcg-good,hcg-llvm-extra"
ALL = "hcg-good,hcg-llvm-extra,hcg-broken,hcg-incompat,hcg-nofunc,hcg-amb-a,hcg-amb-b"


def _distributions(src: Path) -> list[Path]:
    return [
        write_distribution(src, "hcg-good", "1.0", requires=REQUIRES, entry_points={
            CG: {"cuda_host": "hcg_good.codegen"},
            HOOKS: {"cuda": "hcg_good.hooks:HOOKS"},
        }, files={
            "hcg_good/__init__.py": "",
            "hcg_good/codegen.py": _module("""
                from tilelang_hostcg import HostCodegen, global_func_host_codegen
                from tilelang_hostcg import register_host_codegen
                print("hcg_good: probing the driver")  # as TVM and real plugins do
                register_host_codegen("cuda_host", HostCodegen(
                    "good-cuda-host", global_func_host_codegen("target.build.cuda_host")))
            """),
            "hcg_good/hooks.py": _module("""
                from tilelang_hostcg import HostCodegenHook
                def _same(mod, target_host, target):
                    return mod
                HOOKS = [
                    HostCodegenHook("prep-low", _same),
                    HostCodegenHook("prep-high", _same, priority=5),
                    HostCodegenHook("sm90-only", _same,
                                    supports_target=lambda t: str(t.attrs["arch"]) == "sm_90"),
                ]
            """),
        }),
        write_distribution(src, "hcg-llvm-extra", "2.0", requires=REQUIRES, entry_points={
            CG: {"llvm": "hcg_llvm_extra:CODEGENS"},
        }, files={
            "hcg_llvm_extra/__init__.py": _module("""
                from tilelang_hostcg import HostCodegen, global_func_host_codegen
                def _skylake(target):
                    return str(target.attrs.get("mcpu", "")) == "skylake"
                CODEGENS = [HostCodegen("llvm-skylake", global_func_host_codegen(
                    "target.build.llvm"), supports_target=_skylake, priority=10)]
            """),
        }),
        write_distribution(src, "hcg-broken", "0.1", requires=REQUIRES, entry_points={
            CG: {"cuda_host": "hcg_broken.codegen"},
        }, files={
            "hcg_broken/__init__.py": "",
            "hcg_broken/codegen.py": _module('raise RuntimeError("boom: no driver found")\n'),
        }),
        write_distribution(src, "hcg-incompat", "1.0", requires=["tilelang-hostcg>=99"],
                           entry_points={CG: {"c": "hcg_incompat"}},
                           files={"hcg_incompat/__init__.py": _module("")}),
        write_distribution(src, "hcg-nofunc", "1.0", requires=REQUIRES, entry_points={
            CG: {"c": "hcg_nofunc:CODEGEN"},
        }, files={
            "hcg_nofunc/__init__.py": _module("""
                from tilelang_hostcg import HostCodegen, global_func_host_codegen
                CODEGEN = HostCodegen("c-nofunc", global_func_host_codegen(
                    "target.build.hcg_does_not_exist"), priority=-1)
            """),
        }),
        *(write_distribution(src, f"hcg-amb-{x}", "1.0", requires=REQUIRES, entry_points={
            CG: {"test": f"hcg_amb_{x}:CODEGEN"},
        }, files={
            f"hcg_amb_{x}/__init__.py": _module(f"""
                from tilelang_hostcg import HostCodegen, global_func_host_codegen
                CODEGEN = HostCodegen("amb-{x}", global_func_host_codegen("target.build.llvm"))
            """),
        }) for x in "ab"),
    ]


@dataclass
class Installed:
    """The module's environment, plus a neutral working directory for commands."""

    env: PluginEnvironment
    root: Path
    work: Path

    def run(self, *argv: str, only: str | None = ALL, markers: Path | None = None,
            extra: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        variables = dict(extra or {})
        if only is not None:
            variables["TILELANG_HOSTCG_ONLY"] = only
        if markers is not None:
            variables["HCG_MARKER_DIR"] = str(markers)
        return self.env.command(*argv, env=variables, cwd=self.work)

    def json(self, *argv: str, expect: int = 0, **kwargs: Any) -> Any:
        proc = self.run(*argv, "--json", **kwargs)
        assert proc.returncode == expect, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
        return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> Installed:
    root = tmp_path_factory.mktemp("cli-env")
    env = environments.new("cli")
    install_sources(env, root / "wheels", _distributions(root / "src"))
    work = root / "work"
    work.mkdir()
    return Installed(env, root, work)


def _entries(doc: dict[str, Any], key: str, kind: str) -> dict[str, dict[str, Any]]:
    (item,) = [k for k in doc[key] if k["kind"] == kind]
    return {e["distribution"]: e for e in item["entry_points"]}


def _kind(doc: dict[str, Any], key: str, kind: str) -> dict[str, Any]:
    (item,) = [k for k in doc[key] if k["kind"] == kind]
    return item


# --------------------------------------------------------------------------- list
def test_list_reads_metadata_only(installed: Installed, tmp_path: Path) -> None:
    probe = """
        import contextlib, io, json, sys
        from tilelang_hostcg.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(["list", "--json"])
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("tvm", "tvm_ffi")
                       or m.startswith("hcg_") or m == "tilelang_hostcg.builtin")
        print(json.dumps({"rc": rc, "heavy": heavy, "doc": json.loads(out.getvalue())}))
    """
    result = installed.env.run_json(probe, env={"TILELANG_HOSTCG_ONLY": ALL,
                                                "HCG_MARKER_DIR": str(tmp_path)})
    assert result["rc"] == 0
    assert result["heavy"] == []
    assert list(tmp_path.iterdir()) == []
    doc = result["doc"]
    assert doc["schema"] == 1 and doc["command"] == "list" and doc["loaded"] is False

    llvm = _entries(doc, "codegens", "llvm")
    assert llvm["tilelang-hostcg"]["core"] is True
    assert llvm["hcg-llvm-extra"]["extends_core"] is True
    assert llvm["hcg-llvm-extra"]["version"] == "2.0"
    assert _kind(doc, "codegens", "llvm")["extends_core"] is True
    assert _kind(doc, "codegens", "llvm")["registrations"] is None

    c = _entries(doc, "codegens", "c")
    assert c["hcg-incompat"]["state"] == "incompatible"
    assert "tilelang-hostcg>=99" in c["hcg-incompat"]["reason"]
    cuda_host = _entries(doc, "codegens", "cuda_host")
    assert cuda_host["hcg-good"]["state"] == "lazy"
    assert cuda_host["hcg-good"]["entry_point"] == "cuda_host = hcg_good.codegen"
    assert cuda_host["hcg-broken"]["state"] == "lazy"  # not imported, so not known broken
    assert _entries(doc, "hooks", "cuda")["hcg-good"]["value"] == "hcg_good.hooks:HOOKS"


def test_list_text_marks_core_extensions_and_disabled(installed: Installed) -> None:
    proc = installed.run("list", extra={"TILELANG_HOSTCG_DISABLE": "hcg-amb-b"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    extra = next(line for line in lines if "hcg-llvm-extra" in line)
    assert "[adds to core kind: wins only where it matches]" in extra
    amb_b = next(line for line in lines if "hcg-amb-b" in line)
    assert "disabled" in amb_b and "TILELANG_HOSTCG_DISABLE=hcg-amb-b" in amb_b
    assert "Host codegen hooks" in proc.stdout


def test_list_load_adds_names_priorities_and_errors(installed: Installed, tmp_path: Path) -> None:
    proc = installed.run("list", "--load", "--json", markers=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "probing the driver" in proc.stderr  # what plugins print stays off stdout
    doc = json.loads(proc.stdout)
    assert doc["loaded"] is True
    cuda_host = _entries(doc, "codegens", "cuda_host")
    assert cuda_host["hcg-good"]["state"] == "loaded"
    broken = cuda_host["hcg-broken"]
    assert broken["state"] == "broken"
    plugin_file = installed.env.site_packages / "hcg_broken" / "codegen.py"
    assert broken["error"] == {"type": "RuntimeError", "message": "boom: no driver found",
                               "file": str(plugin_file), "line": 4, "wrong_entry_point": None}  # after the marker's 3
    assert _entries(doc, "codegens", "c")["hcg-incompat"]["state"] == "incompatible"

    hooks = _kind(doc, "hooks", "cuda")["registrations"]
    assert [(h["name"], h["priority"]) for h in hooks] == [
        ("prep-high", 5), ("prep-low", 0), ("sm90-only", 0)]
    llvm = {r["name"]: r for r in _kind(doc, "codegens", "llvm")["registrations"]}
    assert llvm["llvm-skylake"]["priority"] == 10
    assert llvm["llvm-skylake"]["extends_core"] is True
    assert llvm["llvm-skylake"]["build_function"] == "target.build.llvm"
    assert llvm["llvm"]["core"] is True
    imported = {p.name for p in tmp_path.iterdir()}
    assert {"hcg_good.codegen", "hcg_good.hooks", "hcg_llvm_extra"} <= imported
    assert "hcg_incompat" not in imported


# --------------------------------------------------------------------------- check
def test_check_passes_for_good_plugins(installed: Installed) -> None:
    doc = installed.json("check", "--require", "cuda_host,llvm", "--require-hook", "cuda",
                         "--strict", only=GOOD)
    assert doc["ok"] is True and doc["problems"] == []
    assert doc["required"] == {"codegens": ["cuda_host", "llvm"], "hooks": ["cuda"]}
    assert {"name": "hcg-good", "version": "1.0"} in doc["distributions"]
    assert {"c", "cuda_host", "llvm"} <= set(doc["kinds"]["codegens"])
    proc = installed.run("check", "--require", "cuda_host", only=GOOD)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "check passed" in proc.stdout


def test_check_reports_every_problem_in_one_run(installed: Installed) -> None:
    doc = installed.json("check", "--require", "cuda_host", "--require-hook", "metal",
                         expect=1)
    assert doc["ok"] is False
    by_code: dict[str, list[dict[str, Any]]] = {}
    for problem in doc["problems"]:
        by_code.setdefault(problem["code"], []).append(problem)
    assert {"broken", "incompatible", "ambiguous", "missing-build-function",
            "missing-hook"} <= by_code.keys()
    (broken,) = by_code["broken"]
    assert broken["distribution"] == "hcg-broken" and broken["kind"] == "cuda_host"
    assert "boom: no driver found" in broken["message"]
    assert "TILELANG_HOSTCG_DISABLE=hcg-broken" in broken["message"]
    (incompat,) = by_code["incompatible"]
    assert "tilelang-hostcg>=99" in incompat["message"]
    (ambiguous,) = by_code["ambiguous"]
    assert "hcg-amb-a" in ambiguous["message"] and "hcg-amb-b" in ambiguous["message"]
    assert "TILELANG_HOSTCG_PREFER=test=" in ambiguous["message"]
    (nofunc,) = by_code["missing-build-function"]
    assert "target.build.hcg_does_not_exist" in nofunc["message"]
    assert by_code["missing-hook"][0]["kind"] == "metal"
    # The registry's own warning about the broken plugin is not reported a second time.
    assert not any("hcg-broken" in p["message"] for p in by_code.get("plugin-warning", []))
    assert doc["summary"]["errors"] >= 5

    proc = installed.run("check")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "PluginWarning" not in proc.stderr
    assert "error [broken]" in proc.stdout and "check failed" in proc.stdout


def test_check_missing_required_codegen_names_the_disabled_provider(installed: Installed,
                                                                     ) -> None:
    # With activation off: where the TVM integration routes the process, TVM's own cuda_host
    # build serves the kind as a default (the answer a routed build gives).
    doc = installed.json("check", "--require", "cuda_host", only="hcg-llvm-extra", expect=1, extra=STOCK)
    (problem,) = [p for p in doc["problems"] if p["code"] == "missing-codegen"]
    assert problem["kind"] == "cuda_host"
    assert "hcg-good" in problem["message"] and "TILELANG_HOSTCG_ONLY" in problem["message"]


def test_prefer_resolves_ambiguity(installed: Installed) -> None:
    only = "hcg-amb-a,hcg-amb-b"
    assert installed.run("check", only=only).returncode == 1
    doc = installed.json("check", only=only, extra={"TILELANG_HOSTCG_PREFER": "test=amb-b"})
    assert doc["ok"] is True
    assert doc["controls"]["prefer"] == {"test": "amb-b"}


def test_duplicate_distribution_warns_and_fails_when_strict(installed: Installed,
                                                            tmp_path: Path) -> None:
    (info,) = installed.env.site_packages.glob("hcg_good-1.0.dist-info")
    shutil.copytree(info, tmp_path / info.name)
    extra = {"PYTHONPATH": str(tmp_path)}
    doc = installed.json("check", only=GOOD, extra=extra)
    (dup,) = [p for p in doc["problems"] if p["code"] == "duplicate-distribution"]
    assert dup["severity"] == "warning" and dup["distribution"] == "hcg-good"
    assert str(tmp_path) in dup["message"]
    assert doc["ok"] is True
    strict = installed.json("check", "--strict", only=GOOD, extra=extra, expect=1)
    assert [p["severity"] for p in strict["problems"]] == ["error"]
    listed = installed.json("list", only=GOOD, extra=extra)
    assert [d["distribution"] for d in listed["duplicates"]] == ["hcg-good"]


# --------------------------------------------------------------------------- lock
def test_lock_round_trip_and_drift(installed: Installed, tmp_path: Path) -> None:
    lock = tmp_path / "hostcg.lock.json"
    proc = installed.run("lock", "-o", str(lock), only=GOOD)
    assert proc.returncode == 0, proc.stderr
    text = lock.read_text()
    doc = json.loads(text)
    assert doc["schema"] == 1 and doc["command"] == "lock"
    assert doc["distributions"] == sorted(doc["distributions"], key=lambda d: d["name"])
    names = {d["name"]: d["version"] for d in doc["distributions"]}
    assert names["hcg-good"] == "1.0" and names["hcg-llvm-extra"] == "2.0"
    assert {"distribution": "hcg-good", "kind": "cuda", "name": "prep-high",
            "priority": 5} in doc["hooks"]
    assert installed.run("lock", only=GOOD).stdout == text  # stdout by default, stable

    ok = installed.json("check", "--lock", str(lock), only=GOOD)
    assert ok["ok"] is True and ok["lock"] == str(lock)

    doc["distributions"] = [
        {**d, "version": "0.9"} if d["name"] == "hcg-good" else d
        for d in doc["distributions"] if d["name"] != "hcg-llvm-extra"
    ] + [{"name": "hcg-gone", "version": "1.0"}]
    doc["hooks"] = [h for h in doc["hooks"] if h["name"] != "prep-low"]
    doc["codegens"] = [{**c, "priority": 3} if c["name"] == "good-cuda-host" else c
                       for c in doc["codegens"]]
    lock.write_text(json.dumps(doc))
    drift = installed.json("check", "--lock", str(lock), only=GOOD, expect=1)
    found = {(p["code"], p["distribution"]) for p in drift["problems"]}
    assert ("lock-changed", "hcg-good") in found  # version, and the codegen's priority
    assert ("lock-added", "hcg-llvm-extra") in found
    assert ("lock-removed", "hcg-gone") in found
    messages = " ".join(p["message"] for p in drift["problems"])
    assert "'prep-low'" in messages and "priority 0, the lock file" in messages
    assert "tilelang-hostcg lock -o" in messages


def test_lock_file_errors_are_usage_errors(installed: Installed, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    proc = installed.run("check", "--lock", str(bad), only=GOOD)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "not valid JSON" in proc.stderr


# --------------------------------------------------------------------------- explain
def test_explain_device_target(installed: Installed) -> None:
    doc = installed.json("explain", "cuda", only=GOOD, extra=STOCK)  # the core's tiers, TVM unrouted
    assert doc["device"] is True and doc["host_from"] == "tvm-default"
    # apache-tvm 0.27 has LLVM, so TVM's default host is llvm (c where TVM has no LLVM).
    assert doc["target"]["kind"] == "cuda" and doc["host_kind"] == "llvm"
    assert doc["codegen"]["name"] == "llvm" and doc["codegen"]["core"] is True
    candidates = {c["name"]: c for c in doc["candidates"]}
    skylake = candidates["llvm-skylake"]
    assert skylake["matches"] is False and skylake["selected"] is False
    assert "supports_target returned False" in skylake["reason"]
    assert skylake["extends_core"] is True
    assert doc["hook_kind"] == "cuda"
    # entries without a name are entry points the controls skipped (plugins installed
    # in the environment the tests run over, outside TILELANG_HOSTCG_ONLY)
    named = [h for h in doc["hooks"] if h["name"] is not None]
    assert [(h["name"], h["order"]) for h in named] == [
        ("prep-high", 1), ("prep-low", 2), ("sm90-only", None)]
    assert "supports_target returned False" in named[2]["reason"]

    proc = installed.run("explain", "cuda", "--host", "llvm", only=GOOD, extra=STOCK)
    assert proc.returncode == 0, proc.stderr
    assert "1. 'prep-high'" in proc.stdout
    assert "an addition to the core's 'llvm' kind: it wins only where" in proc.stdout


def test_explain_target_json_selects_core_extension(installed: Installed) -> None:
    doc = installed.json("explain", '{"kind": "llvm", "mcpu": "skylake"}', only=GOOD, extra=STOCK)
    assert doc["codegen"]["name"] == "llvm-skylake"
    assert doc["codegen"]["extends_core"] is True
    assert "highest priority" in doc["codegen"]["reason"]
    core = next(c for c in doc["candidates"] if c["name"] == "llvm")
    assert "priority 0 is lower than 'llvm-skylake' (10)" in core["reason"]


def test_explain_ambiguous_then_preferred(installed: Installed) -> None:
    doc = installed.json("explain", "test", expect=1)
    assert doc["codegen"] is None
    assert doc["error"]["type"] == "AmbiguousHostCodegenError"
    assert all(c["reason"].startswith("ambiguous") for c in doc["candidates"])

    doc = installed.json("explain", "test", extra={"TILELANG_HOSTCG_PREFER": "test=amb-b"})
    assert doc["codegen"]["name"] == "amb-b" and doc["prefer"] == "amb-b"
    assert "TILELANG_HOSTCG_PREFER=test=amb-b" in doc["codegen"]["reason"]
    other = next(c for c in doc["candidates"] if c["name"] == "amb-a")
    assert "TILELANG_HOSTCG_PREFER" in other["reason"]


def test_explain_lists_broken_and_incompatible_candidates(installed: Installed) -> None:
    proc = installed.run("explain", "cuda_host", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "PluginWarning" not in proc.stderr  # captured into the document instead
    doc = json.loads(proc.stdout)
    assert doc["codegen"]["name"] == "good-cuda-host"
    broken = next(c for c in doc["candidates"] if c["distribution"] == "hcg-broken")
    assert broken["state"] == "broken" and "boom" in broken["reason"]
    assert any("hcg-broken" in w for w in doc["warnings"])

    c_doc = installed.json("explain", "c")
    incompat = next(c for c in c_doc["candidates"] if c["distribution"] == "hcg-incompat")
    assert incompat["state"] == "incompatible"


def test_explain_nothing_resolves_exits_1(installed: Installed) -> None:
    proc = installed.run("explain", "test", only=GOOD)
    assert proc.returncode == 1
    assert "none resolves: NoHostCodegenError" in proc.stdout
    doc = installed.json("explain", "test", only=GOOD, expect=1)
    assert doc["codegen"] is None
    assert doc["error"]["type"] == "NoHostCodegenError"
    assert doc["error"]["message"].startswith("No host codegen registered for target host 'test'")


def test_explain_unknown_kind_is_one_line_usage_error(installed: Installed) -> None:
    proc = installed.run("explain", "no_such_kind", only=GOOD)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1
    assert "no_such_kind" in proc.stderr and "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- in-process
@pytest.mark.parametrize("argv, needle", [
    ([], "missing command"),
    (["frobnicate"], "invalid choice"),
    (["list", "--frob"], "unrecognized arguments"),
    (["cache"], "invalid choice"),
    (["explain", '{"kind":'], "not valid JSON"),
    (["explain", "llvm", "--host", "nosuch"], "nosuch"),
    (["check", "--require", "lvm"], "unknown kind 'lvm'"),
    (["check", "--require", "cuda"], "device kind"),
    (["check", "--require-hook", "llvm"], "use --require llvm"),
    (["check", "--require-hook", "c,cuda"], "'c' in --require-hook is a host kind"),
    (["explain", "cuda", "--host", "cuda"], "host 'cuda' (--host) is a device kind"),
    (["explain", '{"kind": "cuda", "host": "cuda"}'], "the target's \"host\""),
    (["check", "--require", ","], "--require ',' names no kind"),
    (["check", "--require", "llvm", "--require-hook", " , "], "--require-hook ' , ' names no kind"),
    (["explain", "llvm", "--host", "c"], "--host applies only to a device TARGET"),
])
def test_usage_errors(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert needle in err and err.count("\n") == 1 and err.startswith("tilelang-hostcg")


@pytest.mark.parametrize("argv, command, needle", [
    (["list", "--frob", "--json"], "list", "unrecognized arguments"),
    (["--json"], None, "missing command"),
    (["--json", "list", "--frob"], "list", "unrecognized arguments"),
    (["check", "--require", ",", "--json"], "check", "--require ',' names no kind"),
    (["explain", "llvm", "--host", "c", "--json"], "explain", "'llvm', a host target"),
    (["check", "--require-hook", "llvm", "--json"], "check", "is a host kind"),
    (["check", "--require", "cuda", "--json"], "check", "is a device kind"),
    (["check", "--lock", "no-such-lock.json", "--json"], "check", "cannot read lock file"),
    (["explain", "cuda", "--host", "cuda", "--json"], "explain", "is a device kind"),
    (["explain", '{"kind":', "--json"], "explain", "not valid JSON"),
])
def test_json_usage_errors_are_one_document(argv: list[str], command: str | None, needle: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["schema"] == 1 and doc["command"] == command and doc["ok"] is False
    assert doc["error"]["type"] == "UsageError" and doc["error"]["exit_code"] == 2
    assert needle in doc["error"]["message"]
    assert err.count("\n") == 1 and needle in err


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("tilelang-hostcg ")
    assert main(["check", "--help"]) == 0
    assert "--require-hook" in capsys.readouterr().out


@pytest.mark.parametrize("content, needle", [
    (None, "cannot read lock file"),
    ("[]", "not a tilelang-hostcg lock file"),
    ('{"schema": 7}', "schema 7"),
    ('{"schema": 1, "distributions": [{"name": "x"}]}', "corrupt"),
])
def test_unusable_lock_files(content: str | None, needle: str, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    lock = tmp_path / "lock.json"
    if content is not None:
        lock.write_text(content)
    assert main(["check", "--lock", str(lock)]) == 2
    err = capsys.readouterr().err
    assert needle in err and "tilelang-hostcg lock -o" in err


def test_lock_to_unwritable_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lock", "-o", str(tmp_path / "missing" / "lock.json")]) == 2
    assert "cannot write lock file" in capsys.readouterr().err


def test_explain_in_process_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "llvm", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == 1 and doc["device"] is False and doc["host_from"] == "target"
    assert doc["hooks"] == [] and doc["hook_kind"] is None
    assert doc["codegen"]["build_function"] is not None


def test_json_before_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--json", "list"], ["list", "--json"], ["--json", "list", "--json"]):
        assert main(argv) == 0, argv
        doc = json.loads(capsys.readouterr().out)
        assert doc["command"] == "list" and doc["schema"] == 1
    assert main(["--json", "explain", "c"]) == 0
    assert json.loads(capsys.readouterr().out)["host_kind"] == "c"
    assert main(["list"]) == 0
    assert capsys.readouterr().out.startswith("TVM in use:")  # text unless --json is given


def test_help_names_documentation_an_installed_user_can_find(
        capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import metadata

    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "docs/cli.md" in out
    urls = metadata("tilelang-hostcg").get_all("Project-URL") or []
    for item in urls:  # an address the metadata names is listed
        label, _, url = item.partition(",")
        assert f"{label.strip()}: {url.strip()}" in out
    if not urls:  # else the source distribution, which ships docs/, and how to fetch it
        assert "source distribution" in out and "pip download" in out


def test_the_source_distribution_ships_the_documentation() -> None:
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    sdist = text.split("[tool.hatch.build.targets.sdist]", 1)[1].split("\n[", 1)[0]
    assert '"docs"' in sdist


def test_non_utf8_arguments_show_as_byte_escapes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    undecodable = b"\xff".decode("utf-8", "surrogateescape")
    assert main(["explain", undecodable]) == 2
    err = capsys.readouterr().err
    assert "\\xff" in err and "udcff" not in err and "codec" not in err
    assert err.count("\n") == 1
    assert main(["explain", undecodable, "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert "\\xff" in doc["error"]["message"] and "udcff" not in doc["error"]["message"]

    monkeypatch.chdir(tmp_path)
    name = b"\xfe.json".decode("utf-8", "surrogateescape")
    assert main(["lock", "-o", name]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Wrote \\xfe.json: ") and "udcfe" not in out
    assert os.listdir(b".") == [b"\xfe.json"]
    missing = b"\xfd/lock.json".decode("utf-8", "surrogateescape")
    assert main(["check", "--lock", missing]) == 2
    err = capsys.readouterr().err
    assert "'\\xfd/lock.json'" in err and "udcfd" not in err

"""The ``TILELANG_HOSTCG_*`` controls cannot fail silently, and any value is safe.

Pure parsing is tested in-process; what a user sees (the warning, ``check``,
``check --strict``, ``explain``) is tested with real installed distributions in
fresh interpreters, with environment values passed as raw bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg import Controls, PluginWarning
from tilelang_hostcg.core import ControlPluginWarning
from tilelang_hostcg.discovery._planning import AdvertisedEntryPoint
from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .plugin_factory import Plugin, install, module

ALPHA = Plugin(
    "hcgc-alpha", "1.0",
    codegens={"test": "hcgc_alpha:CODEGENS"},
    hooks={"cuda": "hcgc_alpha:HOOKS"},
    files={"hcgc_alpha.py": module("""
        CODEGENS = [_codegen("alpha-fast", priority=5), _codegen("alpha-\\u00e9t\\u00e9")]
        HOOKS = [_hook("alpha-hook")]
    """)})
BETA = Plugin(
    "hcgc-beta", "1.0",
    codegens={"test": "hcgc_beta:CODEGEN"},
    files={"hcgc_beta.py": module('CODEGEN = _codegen("beta", priority=1)\n')})
ONLY = {"TILELANG_HOSTCG_ONLY": "hcgc-alpha,hcgc-beta"}


def _entries() -> list[AdvertisedEntryPoint]:
    return [AdvertisedEntryPoint("tilelang.host_codegen", "test", "m:CG", "hcgc-alpha", "1.0"),
            AdvertisedEntryPoint("tilelang.host_codegen_hooks", "hip", "m:H", "hcgc-alpha",
                                 "1.0"),
            AdvertisedEntryPoint("tilelang.host_codegen_hooks", "cuda", "m:H", "hcgc-alpha",
                                 "1.0")]


def _quiet(environ: Mapping[str, str]) -> Controls:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        return Controls.from_environ(environ)


# --------------------------------------------------------------------------- parsing
@pytest.mark.parametrize("variable, value, needle", [
    ("TILELANG_HOSTCG_DISABLE", "ok-dist,bad\udcffname", "'bad\\xffname': it is not valid UTF-8"),
    ("TILELANG_HOSTCG_ONLY", "ok-dist;other", "'ok-dist;other': not a distribution name"),
    ("TILELANG_HOSTCG_DISABLE", "ok-dist:", "write a distribution name or distribution:kind"),
    ("TILELANG_HOSTCG_PREFER", "llvm", "write kind=codegen"),
    ("TILELANG_HOSTCG_PREFER", "llvm=\udce9", "not valid UTF-8"),
    ("TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD", "maybe", "is not understood"),
])
def test_malformed_items_are_named_and_dropped(variable: str, value: str, needle: str) -> None:
    controls = _quiet({variable: value})
    (problem,) = controls.problems
    assert problem.variable == variable and needle in problem.message
    assert problem.message.startswith(variable)
    assert problem.message.isascii()  # printable on any terminal
    assert controls.autoload is True


def test_good_items_survive_next_to_bad_ones() -> None:
    controls = _quiet({"TILELANG_HOSTCG_DISABLE": "A_Dist  other.dist\nx:\udcff, a-dist:cuda",
                       "TILELANG_HOSTCG_ONLY": "keep-me,\udcff",
                       "TILELANG_HOSTCG_PREFER": "test=alpha fast,,=x"})
    assert controls.disable == {"a-dist", "other-dist", "a-dist:cuda"}
    assert controls.only == {"keep-me"}
    assert dict(controls.prefer) == {"test": "alpha fast"}
    assert [p.variable for p in controls.problems] == [
        "TILELANG_HOSTCG_DISABLE", "TILELANG_HOSTCG_ONLY", "TILELANG_HOSTCG_PREFER"]


def test_a_problem_warns_once_per_process() -> None:
    environ = {"TILELANG_HOSTCG_PREFER": "once-only-kind"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Controls.from_environ(environ)
        Controls.from_environ(environ)
    assert [str(w.message) for w in caught if w.category is ControlPluginWarning] == [
        "TILELANG_HOSTCG_PREFER: ignoring 'once-only-kind'; write kind=codegen, e.g. "
        "TILELANG_HOSTCG_PREFER=llvm=llvm"]


def test_unknown_names_suggest_the_nearest() -> None:
    controls = Controls(disable=frozenset({"hcgc-alpah", "hcgc-alpha:cdua", "hcgc-alpha:rocm"}),
                        only=frozenset({"hcgc-alpha", "zzz"}), prefer={"tset": "x", "test": "y"})
    messages = {p.item: p.message for p in controls.unknown_names(_entries())}
    assert set(messages) == {"hcgc-alpah", "hcgc-alpha:cdua", "zzz", "tset=x"}
    assert "did you mean 'hcgc-alpha'?" in messages["hcgc-alpah"]
    assert "did you mean 'cuda'?" in messages["hcgc-alpha:cdua"]
    assert "did you mean" not in messages["zzz"]
    assert "did you mean 'test'?" in messages["tset=x"]
    problem = controls.unknown_preference("test", ["alpha", "beta"])
    assert problem is not None and "has no codegen named 'y'" in problem.message
    assert Controls(prefer={"test": "beta"}).unknown_preference("test", ["beta"]) is None
    assert Controls().unknown_names(_entries()) == []


# --------------------------------------------------------------------------- fresh processes
@dataclass
class Env:
    env: PluginEnvironment
    work: Path

    def run(self, argv: list[str], extra: Mapping[str, str | bytes] | None = None,
            ) -> subprocess.CompletedProcess[bytes]:
        """Run with raw bytes in the environment (as a shell would pass them)."""
        environ: dict[bytes, bytes] = {os.fsencode(k): os.fsencode(v)
                                       for k, v in self.env.environ(ONLY).items()}
        for key, value in (extra or {}).items():
            environ[os.fsencode(key)] = value if isinstance(value, bytes) else os.fsencode(value)
        proc = subprocess.run([self.env.python, *argv], capture_output=True, env=environ,
                              cwd=self.work, timeout=300)
        assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")
        return proc

    def cli_json(self, *argv: str, extra: Mapping[str, str | bytes] | None = None,
                 expect: int = 0) -> Any:
        proc = self.run(["-m", "tilelang_hostcg", *argv, "--json"], extra)
        assert proc.returncode == expect, proc.stdout + proc.stderr
        return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> Env:
    root = tmp_path_factory.mktemp("controls")
    environment = environments.new("controls")
    install(environment, root, [ALPHA, BETA])
    (root / "work").mkdir()
    return Env(environment, root / "work")


# ``import tvm`` is inside the block: with a plugin installed, TVM's ``tvm.backends`` autoload
# runs the TVM integration's activation, whose look at the controls warns at that line.
RESOLVE = """
import warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from tvm.target import Target
    import tilelang_hostcg as hc
    name = hc.resolve_host_codegen(Target("test")).name
    hc.resolve_host_codegen(Target("test"))
    hc.resolve_host_codegen(Target({"kind": "test", "tag": "again"}))
print(name)
for w in caught:
    print(w.category.__name__, "|", w.filename, "|", w.message)
"""


@pytest.mark.slow
def test_typos_warn_once_with_the_nearest_name(env: Env) -> None:
    proc = env.run(["-c", RESOLVE], {"TILELANG_HOSTCG_DISABLE": "hcgc-bta",
                                     "TILELANG_HOSTCG_PREFER": "test=alpha-fats"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert lines[0] == "alpha-fast"  # the preference names nothing: priority decides
    warned = [line for line in lines[1:] if line.startswith("ControlPluginWarning")]
    assert len(warned) == 2, lines
    assert all(w.split(" | ")[1] == "<string>" for w in warned), warned  # the user's line
    assert any("TILELANG_HOSTCG_DISABLE=hcgc-bta" in w and "did you mean 'hcgc-beta'?" in w
               for w in warned)
    assert any("TILELANG_HOSTCG_PREFER=test=alpha-fats" in w and "did you mean 'alpha-fast'?" in w
               for w in warned)



@pytest.mark.slow
def test_only_and_kind_typos_warn_once_at_the_callers_line_and_fail_strict(env: Env) -> None:
    extra = {"TILELANG_HOSTCG_ONLY": "hcgc-alpha,hcgc-bta",
             "TILELANG_HOSTCG_DISABLE": "hcgc-alpha:cdua",
             "TILELANG_HOSTCG_PREFER": "tset=beta"}
    proc = env.run(["-c", RESOLVE], extra)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert lines[0] == "alpha-fast"  # hcgc-beta is not allowed: the typo names nothing
    warned = [line for line in lines[1:] if line.startswith("ControlPluginWarning")]
    assert len(warned) == 3, lines  # each once, though resolved three times
    assert all(w.split(" | ")[1] == "<string>" for w in warned), warned  # the user's line
    text = " ".join(warned)
    assert "TILELANG_HOSTCG_ONLY=hcgc-bta" in text and "did you mean 'hcgc-beta'?" in text
    assert "TILELANG_HOSTCG_DISABLE=hcgc-alpha:cdua" in text and "did you mean 'cuda'?" in text
    assert "TILELANG_HOSTCG_PREFER=tset=beta" in text and "did you mean 'test'?" in text
    doc = env.cli_json("check", extra=extra)
    assert doc["ok"] is True
    assert len([p for p in doc["problems"] if p["code"] == "control"]) == 3, doc["problems"]
    strict = env.cli_json("check", "--strict", extra=extra, expect=1)
    assert {p["code"] for p in strict["problems"]} == {"control"}

@pytest.mark.slow
def test_check_lists_control_problems_and_strict_fails(env: Env) -> None:
    extra = {"TILELANG_HOSTCG_DISABLE": "hcgc-alpha:cdua,hcgc-gamma",
             "TILELANG_HOSTCG_PREFER": "test=beta,tset=beta,c=nope"}
    doc = env.cli_json("check", extra=extra)
    assert doc["ok"] is True
    controls = [p for p in doc["problems"] if p["code"] == "control"]
    messages = " ".join(p["message"] for p in controls)
    assert len(controls) == 4, controls
    assert all(p["severity"] == "warning" for p in controls)
    assert "'hcgc-alpha' advertises no kind 'cdua' (did you mean 'cuda'?)" in messages
    assert "no installed distribution 'hcgc-gamma'" in messages
    assert "host kind 'tset' (did you mean 'test'?)" in messages
    assert "kind 'c' has no codegen named 'nope'" in messages
    assert not [p for p in doc["problems"] if p["code"] == "plugin-warning"]  # not twice
    strict = env.cli_json("check", "--strict", extra=extra, expect=1)
    assert {p["code"] for p in strict["problems"]} == {"control"}
    assert env.cli_json("check", "--strict", extra={"TILELANG_HOSTCG_PREFER": "test=beta"})["ok"]


@pytest.mark.slow
def test_explain_shows_every_control_that_touched_the_answer(env: Env) -> None:
    doc = env.cli_json("explain", "cuda", "--host", '{"kind": "test"}', extra={
        "TILELANG_HOSTCG_PREFER": "test=beta", "TILELANG_HOSTCG_DISABLE": "hcgc-alpha:cuda"})
    assert doc["codegen"]["name"] == "beta"
    effects = {(c["variable"], c["item"]): c["effect"] for c in doc["controls"]}
    assert "over priority" in effects[("TILELANG_HOSTCG_PREFER", "test=beta")]
    assert "'cuda = hcgc_alpha:HOOKS'" in effects[("TILELANG_HOSTCG_DISABLE", "hcgc-alpha:cuda")]

    missing = env.cli_json("explain", "test", extra={"TILELANG_HOSTCG_PREFER": "test=nope"})
    (control,) = missing["controls"]
    assert "kind 'test' has no codegen named 'nope'" in control["effect"]  # the words check uses
    assert "The preference has no effect" in control["effect"]
    proc = env.run(["-m", "tilelang_hostcg", "explain", "test"],
                   {"TILELANG_HOSTCG_PREFER": "test=nope"})
    assert b"Controls that touched the answer:" in proc.stdout
    assert b"TILELANG_HOSTCG_PREFER=test=nope" in proc.stdout


# ``check`` (which imports TVM) once per variable, in one fresh process per value: the
# value arrives as raw bytes in the process environment, and each run has it under one
# variable, the others as before (set through ``os.environb``, which decodes it as the
# interpreter does at start). ``list`` runs in a fresh process per variable.
CHECK_EACH = """
import contextlib, io, json, os, sys
from tilelang_hostcg.cli import main
value = os.environb.pop(b"HCG_CONTROL_VALUE")
docs = {}
for variable in sys.argv[1:]:
    key = os.fsencode(variable)
    before = os.environb.get(key)
    os.environb[key] = value
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        status = main(["check", "--json"])
    if before is None:
        del os.environb[key]
    else:
        os.environb[key] = before
    docs[variable] = [status, stdout.getvalue()]
print(json.dumps(docs))
"""
VARIABLES = ("TILELANG_HOSTCG_DISABLE", "TILELANG_HOSTCG_ONLY", "TILELANG_HOSTCG_PREFER")


@pytest.mark.slow
@pytest.mark.parametrize("value", [
    b"hcgc-alpha,\xff\xfe", b"\xc3\x28", b"a" * 100_000, b"hcgc-alpha;;;hcgc-beta",
    b"  ,\t,\n", b"hcgc-alpha:\xe9",
])
def test_any_bytes_in_a_control_give_a_clear_message(env: Env, value: bytes) -> None:
    proc = env.run(["-c", CHECK_EACH, *VARIABLES], {"HCG_CONTROL_VALUE": value})
    assert proc.returncode == 0, proc.stderr
    checked = json.loads(proc.stdout)
    assert sorted(checked) == sorted(VARIABLES)
    for variable in VARIABLES:
        status, stdout = checked[variable]
        assert status in (0, 1), (variable, stdout)
        doc = json.loads(stdout)
        text = " ".join(p["message"] for p in doc["problems"] if p["code"] == "control")
        if value.strip(b" ,\t\n"):
            assert variable in text, (variable, value[:20], doc["problems"])
        listed = env.run(["-m", "tilelang_hostcg", "list"], {variable: value})
        assert listed.returncode == 0, listed.stderr


@pytest.mark.slow
@pytest.mark.parametrize("terminal", [{"PYTHONIOENCODING": "ascii"},
                                      {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0"}])
def test_names_print_on_any_terminal(env: Env, terminal: dict[str, str]) -> None:
    proc = env.run(["-m", "tilelang_hostcg", "list", "--load"], terminal)
    assert proc.returncode == 0, proc.stderr
    assert b"alpha-\\xe9t\\xe9" in proc.stdout  # the non-ASCII codegen name, escaped
    proc = env.run(["-m", "tilelang_hostcg", "check"],
                   {**terminal, "TILELANG_HOSTCG_PREFER": "test=\u00e9t\u00e9"})
    assert proc.returncode == 0, proc.stderr
    assert b"has no codegen named" in proc.stdout


def test_a_suggested_value_keeps_what_is_set() -> None:
    from tilelang_hostcg.discovery._controls import ENV_DISABLE, ENV_ONLY, ENV_PREFER

    controls = Controls.from_environ({"TILELANG_HOSTCG_DISABLE": "Acme_HostCG",
                                      "TILELANG_HOSTCG_ONLY": "hcgt-a",
                                      "TILELANG_HOSTCG_PREFER": "llvm=fast,c=old"})
    assert controls.suggest(ENV_DISABLE, "na-marker") == "TILELANG_HOSTCG_DISABLE=acme-hostcg,na-marker"
    assert controls.suggest(ENV_DISABLE, "acme-hostcg") == "TILELANG_HOSTCG_DISABLE=acme-hostcg"
    assert controls.suggest(ENV_DISABLE, "NA_Marker:cuda") == (
        "TILELANG_HOSTCG_DISABLE=acme-hostcg,na-marker:cuda")
    assert controls.suggest(ENV_ONLY, "hcgt-b") == "TILELANG_HOSTCG_ONLY=hcgt-a,hcgt-b"
    assert controls.suggest(ENV_PREFER, "c=new") == "TILELANG_HOSTCG_PREFER=llvm=fast,c=new"
    assert Controls().suggest(ENV_DISABLE, "x") == "TILELANG_HOSTCG_DISABLE=x"

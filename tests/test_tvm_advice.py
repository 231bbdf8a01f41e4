"""What an apache-tvm user is told, with a pip-installed plugin whose ``llvm`` codegen raises:
the note naming the codegen, its distribution and the controls that skip it reaches the caller
on every routed path (``tvm.compile``, ``tvm.tirx.build`` and the ``tirx.build`` global
function, whose FFI boundary drops ``__notes__``); each ``TILELANG_HOSTCG_PREFER`` the note
suggests is one the command line knows, and works as written; under
``TILELANG_HOSTCG_AUTO_INSTALL=0``, ``explain`` says that TVM builds stock host code."""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .plugin_factory import Plugin, install, module

RAISING = module('''
def build(mod, target_host):
    raise RuntimeError("raising on purpose")


hc.register_host_codegen("llvm", hc.HostCodegen("raising_llvm", build, priority=10))
''')

PROGRAM = """\
import json
import tvm
from tvm.script import tirx as T
from tvm.target import Target


@T.prim_func
def fill(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = T.float32(2)


builds = {"compile": lambda: tvm.compile(fill, target="llvm"),
          "tirx.build": lambda: tvm.tirx.build(fill, target="llvm"),
          "global": lambda: tvm.get_global_func("tirx.build")(fill, Target("llvm"), "default")}
out = {}
for how, build in builds.items():
    try:
        build()
        out[how] = None
    except Exception as exc:
        out[how] = {"type": type(exc).__name__, "message": str(exc),
                    "notes": getattr(exc, "__notes__", [])}
print(json.dumps(out))
"""
NOTE = ("raised by host codegen 'raising_llvm' for target kind 'llvm' (distribution "
        "'hcgt-raising' 1.0, entry point 'llvm = hcgt_raising' in group 'tilelang.host_codegen')")


@pytest.fixture(scope="module")
def env(environments: Environments, tmp_path_factory: pytest.TempPathFactory) -> PluginEnvironment:
    env = environments.new("tvm-advice")
    install(env, tmp_path_factory.mktemp("tvm-advice"), [Plugin(
        "hcgt-raising", codegens={"llvm": "hcgt_raising"}, files={"hcgt_raising.py": RAISING})])
    return env


def run(env: PluginEnvironment, controls: dict[str, str] | None = None) -> Any:
    script = env.path / "advice_program.py"
    script.write_text(PROGRAM)
    proc = subprocess.run([env.python, str(script)], capture_output=True, text=True,
                          env=env.environ(controls), cwd=env.path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cli(env: PluginEnvironment, *argv: str, controls: dict[str, str] | None = None) -> Any:
    proc = env.command(*argv, env=controls, cwd=env.path)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return json.loads(proc.stdout) if "--json" in argv else proc.stdout


@pytest.fixture(scope="module")
def failed(env: PluginEnvironment) -> Any:
    return run(env)


def test_errors_survive_every_boundary_tvm(failed: Any) -> None:
    assert set(failed) == {"compile", "tirx.build", "global"}
    for how, error in failed.items():
        shown = "\n".join([error["message"], *error["notes"]])
        assert "raising on purpose" in error["message"], (how, error)
        assert NOTE in shown and "TILELANG_HOSTCG_DISABLE=hcgt-raising:llvm" in shown, (how, error)
    # Across the FFI boundary the note is in the message itself; elsewhere it is a note.
    assert NOTE in failed["global"]["message"] and failed["global"]["notes"] == []
    assert failed["compile"]["message"] == "raising on purpose"


def test_prefer_advice_names_a_codegen_check_knows_tvm(env: PluginEnvironment, failed: Any) -> None:
    note = "\n".join(failed["compile"]["notes"])
    suggested = re.findall(r"TILELANG_HOSTCG_PREFER=(\S+?=[\w.-]+)", note)
    assert "llvm=apache-tvm-llvm" in suggested, note  # TVM's own default, as routed builds have it
    for value in suggested:
        controls = {"TILELANG_HOSTCG_PREFER": value}
        checked = cli(env, "check", "--json", controls=controls)
        assert [p for p in checked["problems"] if p["code"] == "control"] == [], (value, checked["problems"])
        explained = cli(env, "explain", "llvm", "--json", controls=controls)
        assert explained["codegen"]["name"] == value.partition("=")[2], value
        assert run(env, controls)["compile"] is None, value  # followed as written, the build works


def test_explain_says_tvm_builds_stock_host_code_when_activation_is_off(env: PluginEnvironment) -> None:
    off = {"TILELANG_HOSTCG_AUTO_INSTALL": "0"}
    text = cli(env, "explain", "llvm", controls=off)
    assert "TILELANG_HOSTCG_AUTO_INSTALL=0: activation is off: TVM and TileLang build stock host code" in text
    doc = cli(env, "explain", "llvm", "--json", controls=off)
    assert [c["variable"] for c in doc["controls"]] == ["TILELANG_HOSTCG_AUTO_INSTALL"]
    routed = cli(env, "explain", "llvm", "--json")
    assert "TILELANG_HOSTCG_AUTO_INSTALL" not in [c["variable"] for c in routed["controls"]]


def test_the_note_is_one_on_python_310_too(failed: Any) -> None:
    """``add_note`` joins the message on 3.10 (it has no ``__notes__`` display): the FFI's
    message gives the note once, not twice."""
    assert failed["global"]["message"].count(NOTE) == 1

"""``check``'s probe build under plugins that misbehave, really installed with real apache-tvm: a ``c``
codegen that raises, returns no runtime module, hangs, calls ``sys.exit(0)`` or ``os._exit(0)``, or
prints while it builds. The probe runs in a process of its own, so none of them ends ``check``, hangs
it or makes it pass: each fails the probe, named (plugin, codegen, error) in the text and in the JSON
document, and fails ``--strict``. A plugin that prints while it loads changes no document: ``check --json`` is the same
run after run, and its ``Client:`` line and the JSON ``describe`` say the same.

Every test runs ``python -m tilelang_hostcg`` in fresh processes of one environment made for this
module; ``TILELANG_HOSTCG_ONLY`` picks the plugin a test sees."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .plugin_factory import Plugin, install, module

pytestmark = pytest.mark.slow

# Each plugin's ``c`` codegen outranks the core's (priority 0), so the probe build (a TIR function
# for a ``c`` host) calls it; ``working`` builds with TVM's own ``target.build.c``.
_CODEGEN = '''
import os, sys, time

_TVM_C = hc.global_func_host_codegen("target.build.c")


def working(mod, target):
    return _TVM_C(mod, target)


def raises(mod, target):
    raise RuntimeError("no driver for the probe")


def hangs(mod, target):
    time.sleep(3600)


def exits(mod, target):
    sys.exit(0)


def ends(mod, target):
    os._exit(0)


def returns(mod, target):
    return mod  # the IRModule it was given: no runtime module


def prints(mod, target):
    print("building host code")
    return _TVM_C(mod, target)
'''
BEHAVIOURS = ("raises", "returns", "hangs", "exits", "ends", "prints")


def _plugin(behaviour: str, body: str = "") -> Plugin:
    name = f"hcgt-probe-{behaviour}"
    source = module(_CODEGEN + body + f"\nCODEGEN = hc.HostCodegen({behaviour + '-c'!r}, {behaviour}, priority=50)\n")
    return Plugin(name, codegens={"c": f"{name.replace('-', '_')}:CODEGEN"},
                  files={f"{name.replace('-', '_')}.py": source})


# Prints while it loads (to sys.stdout, sys.__stdout__ and descriptor 1); its codegen works.
LOUD = _plugin("working", '''
print("loud: to sys.stdout")
sys.__stdout__.write("loud: to sys.__stdout__\\n")
sys.__stdout__.flush()
os.write(1, b"loud: to fd 1\\n")
''')


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> PluginEnvironment:
    environment = environments.new("probe-isolation")
    install(environment, tmp_path_factory.mktemp("probe-isolation"), [*map(_plugin, BEHAVIOURS), LOUD])
    return environment


def _check(env: PluginEnvironment, behaviour: str, *argv: str, extra: dict[str, str] | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return env.command("check", *argv, env={"TILELANG_HOSTCG_ONLY": f"hcgt-probe-{behaviour}", **(extra or {})},
                       cwd=env.path, timeout=timeout)


def _failure(env: PluginEnvironment, behaviour: str, *argv: str, expect: int = 1,
             extra: dict[str, str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``check --json`` of ``behaviour``'s plugin: the document and its one ``probe-failed`` problem."""
    proc = _check(env, behaviour, "--json", *argv, extra=extra)
    assert proc.returncode == expect, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    (problem,) = [p for p in doc["problems"] if p["code"] == "probe-failed"]
    assert (problem["distribution"], problem["version"], problem["kind"]) == (f"hcgt-probe-{behaviour}", "1.0", "c")
    assert problem["group"] == "tilelang.host_codegen" and problem["entry_point"].startswith("c = hcgt_probe_")
    assert f"codegen '{behaviour}-c' for kind 'c'" in problem["message"]
    assert f"TILELANG_HOSTCG_DISABLE=hcgt-probe-{behaviour}" in problem["message"]
    probe = doc["client"]["probe"]
    assert probe["confirmed"] is False and "confirmed by a probe build" not in doc["client"]["describe"]
    assert doc["client"]["describe"].endswith(f"(not confirmed: {probe['text']})")
    return doc, problem


def test_a_codegen_that_raises_fails_check_named(env: PluginEnvironment) -> None:
    doc, problem = _failure(env, "raises")
    assert problem["severity"] == "error" and doc["ok"] is False
    assert "RuntimeError: no driver for the probe" in problem["message"]
    strict = _check(env, "raises", "--strict")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "error [probe-failed] the probe build failed in codegen 'raises-c'" in strict.stdout
    assert "(not confirmed: the probe build failed in codegen 'raises-c'" in strict.stdout


def test_a_codegen_that_returns_no_runtime_module_fails_check_named(env: PluginEnvironment) -> None:
    _, problem = _failure(env, "returns")
    assert problem["severity"] == "error" and "returned a IRModule instead of a runtime Module" in problem["message"]


def test_a_codegen_that_calls_sys_exit_cannot_end_the_gate(env: PluginEnvironment) -> None:
    strict = _check(env, "exits", "--strict")
    assert strict.returncode == 1 and strict.stdout, (strict.stdout, strict.stderr)
    assert "error [probe-failed]" in strict.stdout and "sys.exit(0) was called" in strict.stdout
    _, problem = _failure(env, "exits")
    assert problem["severity"] == "error"


def test_a_codegen_that_ends_the_process_fails_the_probe(env: PluginEnvironment) -> None:
    _, problem = _failure(env, "ends")
    assert problem["severity"] == "error" and "its process ended (exit status 0) before it reported" in problem[
        "message"]


def test_a_codegen_that_hangs_fails_within_the_bound_named(env: PluginEnvironment) -> None:
    # Bounds that leave a busy machine time to import TVM in the probe process before the codegen hangs.
    start = time.monotonic()
    strict = _check(env, "hangs", "--strict", "--probe-timeout", "30", timeout=280)
    assert time.monotonic() - start < 240  # the plugin sleeps an hour
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert ("error [probe-failed] the probe build failed in codegen 'hangs-c' for kind 'c' (distribution "
            "'hcgt-probe-hangs' 1.0") in strict.stdout
    assert "it did not finish within 30 s (the bound --probe-timeout gives)" in strict.stdout
    # The variable gives the bound too.
    _, problem = _failure(env, "hangs", extra={"TILELANG_HOSTCG_PROBE_TIMEOUT": "20.5"})
    assert "within 20.5 s (the bound TILELANG_HOSTCG_PROBE_TIMEOUT gives)" in problem["message"]
    assert problem["severity"] == "error"


@pytest.mark.parametrize("argv, extra, named", [
    (("--probe-timeout", "soon"), {}, "--probe-timeout='soon'"),
    (("--probe-timeout", "0"), {}, "--probe-timeout='0'"),
    ((), {"TILELANG_HOSTCG_PROBE_TIMEOUT": "-5"}, "TILELANG_HOSTCG_PROBE_TIMEOUT='-5'"),
    (("--probe-timeout", "30"), {"TILELANG_HOSTCG_PROBE_TIMEOUT": "inf"}, "TILELANG_HOSTCG_PROBE_TIMEOUT='inf'"),
], ids=["flag-word", "flag-zero", "variable-negative", "variable-infinite"])
def test_a_bad_bound_is_a_usage_error(env: PluginEnvironment, argv: tuple[str, ...], extra: dict[str, str],
                                      named: str) -> None:
    proc = _check(env, "raises", "--json", *argv, extra=extra)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["type"] == "UsageError" and named in error["message"]
    assert "a number of seconds above 0 and at most 86400" in error["message"]
    assert named in proc.stderr


def test_a_codegen_that_prints_while_it_builds_fails_strict(env: PluginEnvironment) -> None:
    doc, problem = _failure(env, "prints", expect=0)
    assert problem["severity"] == "warning" and doc["ok"] is True
    assert "it wrote 19 bytes to stdout while it ran" in problem["message"]
    strict = _check(env, "prints", "--strict")
    assert strict.returncode == 1 and "error [probe-failed]" in strict.stdout, strict.stdout
    assert "building host code" in strict.stderr and "building host code" not in strict.stdout


def test_documents_are_the_same_run_after_run_and_say_what_the_text_says(env: PluginEnvironment) -> None:
    runs = [_check(env, "working", *argv) for argv in (("--json",), ("--json",), ("--strict", "--json"),
                                                       ("--strict", "--json"), ())]
    assert [proc.returncode for proc in runs] == [0] * len(runs), [p.stdout + p.stderr for p in runs]
    plain, again, strict, strict_again = (json.loads(proc.stdout) for proc in runs[:4])
    assert plain == again and strict == strict_again
    assert plain["client"]["probe"] == {"called": True, "confirmed": True, "hints": [],
                                        "text": "confirmed by a probe build"}
    assert plain["client"]["describe"] == "TVM integration (tilelang_hostcg.tvm) (confirmed by a probe build)"
    assert f"Client: {plain['client']['describe']}\n" in runs[4].stdout
    assert [item["stdout"] for item in plain["printed"]] == [len("loud: to sys.stdout\n") + len(
        "loud: to sys.__stdout__\n") + len("loud: to fd 1\n")]
    for proc in runs:
        assert "loud:" not in proc.stdout and "loud: to fd 1" in proc.stderr


def test_a_probe_bound_in_the_environment_is_a_known_control(env: PluginEnvironment, tmp_path: Path) -> None:
    """The variable is no unknown ``TILELANG_HOSTCG_*`` variable; a bad value warns in a program too."""
    doc = json.loads(_check(env, "working", "--json", extra={"TILELANG_HOSTCG_PROBE_TIMEOUT": "90"}).stdout)
    assert doc["ok"] and not [p for p in doc["problems"] if p["code"] == "control"], doc["problems"]
    proc = env.python_run("import warnings, tilelang_hostcg as hc\nwarnings.simplefilter('always')\n"
                          "hc.resolve_host_codegen('c')\n", env={"TILELANG_HOSTCG_PROBE_TIMEOUT": "two minutes",
                                                                 "TILELANG_HOSTCG_ONLY": "hcgt-probe-working"},
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "TILELANG_HOSTCG_PROBE_TIMEOUT='two minutes' is not a time bound" in proc.stderr

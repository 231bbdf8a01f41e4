"""Concurrent first use while another thread is still importing TVM (or TileLang, whose
import brings its TVM): both threads succeed, and so does every later call.

Each test runs a fresh interpreter in which one thread imports TVM (or TileLang) while a
second thread, started as soon as the module appears in ``sys.modules`` (half imported),
makes its first call of the registry.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .tilelang_env import TileLangEnv, TileLangEnvs, params

RACE = """
import json, sys, threading, time
import tilelang_hostcg as hc

MODULE, KIND = {module!r}, {kind!r}
out = {{"errors": []}}


def guarded(fn):
    def run():
        try:
            fn()
        except BaseException as exc:  # reported below
            out["errors"].append(f"{{type(exc).__name__}}: {{exc}}"[:400])
    return run


@guarded
def importer():
    __import__(MODULE)


@guarded
def first_use():
    while MODULE not in sys.modules:
        time.sleep(0.0002)
    module = sys.modules[MODULE]
    out["half_imported"] = bool(getattr(module.__spec__, "_initializing", False))
    out["first"] = hc.resolve_host_codegen(KIND).name


threads = [threading.Thread(target=first_use), threading.Thread(target=importer)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join(120)
try:
    out["later"] = hc.resolve_host_codegen(KIND).name
    out["target"] = str(hc.parse_target(KIND).kind.name)
except Exception as exc:
    out["errors"].append(f"later: {{type(exc).__name__}}: {{exc}}"[:400])
print(json.dumps(out))
"""


def _result(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return doc


def test_first_use_while_tvm_is_being_imported() -> None:
    proc = subprocess.run([sys.executable, "-c", RACE.format(module="tvm", kind="llvm")],
                          capture_output=True, text=True, timeout=300)
    result = _result(proc)
    assert result["half_imported"] is True  # the race really happened
    assert result["errors"] == [], result
    assert result["first"] == result["later"] == "llvm"
    assert "circular import" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


@pytest.fixture(scope="module", params=params("0.1.15"))
def env(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs) -> TileLangEnv:
    return tilelang_envs[request.param].env


@pytest.mark.slow
@pytest.mark.tilelang
def test_first_use_while_tilelang_is_being_imported(env: TileLangEnv) -> None:
    proc = env.run(RACE.format(module="tilelang", kind="c"))
    result = _result(proc)
    assert result["half_imported"] is True
    assert result["errors"] == [], result
    assert result["first"] == result["later"] == "c" and result["target"] == "c"
    assert "Traceback" not in proc.stderr, proc.stderr

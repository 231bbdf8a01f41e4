"""``tilelang_hostcg.tvm.install()``/``uninstall()`` from one thread while others compile with
apache-tvm: no compile fails, and after the last ``install()`` builds are routed (real TVM builds
in a fresh interpreter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = '''
import json, sys, threading, time
import tvm
from tvm.target import Target
from examples.example_kernels import gpu_vector_add, vector_add
import tilelang_hostcg as hc
import tilelang_hostcg.tvm as integration

COMPILERS, TOGGLES = 3, {toggles}
errors, compiled = [], [0]
done = threading.Event()

def compile_loop(i):
    n = 0
    while not done.is_set():
        try:
            if i == 2 and n % 3 == 2:  # cuda_host: TVM's default is its kind's one codegen
                tvm.tirx.build(gpu_vector_add, target=Target({{"kind": "cuda", "arch": "sm_90a"}}, host="cuda_host"))
            elif n % 2:
                tvm.tirx.build(vector_add, target="c" if i % 2 else "llvm")
            else:
                tvm.compile(vector_add, target="llvm" if i % 2 else "c")
            compiled[0] += 1
        except Exception as exc:
            errors.append(f"{{type(exc).__name__}}: {{exc}}"[:300])
        n += 1

def toggle_loop():
    for k in range(TOGGLES):
        integration.install()
        time.sleep(0.001 * (k % 4))
        integration.uninstall()
        time.sleep(0.001 * (k % 3))
    integration.install()
    done.set()

threads = [threading.Thread(target=compile_loop, args=(i,)) for i in range(COMPILERS)]
threads.append(threading.Thread(target=toggle_loop))
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=300)
alive = any(t.is_alive() for t in threads)
done.set()

# After the last install(): a build is routed, through TVM's defaults registered once.
calls = []
llvm = tvm.get_global_func("target.build.llvm")
hc.default_registry().register_host_codegen(
    "llvm", hc.HostCodegen("race-probe", lambda mod, target: calls.append(1) or llvm(mod, target), priority=1))
after = []
for target in ("llvm", "c"):
    try:
        tvm.compile(vector_add, target=target)
    except Exception as exc:
        after.append(f"{{type(exc).__name__}}: {{exc}}"[:300])
regs = sorted(r.name for r in hc.default_registry().registrations("tilelang.host_codegen")
              if r.name.startswith("apache-tvm-"))
print(json.dumps({{"alive": alive, "errors": errors, "compiled": compiled[0], "after": after,
                  "installed": integration.is_installed(), "hooked": len(calls), "regs": regs}}))
'''


def _run(toggles: int) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TILELANG_HOSTCG", "PYTHONPATH"))}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(PROGRAM.format(toggles=toggles))],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=400)
    assert proc.returncode == 0, f"program failed:\n{proc.stdout}\n{proc.stderr}"
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
@pytest.mark.parametrize("toggles", [60, 200])
def test_install_and_uninstall_while_three_threads_compile(toggles):
    out = _run(toggles)
    assert out["alive"] is False, "threads deadlocked"
    assert out["errors"] == [], f"{len(out['errors'])} of {out['compiled']} compiles failed"  # type: ignore[arg-type]
    assert out["compiled"] > 0  # the compilers really compiled during the toggling
    assert out["after"] == [] and out["installed"] is True
    assert out["hooked"] == 1  # the llvm compile after the last install() went through the registry
    assert out["regs"] == ["apache-tvm-c", "apache-tvm-cuda_host", "apache-tvm-llvm"]  # each once, left by nobody


OVERTAKEN = '''
import json, sys, threading
import tvm
from tvm.target import Target
from examples.example_kernels import gpu_vector_add
import tilelang_hostcg.tvm as integration

build = sys.modules["tvm.tirx.build"]
codegen_build = build.codegen_build

def profiled(mod, target):
    # A profiler's wrapper of TVM's device build; another thread uninstalls meanwhile.
    worker = threading.Thread(target=integration.uninstall)
    worker.start()
    worker.join()
    return codegen_build(mod, target)

integration.install()
build.codegen_build = profiled
errors, kinds = [], []
try:
    # cuda_host: TVM's default is the one codegen of its kind (llvm and c have the built-in plugins too)
    mod = tvm.tirx.build(gpu_vector_add, target=Target({"kind": "cuda", "arch": "sm_90a"}, host="cuda_host"))
    kinds = [m.kind for m in (mod, *mod.imports)]
except Exception as exc:
    errors.append(f"{type(exc).__name__}: {exc}"[:400])
build.codegen_build = codegen_build
print(json.dumps({"errors": errors, "kinds": kinds, "installed": integration.is_installed(),
                  "stock": build.tir_to_runtime.__module__ == "tvm.tirx.build"}))
'''


@pytest.mark.slow
def test_a_build_that_uninstall_overtook_is_built_by_tvms_original():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TILELANG_HOSTCG", "PYTHONPATH"))}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", OVERTAKEN], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 0, f"program failed:\n{proc.stdout}\n{proc.stderr}"
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["errors"] == []
    assert out["kinds"] == ["c", "cuda"]  # the host and the device module, built
    assert out["installed"] is False and out["stock"] is True

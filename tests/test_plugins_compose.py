"""All first-party plugins installed together build host code that compiles and runs.

One throwaway environment (layered over the running one, apache-tvm) gets every
distribution under ``plugins/``, its wheel (``first_party_wheels``) installed by pip.
Host code is then built in fresh processes for ``llvm``, ``c`` and ``cuda_host`` hosts
with every plugin's codegens and hooks in play (the stamp plugin's ``cuda`` hook and
``c`` codegen among them): CPU modules run, the ``c`` host's C compiles and runs, and the
``cuda_host`` translation unit compiles with ``nvcc -c`` where nvcc exists (no GPU is
needed to compile).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import need_tool

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = sorted(p.name for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").exists())


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory,
        first_party_wheels: dict[str, Path]) -> PluginEnvironment:
    environment = PluginEnvironment(tmp_path_factory.mktemp("compose") / "venv")
    environment.pip("install", "-q", "--no-deps", "--no-index",
                    *(str(first_party_wheels[name]) for name in PLUGINS))
    return environment


def _run(env: PluginEnvironment, code: str, *args: str) -> dict:  # type: ignore[type-arg]
    proc = env.python_run(code, *args, cwd=ROOT)  # from the root: tests.kernels imports
    assert proc.returncode == 0, f"subprocess failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_every_first_party_plugin_is_installed(env: PluginEnvironment) -> None:
    assert {"tilelang-hostcg-cuda", "tilelang-hostcg-rocm", "tilelang-hostcg-stamp",
            "tilelang-hostcg-template"} <= set(PLUGINS)
    proc = env.command("check", "--strict", "--require", "cuda_host", "--require", "c",
                       "--require-hook", "cuda", cwd=ROOT / "plugins")
    assert proc.returncode == 0, proc.stdout + proc.stderr


CPU = """
import json, sys, tempfile
from pathlib import Path
import numpy as np
import tvm
import tilelang_hostcg as hostcg
from tests.kernels import vector_add

out = {}
a = np.arange(16, dtype=np.float32)
b = np.full(16, 0.5, dtype=np.float32)
for host in ("llvm", "c"):
    module = hostcg.build(vector_add, host)
    if host == "c":
        out["c_source_has_stamp"] = "tilelang_hostcg_stamp_codegen" in module.inspect_source()
        library = Path(tempfile.mkdtemp()) / "vector_add.so"
        module.export_library(str(library))  # compiles the emitted C with the C compiler
        module = tvm.runtime.load_module(str(library))
    c = tvm.runtime.tensor(np.zeros(16, dtype=np.float32))
    module["vector_add"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
    out[host] = bool(np.allclose(c.numpy(), a + b))
out["c_codegen"] = hostcg.resolve_host_codegen("c").name
print(json.dumps(out))
"""


def test_cpu_hosts_build_and_run(env: PluginEnvironment) -> None:
    out = _run(env, CPU)
    assert out == {"llvm": True, "c": True, "c_source_has_stamp": True, "c_codegen": "stamp_c"}


CUDA = """
import json, sys
import tvm
from tvm.backend.cuda import export_cuda_host
from tvm.target import Target
import tilelang_hostcg as hostcg
from tests.kernels import gpu_vector_add

sm90 = Target({"kind": "cuda", "arch": "sm_90"})
out = {"hooks": [h.name for h in hostcg.default_registry().matching_hooks(sm90)]}
for host in ("llvm", "c", "cuda_host"):
    module = hostcg.build(gpu_vector_add, Target(sm90, host=host))
    out[host] = [module.kind, [m.kind for m in module.imports]]
    if host == "c":
        out["c_has_hook_stamp"] = "tilelang_hostcg_stamp_hook" in module.inspect_source()
source = export_cuda_host(module)
open(sys.argv[1], "w").write(source)
from tvm_ffi import libinfo
print(json.dumps({**out, "includes": [libinfo.find_include_path(),
                                      libinfo.find_dlpack_include_path()]}))
"""


def test_cuda_hosts_build_and_the_cuda_host_unit_compiles(env: PluginEnvironment,
                                                          tmp_path: Path) -> None:
    import subprocess

    unit = tmp_path / "vector_add.cu"
    out = _run(env, CUDA, str(unit))
    assert out["hooks"] == ["cuda_host_pairing", "cuda_host_requirements", "stamp_cuda"]
    assert out["llvm"][0] == "llvm" and out["c"][0] == "c" and out["cuda_host"][0] == "c"
    assert out["c_has_hook_stamp"] is True
    source = unit.read_text()
    assert "int32_t tilelang_hostcg_stamp_hook(" in source  # what cuda_host wraps compiles
    nvcc = need_tool("nvcc", why="the cuda_host unit built above is compiled with it")
    proc = subprocess.run([nvcc, "-c", "-std=c++17", "-arch=sm_90",
                           *(f"-I{path}" for path in dict.fromkeys(out["includes"])),
                           "-o", str(tmp_path / "vector_add.o"), str(unit)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "vector_add.o").stat().st_size > 0


TIES = """
import json
import tilelang_hostcg as hostcg
from tvm.target import Target

reg = hostcg.default_registry()
reg.load_all()
first_party = [r for r in reg.registrations() if (r.origin.distribution or "").startswith("tilelang-hostcg-")]
acme = Target({"kind": "llvm", "mtriple": "x86_64-acme-linux-gnu"})
print(json.dumps({
    "codegens": sorted([r.kind, r.priority, r.origin.distribution, r.name] for r in first_party),
    "acme": hostcg.resolve_host_codegen(acme).name,
    "llvm": hostcg.resolve_host_codegen(Target("llvm")).name,
}))
"""


def test_no_two_first_party_codegens_tie(env: PluginEnvironment, tmp_path: Path) -> None:
    """Two first-party codegens of one kind never share a priority (the stamp plugin's serve every
    ``llvm`` and ``c`` host), so no target makes them tie; the template's own tests pass with the
    stamp plugin installed, as the guide's order (the README's install, then the template) has it."""
    out = _run(env, TIES)
    by_priority: dict[tuple[str, int], set[str]] = {}
    for kind, priority, distribution, _name in out["codegens"]:
        by_priority.setdefault((kind, priority), set()).add(distribution)
    assert {k: d for k, d in by_priority.items() if len(d) > 1} == {}, out["codegens"]
    assert ["llvm", 10, "tilelang-hostcg-stamp", "stamp_llvm"] in out["codegens"], out["codegens"]
    assert out["acme"] == "acme_llvm" and out["llvm"] == "stamp_llvm", out
    junit = tmp_path / "template.xml"
    proc = env.python_run("import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))", "-q", "-W", "error",
                          "-p", "no:cacheprovider", f"--junitxml={junit}",
                          str(ROOT / "plugins" / "tilelang-hostcg-template" / "tests"), cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "AmbiguousHostCodegenError" not in proc.stdout

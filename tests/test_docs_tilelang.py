"""Every code block of ``docs/authoring.md`` runs where TVM comes from TileLang (0.1.15).

The same runner as ``tests/test_docs.py``, over a TileLang environment: the guide's
commands run as written there (the core from its checkout, then ``pip install -e .``,
dependencies resolved from the index), its Python blocks run in fresh interpreters that
never ``import tilelang`` themselves, and its tests run under pytest with the project's
pytest plugin. Afterwards ``pip check`` is clean, nothing but the plugin and the core
changed (torch, TileLang, ``apache-tvm-ffi`` stay), and ``import tilelang`` works. The
environment has the stamp plugin, as ``docs/tilelang.md`` makes it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from .test_docs import GuideEnv, Plugin, run_the_guide, write_the_guides_plugin
from .tilelang_env import TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]


@pytest.fixture(scope="module", params=params("0.1.15"))
def tilelang_plugin(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                    tilelang_envs: TileLangEnvs) -> Iterator[Plugin]:
    env = tilelang_envs[request.param].env
    # The environment docs/tilelang.md makes, where the guide says to run it: the stamp plugin
    # installed (its c codegen serves every c host, its cuda hook every cuda target).
    env.pip("install", "-q", "--no-deps", str(tilelang_envs.wheels["tilelang-hostcg-stamp"]))
    yield Plugin(GuideEnv(env.path, env.environ),
                 write_the_guides_plugin(tmp_path_factory.mktemp("guide-tilelang")))
    # the environment is shared: leave it clean
    env.pip("uninstall", "-q", "-y", "acme-hostcg", "tilelang-hostcg-stamp")
    tilelang_envs.restore(request.param)  # the guide installed the core from the checkout


def test_every_block_of_the_guide_runs_with_tilelangs_tvm(tilelang_plugin: Plugin) -> None:
    run_the_guide(tilelang_plugin)
    proc = tilelang_plugin.env.command("list", cwd=tilelang_plugin.folder)
    assert "TVM in use: TVM bundled with tilelang 0.1.15" in proc.stdout, proc.stdout
    proc = tilelang_plugin.env.python_run("import tilelang; print(tilelang.__version__)")
    assert proc.returncode == 0 and "0.1.15" in proc.stdout, proc.stdout + proc.stderr
    # An unchanged TileLang program on a stock Hopper target runs the guide's hooks: both
    # on sm_90a, only the one for every cuda target on sm_80 (TileLang calls each hook's
    # apply, check_pairing, as the guide's plugin is installed: nothing is registered here).
    script = tilelang_plugin.folder.parent / "unchanged_program.py"
    script.write_text(UNCHANGED_PROGRAM, encoding="utf-8")
    proc = tilelang_plugin.env.run(str(script), cwd=tilelang_plugin.folder.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = json.loads(proc.stdout.strip().splitlines()[-1])
    assert calls["sm_80"] >= 1 and calls["sm_90a"] == 2 * calls["sm_80"], calls


UNCHANGED_PROGRAM = """
import json
import sys

import tilelang
import tilelang.language as T
from tvm.target import Target


def elementwise(N=1024, block=256, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
    return main


calls = {}


def count(frame, event, arg):  # the guide's hook function running, seen from outside
    code = frame.f_code
    if event == "call" and code.co_name == "check_pairing" and code.co_filename.endswith("hooks.py"):
        calls[arch] = calls.get(arch, 0) + 1


for arch in ("sm_90a", "sm_80"):
    target = Target({"kind": "cuda", "arch": arch})
    calls[arch] = 0
    sys.setprofile(count)
    try:
        with target:
            tilelang.lower(elementwise(), target=target, enable_host_codegen=True)
    finally:
        sys.setprofile(None)
print(json.dumps(calls))
"""

"""The example plugin for TileLang users under apache-tvm: its codegen and hook decide
the host code of a real build, and it honours the plugin contract."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tilelang_hostcg.testing import PluginEnvironment

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def test_stamp_plugin_decides_host_code_under_apache_tvm(tmp_path):
    source = tmp_path / "tilelang-hostcg-stamp"
    shutil.copytree(ROOT / "plugins" / "tilelang-hostcg-stamp", source)
    env = PluginEnvironment(tmp_path / "venv")
    env.install(source)
    proc = env.python_run("""
        import json
        import tilelang_hostcg
        from tilelang_hostcg.testing import check_plugin
        from tvm.target import Target
        from tests.kernels import gpu_vector_add, vector_add

        kinds = check_plugin("tilelang-hostcg-stamp")
        host_only = tilelang_hostcg.build(vector_add, "c").inspect_source()
        with_device = tilelang_hostcg.build(
            gpu_vector_add, Target({"kind": "cuda", "arch": "sm_80"}, host="c")).inspect_source()
        names = ("tilelang_hostcg_stamp_codegen", "tilelang_hostcg_stamp_hook")
        print(json.dumps({"kinds": kinds, "host_only": [n in host_only for n in names],
                          "with_device": [n in with_device for n in names],
                          "chosen": tilelang_hostcg.resolve_host_codegen(Target("c")).name}))
    """, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["kinds"] == ["c", "cuda", "llvm"]
    assert out["chosen"] == "stamp_c"
    assert out["host_only"] == [True, False]  # the codegen, and no hook for a CPU-only build
    assert out["with_device"] == [True, True]  # the cuda hook too

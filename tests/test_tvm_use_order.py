"""Where a third-party plugin turns the TVM integration on, an answer never depends on use order:
``resolve_host_codegen(Target("llvm"))`` is TVM's own ``apache-tvm-llvm`` before the first
``tvm.compile`` as after it, whether TVM or ``tilelang_hostcg`` is imported first and whether the
default registry existed before ``import tvm``. An isolated ``Registry()`` gets no defaults, and
``uninstall()`` takes them back and stops adding them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .plugin_factory import Plugin, install, module

pytestmark = pytest.mark.slow

PROGRAM = """
import json
{first}
import tvm
import tilelang_hostcg as hc
from tvm import te
from tvm.target import Target

def answers():
    return [hc.resolve_host_codegen(Target("llvm")).name, hc.resolve_host_codegen("c").name,
            hc.allowed_host_codegens_for_target("llvm")]

before = answers()
A = te.placeholder((16,), name="A")
tvm.compile(te.create_prim_func([A, te.compute((16,), lambda i: A[i] * 2, name="B")]), target="llvm")
after = answers()
isolated = hc.Registry()
isolated.register_host_codegen("llvm", hc.HostCodegen("mine", lambda m, t: m))
alone = isolated.resolve_host_codegen("llvm").name
hc.tvm.uninstall()
gone = answers()
print(json.dumps({{"before": before, "after": after, "alone": alone, "gone": gone}}))
"""


@pytest.fixture(scope="module")
def env(environments: Environments, tmp_path_factory: pytest.TempPathFactory) -> PluginEnvironment:
    environment = environments.new("tvm-use-order")
    install(environment, tmp_path_factory.mktemp("tvm-use-order"), [Plugin(
        "hcgt-order-rocm", hooks={"rocm": "hcgt_order_rocm:HOOKS"},
        files={"hcgt_order_rocm.py": module("HOOKS = (_hook('rocm_mark'),)\n")})])
    return environment


@pytest.mark.parametrize("first", [
    "",  # tvm first
    "import tilelang_hostcg",  # the package first
    "import tilelang_hostcg as _hc; _hc.default_registry().resolution('c')",  # the registry before tvm
])
def test_the_answer_is_the_same_before_and_after_the_first_build(env: PluginEnvironment, first: str,
                                                                 tmp_path: Path) -> None:
    out = env.run_json(PROGRAM.format(first=first))
    assert out["before"] == out["after"], out
    assert out["before"][:2] == ["apache-tvm-llvm", "apache-tvm-c"], out
    assert out["alone"] == "mine"
    assert out["gone"][:2] == ["llvm", "c"], out  # uninstalled: the core's own again

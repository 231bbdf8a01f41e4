"""Where a third-party plugin turns the TVM integration on, an answer never depends on use order:
``resolve_host_codegen(Target("llvm"))`` is TVM's own ``apache-tvm-llvm`` before the first
``tvm.compile`` as after it, whether TVM or ``tilelang_hostcg`` is imported first and whether the
default registry existed (and answered) before ``import tvm``. An isolated ``Registry()`` gets no
defaults; ``install(registry=...)`` has them join that registry alone; ``uninstall()`` takes them
back and stops adding them, and a later ``install()`` brings them back before the next answer."""

from __future__ import annotations

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

def compile_once():
    A = te.placeholder((16,), name="A")
    tvm.compile(te.create_prim_func([A, te.compute((16,), lambda i: A[i] * 2, name="B")]), target="llvm")

before = answers()
compile_once()
after = answers()
isolated = hc.Registry()
isolated.register_host_codegen("llvm", hc.HostCodegen("mine", lambda m, t: m))
alone = isolated.resolve_host_codegen("llvm").name
hc.tvm.uninstall()
gone = answers()
hc.tvm.install()
back = answers()
compile_once()
again = answers()
print(json.dumps({{"before": before, "after": after, "alone": alone, "gone": gone, "back": back,
                  "again": again}}))
"""

GIVEN_REGISTRY = """
import json
import tilelang_hostcg as hc
from tvm.target import Target

hc.tvm.uninstall()  # activation's install, into the default registry
mine = hc.Registry(discover=True)
hc.tvm.install(registry=mine)
print(json.dumps({"mine": mine.resolve_host_codegen(Target("llvm")).name,
                  "default": hc.resolve_host_codegen(Target("llvm")).name}))
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
    "import tilelang_hostcg as _hc; _hc.default_registry().sources()",  # the registry made before tvm
    "import tilelang_hostcg as _hc; _hc.default_registry().resolution('c')",  # and answering (imports tvm)
])
def test_the_answer_is_the_same_before_and_after_the_first_build(env: PluginEnvironment, first: str) -> None:
    out = env.run_json(PROGRAM.format(first=first))
    assert out["before"] == out["after"], out
    assert out["before"][:2] == ["apache-tvm-llvm", "apache-tvm-c"], out
    assert out["alone"] == "mine"
    assert out["gone"][:2] == ["llvm", "c"], out  # uninstalled: the core's own again
    assert "apache-tvm-llvm" not in out["gone"][2], out
    assert out["back"] == out["again"] == out["before"], out  # installed again: before its first build too


def test_a_given_registry_gets_tvms_defaults_and_the_default_one_does_not(env: PluginEnvironment) -> None:
    out = env.run_json(GIVEN_REGISTRY)
    assert out == {"mine": "apache-tvm-llvm", "default": "llvm"}, out

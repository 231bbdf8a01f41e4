"""``import tvm`` with a routed third-party plugin installed: the route is in place right after it and
a build uses it, and it imports few of our modules (counted as :mod:`.import_cost` says; the promise
is at most :data:`.import_cost.TARGET`). A count, not a timing: the time is bench.py's (section 9)."""

from __future__ import annotations

from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .import_cost import PROGRAM, TARGET, summary
from .plugin_factory import Plugin, install, module

pytestmark = pytest.mark.slow

BUILD = """
import json
import tvm
from tvm import te
import tilelang_hostcg.tvm as client
A = te.placeholder((16,), name="A")
tvm.compile(te.create_prim_func([A, te.compute((16,), lambda i: A[i] * 2, name="B")]), target="llvm")
print(json.dumps({"calls": client.CLIENT.state.calls, "installed": client.is_installed()}))
"""

@pytest.fixture(scope="module")
def env(environments: Environments, tmp_path_factory: pytest.TempPathFactory) -> PluginEnvironment:
    environment = environments.new("tvm-import-cost")
    install(environment, tmp_path_factory.mktemp("tvm-import-cost"), [Plugin(
        "hcgt-cost-rocm", hooks={"rocm": "hcgt_cost_rocm:HOOKS"},
        files={"hcgt_cost_rocm.py": module("HOOKS = (_hook('rocm_cost'),)\n")})])
    return environment


@pytest.fixture(scope="module")
def counted(env: PluginEnvironment) -> dict[str, Any]:
    return env.run_json(PROGRAM)  # type: ignore[no-any-return]


def test_the_route_is_in_place_right_after_import_tvm_and_a_build_uses_it(
        env: PluginEnvironment, counted: dict[str, Any]) -> None:
    assert counted["state"] and counted["installed"], counted
    assert counted["warnings"] == [], counted
    built = env.run_json(BUILD)
    assert built == {"calls": 1, "installed": True}, built


def test_import_tvm_imports_at_most_the_promised_number_of_our_modules(counted: dict[str, Any]) -> None:
    """What activation needs: deciding (the controls, the one scan) and patching (the route, its watch,
    TVM's defaults joining); the warnings' classes and words come only with a warning."""
    assert "tilelang_hostcg.tvm._activation" in counted["modules"], counted  # our activation ran
    assert len(counted["modules"]) <= TARGET, summary(counted) + f": {counted['modules']}"
    for heavy in ("environment._finding", "environment._compiler", "environment._targets", "registry._registry",
                  "environment._requirements", "tvm._provider",  # the first build's, or another TVM's
                  "core._types",  # the value types' dataclasses: the first use's (activation plans in states)
                  "core._warnings", "diagnosis._findings"):  # a warning's class and words: only where one is given
        assert f"tilelang_hostcg.{heavy}" not in counted["modules"], counted


ROUTE_MODULES = ("tvm._route", "registry._shared")
"""What only a route put in place needs: the replacement and TVM's defaults joining the registry (and no registry
module at all: the joiner waits on the process object)."""


@pytest.mark.parametrize("controls", [{"TILELANG_HOSTCG_DISABLE": "hcgt-cost-rocm"},
                                      {"TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD": "1"}],
                         ids=["plugin-disabled", "autoload-off"])
def test_with_no_plugin_kept_import_tvm_imports_nothing_of_the_route(
        env: PluginEnvironment, controls: dict[str, str]) -> None:
    """Where the controls keep no third-party plugin, TVM stays stock and ``import tvm`` pays for the
    decision alone (autoload off: not even the scan)."""
    counted = env.run_json(PROGRAM, env=controls)
    assert not counted["installed"] and not counted["state"], counted
    assert counted["warnings"] == [], counted
    ours = {name.partition(".")[2] for name in counted["modules"]}
    assert ours.isdisjoint(ROUTE_MODULES), counted
    if "TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD" in controls:
        assert "environment._metadata" not in ours, counted  # the scan's metadata readers

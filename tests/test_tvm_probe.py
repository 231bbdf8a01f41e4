"""``check``'s probe build with real apache-tvm and the stamp plugin pip-installed: it confirms the
route where TVM's build calls it, and where a TVM keeps ``tir_to_runtime`` only under a dead branch
(every point there, of its shape) it says that plugins are not used, and ``--strict`` fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .plugin_factory import tvm_backend_env

pytestmark = pytest.mark.slow

# A ``tvm.backends`` package that edits TVM's ``build`` as a release keeping ``tir_to_runtime``
# only under a dead ``if _LEGACY:`` branch ships it (the same function, its code changed).
LEGACY = '''
import inspect, sys, textwrap


def _autoload():
    module = sys.modules["tvm.tirx.build"]
    source = textwrap.dedent(inspect.getsource(module.build))
    call = "return tir_to_runtime(host_mod, device_mod_dict, target_host)"
    source = source.replace(call, "if _LEGACY:\\n        " + call + "\\n    return _tir_to_runtime_v2(host_mod, "
                                  "device_mod_dict, target_host)")
    namespace = dict(module.__dict__)
    exec(compile(source, module.__file__, "exec"), namespace)
    module._LEGACY = False
    module._tir_to_runtime_v2 = getattr(module.tir_to_runtime, "__wrapped__", module.tir_to_runtime)
    module.build.__code__ = namespace["build"].__code__
'''


@pytest.fixture(scope="module")
def legacy_env(environments: Environments, tmp_path_factory: pytest.TempPathFactory,
               first_party_wheels: dict[str, Path]) -> PluginEnvironment:
    return tvm_backend_env(environments.new("tvm-legacy"), tmp_path_factory.mktemp("tvm-legacy"),
                           first_party_wheels["tilelang-hostcg-stamp"], "aaa-legacy-tvm", "aaa_legacy", LEGACY)


def test_a_dead_branch_fails_check_strict_by_the_probe_build(legacy_env):
    checked = legacy_env.command("check", "--json", cwd=legacy_env.path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    doc = json.loads(checked.stdout)
    client = doc["client"]
    assert client["probe"]["called"] is False and client["routed"] is False and client["active"] is None
    assert client["problem"].startswith("the probe build did not call the route: plugins are not used")
    (problem,) = [p for p in doc["problems"] if p["code"] == "route-unused"]
    assert problem["severity"] == "warning" and "(tvm)" in problem["message"]
    assert not [p for p in doc["problems"] if p["code"] == "client"]  # said once
    strict = legacy_env.command("check", "--strict", cwd=legacy_env.path)
    assert strict.returncode == 1 and "error [route-unused]" in strict.stdout, strict.stdout
    assert "Client: none: the probe build did not call the route" in strict.stdout

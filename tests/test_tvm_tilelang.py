"""Under TileLang the TileLang integration applies, not both: with a real TileLang 0.1.15
(whose bundled TVM has no ``tvm.backends`` autoload) and the stamp plugin pip-installed,
an unchanged TileLang program is routed by the TileLang integration alone, and the TVM
integration's entry point, called while TileLang is imported, leaves everything alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from .tilelang_env import KERNELS, TileLangEnv, TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]

CODEGEN_STAMP = "tilelang_hostcg_stamp_codegen"


@pytest.fixture(scope="module", params=params("0.1.15"))
def env(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs) -> TileLangEnv:
    return tilelang_envs[request.param].env


def test_under_tilelang_the_tilelang_integration_applies_not_both(env: TileLangEnv, tilelang_envs: TileLangEnvs,
                                                                  tmp_path: Path) -> None:
    env.pip("install", "-q", "--no-deps", str(tilelang_envs.wheels["tilelang-hostcg-stamp"]))
    try:
        out = env.run_json(KERNELS + """
import json, sys, warnings
import tvm

source = host_source(elementwise())
tilelang_on = sys.modules["tilelang_hostcg.tilelang"].is_installed()
tvm_imported = "tilelang_hostcg.tvm" in sys.modules
# What the entry point does where a TVM autoloads it while TileLang is imported: nothing.
from tilelang_hostcg.tvm import _activation as activation
from tilelang_hostcg.tvm import is_installed
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    activation.autoload()
build = sys.modules.get("tvm.tirx.build")
route = getattr(build, "tir_to_runtime", None)
print(json.dumps({"stamped": STAMP in source, "tilelang_on": tilelang_on,
                  "tvm_imported_by_tilelang": tvm_imported, "tvm_on": is_installed(),
                  "warnings": [str(w.message) for w in caught],
                  "route": getattr(route, "__module__", None)}))
""".replace("STAMP", repr(CODEGEN_STAMP)))
    finally:
        env.pip("uninstall", "-q", "-y", "tilelang-hostcg-stamp")
    assert out["tilelang_on"] and out["stamped"]  # by TileLang's integration
    assert not out["tvm_imported_by_tilelang"]
    assert not out["tvm_on"] and out["warnings"] == []
    assert out["route"] != "tilelang_hostcg.tvm._route"

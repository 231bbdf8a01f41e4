"""The first use in a fresh process imports only what it needs.

With TVM already imported (as in a compiler driver) and a warm discovery cache,
``import tilelang_hostcg`` plus ``resolve_host_codegen(Target("llvm"))`` imports our
first-use modules and nothing else: not the scan, the metadata and packaging
libraries, the requirement checks, the CLI and its reports, nor the hook record.
Not timed: the benchmark (``benchmarks/bench.py``) measures the cost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tilelang_hostcg._cache import RACY_WINDOW_NS

# What the first use of a host codegen may import, beyond what TVM imported.
FIRST_USE = {
    "tilelang_hostcg", "tilelang_hostcg._api", "tilelang_hostcg._names",
    "tilelang_hostcg._registry", "tilelang_hostcg._table", "tilelang_hostcg._loader",
    "tilelang_hostcg._attribution", "tilelang_hostcg._importlocks", "tilelang_hostcg._sources",
    "tilelang_hostcg._resolution", "tilelang_hostcg._failures", "tilelang_hostcg._errors",
    "tilelang_hostcg._tvm", "tilelang_hostcg._discovery", "tilelang_hostcg._fileio",
    "tilelang_hostcg._targets", "tilelang_hostcg._types", "tilelang_hostcg._cache",
    "tilelang_hostcg._global_func", "tilelang_hostcg.builtin", "tilelang_hostcg._metadata",
    "tilelang_hostcg._controls", "tilelang_hostcg._cachefile",
}
# Off the first-use path: only a scan, a CLI command, an error or a hook needs them.
OFF_PATH = [
    "importlib_metadata", "packaging", "zipp", "difflib", "tilelang_hostcg._scan",
    "tilelang_hostcg._requirements", "tilelang_hostcg._report", "tilelang_hostcg.cli",
    "tilelang_hostcg._checks", "tilelang_hostcg._explain", "tilelang_hostcg._lockfile",
    "tilelang_hostcg._build", "tilelang_hostcg._inputs",
    "tilelang_hostcg.tilelang",
]

WITH_TVM = """
import json, sys
import tvm
from tvm.target import Target
llvm = Target("llvm")
before = set(sys.modules)
import tilelang_hostcg
codegen = tilelang_hostcg.resolve_host_codegen(llvm)
print(json.dumps({"name": codegen.name, "new": sorted(set(sys.modules) - before),
                  "loaded": sorted(sys.modules)}))
"""

WITHOUT_TVM = """
import sys
import tilelang_hostcg
kinds = sorted({s.kind for s in tilelang_hostcg.default_registry().sources()})
loaded = sorted(sys.modules)
import json
print(json.dumps({"kinds": kinds, "loaded": loaded}))
"""


def _run(code: str, cache: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    env["XDG_CACHE_HOME"] = str(cache)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env, cwd=cache)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _warm_run(code: str, cache: Path) -> dict[str, Any]:
    """Run ``code`` until a run uses the discovery cache (a scan imports
    ``tilelang_hostcg._scan``); the first run writes it, unless something on ``sys.path``
    changed within the cache's racy window, which a later run outlives."""
    for _ in range(4):
        result = _run(code, cache)
        if "tilelang_hostcg._scan" not in result["loaded"]:
            return result
        time.sleep(RACY_WINDOW_NS / 1e9 + 0.2)
    raise AssertionError("no run used the discovery cache")


def test_first_use_with_tvm_imports_only_the_first_use_modules(tmp_path: Path) -> None:
    first = _run(WITH_TVM, tmp_path)  # scans and writes the cache
    assert first["name"] == "llvm"
    assert "tilelang_hostcg._scan" in first["loaded"]  # the probe can see a scan
    warm = _warm_run(WITH_TVM, tmp_path)
    assert warm["name"] == "llvm"
    assert set(warm["new"]) <= FIRST_USE, sorted(set(warm["new"]) - FIRST_USE)
    assert [m for m in OFF_PATH if m in warm["loaded"]] == []


def test_warm_discovery_without_tvm_needs_no_metadata_or_text_libraries(tmp_path: Path) -> None:
    warm = _warm_run(WITHOUT_TVM, tmp_path)
    assert {"c", "llvm"} <= set(warm["kinds"])
    heavy = ["tvm", "importlib.metadata", "email", *OFF_PATH]
    assert [m for m in heavy if m in warm["loaded"]] == []


def test_scan_and_hook_type_still_come_when_asked_for(tmp_path: Path) -> None:
    code = """
import json, sys
from tilelang_hostcg import HostCodegenHook
from tilelang_hostcg._requirements import check_requirements
from tilelang_hostcg._scan import scan_environment
from tilelang_hostcg._types import HostCodegenHook as Same
print(json.dumps({"same": HostCodegenHook is Same, "module": HostCodegenHook.__module__,
                  "scan": scan_environment.__module__, "check": check_requirements.__module__}))
"""
    result = _run(code, tmp_path)
    assert result == {"same": True, "module": "tilelang_hostcg._types",
                      "scan": "tilelang_hostcg._scan", "check": "tilelang_hostcg._requirements"}


def test_records_behave_as_frozen_dataclasses() -> None:
    import dataclasses
    import pickle

    import pytest

    from tilelang_hostcg import Controls, HostCodegen, HostCodegenHook, Origin
    from tilelang_hostcg._discovery import AdvertisedEntryPoint, ControlProblem, PlannedSource

    origin = Origin("dist-a", "1.0", "tilelang.host_codegen", "llvm = m:CG")
    assert origin == Origin("dist-a", "1.0", "tilelang.host_codegen", "llvm = m:CG")
    assert origin != Origin("dist-b", "1.0", "tilelang.host_codegen", "llvm = m:CG")
    assert hash(origin) == hash(Origin("dist-a", "1.0", "tilelang.host_codegen", "llvm = m:CG"))
    assert repr(origin) == ("Origin(distribution='dist-a', version='1.0', "
                            "group='tilelang.host_codegen', entry_point='llvm = m:CG')")
    assert Origin() == Origin(None, None, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        origin.version = "2.0"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        origin.other = 1  # type: ignore[attr-defined]
    assert pickle.loads(pickle.dumps(origin)) == origin
    entry = AdvertisedEntryPoint("tilelang.host_codegen", "llvm", "m:CG", "dist-a", "1.0")
    assert PlannedSource(entry, "lazy") == PlannedSource(entry, "lazy", None)
    assert PlannedSource(entry, "lazy") != (entry, "lazy", None)  # not a tuple
    # Controls compare without their problems, as before; a dict field is unhashable.
    problem = ControlProblem("TILELANG_HOSTCG_PREFER", "x", "a message")
    assert Controls(prefer={"llvm": "x"}) == Controls(prefer={"llvm": "x"}, problems=(problem,))
    assert Controls(prefer={"llvm": "x"}) != Controls(prefer={"llvm": "y"})
    with pytest.raises(TypeError):
        hash(Controls())
    # The public records stay frozen, slotted dataclasses.
    for cls in (HostCodegen, HostCodegenHook):
        assert dataclasses.is_dataclass(cls) and "__slots__" in vars(cls)
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]

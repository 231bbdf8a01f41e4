"""The first use in a fresh process imports only what it needs.

With TVM already imported (as in a compiler driver), ``import tilelang_hostcg`` plus
``resolve_host_codegen(Target("llvm"))`` scans the installed metadata (through
``importlib.metadata``, judging a plugin's requirements with ``packaging``) and imports
nothing else from outside the standard library: no more of TVM, no command line, no
plugin module (a plugin for another kind is installed).

The modules are found by what they are, not by name: a module is ours when its name
starts with ``tilelang_hostcg``, of the standard library when ``sys.stdlib_module_names``
lists its top-level name, and foreign otherwise. Not timed: ``benchmarks/bench.py``
measures the cost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# Public modules of ours that the first use never needs.
OFF_PATH = ("tilelang_hostcg.cli", "tilelang_hostcg.__main__", "tilelang_hostcg.testing",
            "tilelang_hostcg.tilelang")
# The one library outside the standard library that discovery uses (requirements, names).
ALLOWED = ("packaging",)

PLUGIN = "hostcg_first_use_probe"
# A distribution advertising a codegen and hooks for kinds the first use does not ask
# for; the requirement makes a scan evaluate it (with ``packaging``).
METADATA = """\
Metadata-Version: 2.1
Name: hostcg-first-use-probe
Version: 1.0
Requires-Dist: tilelang-hostcg>=0.1
"""
ENTRY_POINTS = f"""\
[tilelang.host_codegen]
cuda_host = {PLUGIN}

[tilelang.host_codegen_hooks]
cuda = {PLUGIN}_hooks:HOOKS
"""

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

BARE = "import json, sys; print(json.dumps({'loaded': sorted(sys.modules)}))"

def _write_plugin(root: Path) -> Path:
    """A folder with the probe distribution, and an empty working folder."""
    site, work = root / "site", root / "work"
    work.mkdir()
    info = site / "hostcg_first_use_probe-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(METADATA)
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    # They import fine, so that an import would stay in sys.modules for the test to see.
    (site / f"{PLUGIN}.py").write_text("# a plugin that the first use must not import\n")
    (site / f"{PLUGIN}_hooks.py").write_text("HOOKS = []\n")
    return site


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The probe's folders, shared by the tests of this module."""
    root = tmp_path_factory.mktemp("first-use")
    _write_plugin(root)
    return root


def _run(code: str, place: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TILELANG_HOSTCG_") and k != "PYTHONPATH"}
    env["XDG_CACHE_HOME"] = str(place / "cache")
    env["PYTHONPATH"] = str(place / "site")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env, cwd=place / "work")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _foreign(modules: list[str]) -> list[str]:
    """Modules that are neither ours (the package, the switches beside it) nor of the standard library."""
    return [m for m in modules if m.partition(".")[0] not in sys.stdlib_module_names
            and m.partition(".")[0] not in ("tilelang_hostcg", "_tilelang_hostcg_switch", *ALLOWED)]


def test_first_use_with_tvm_imports_no_more_than_it_needs(place: Path) -> None:
    run = _run(WITH_TVM, place)
    # A third-party plugin is installed, so the TVM integration is on: TVM's own default answers
    # from the first use, as after a build.
    assert run["name"] == "apache-tvm-llvm"
    new = run["new"]
    assert PLUGIN not in run["loaded"] and f"{PLUGIN}_hooks" not in run["loaded"]
    assert _foreign(new) == []  # no TVM module beyond the user's, no plugin, no library
    assert [m for m in new if m in OFF_PATH or m.startswith("tilelang_hostcg.tilelang.")] == []


def test_discovery_without_tvm_imports_no_tvm_and_no_plugin(place: Path) -> None:
    run = _run(WITHOUT_TVM, place)
    assert {"c", "llvm", "cuda_host"} <= set(run["kinds"])  # everything advertised is seen
    bare = set(_run(BARE, place)["loaded"])
    added = [m for m in run["loaded"] if m not in bare]
    assert _foreign(added) == []  # no TVM, no plugin, no third-party library
    assert [m for m in added if m in OFF_PATH] == []
    assert PLUGIN not in added and f"{PLUGIN}_hooks" not in added
    assert not (place / "cache").exists()  # nothing written under XDG_CACHE_HOME


def test_records_behave_as_frozen_dataclasses() -> None:
    import dataclasses
    import pickle

    from tilelang_hostcg import Controls, HostCodegen, HostCodegenHook, Origin

    origin = Origin("dist-a", "1.0", "tilelang.host_codegen", "llvm = m:CG")
    assert origin == Origin("dist-a", "1.0", "tilelang.host_codegen", "llvm = m:CG")
    assert origin != Origin("dist-b", "1.0", "tilelang.host_codegen", "llvm = m:CG")
    assert hash(origin) == hash(Origin("dist-a", "1.0", "tilelang.host_codegen", "llvm = m:CG"))
    assert repr(origin) == ("Origin(distribution='dist-a', version='1.0', "
                            "group='tilelang.host_codegen', entry_point='llvm = m:CG')")
    assert Origin() == Origin(None, None, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        origin.version = "2.0"  # type: ignore[misc]
    # No new attribute either; a slotted frozen dataclass says so with TypeError on some
    # Pythons (CPython's gh-90562), AttributeError on others.
    with pytest.raises((AttributeError, TypeError)):
        origin.other = 1  # type: ignore[attr-defined]
    assert pickle.loads(pickle.dumps(origin)) == origin
    assert Controls(prefer={"llvm": "x"}) == Controls(prefer={"llvm": "x"})
    assert Controls(prefer={"llvm": "x"}) != Controls(prefer={"llvm": "y"})
    with pytest.raises(TypeError):
        hash(Controls())  # a dict field is unhashable
    # The public records stay frozen, slotted dataclasses.
    for cls in (HostCodegen, HostCodegenHook):
        assert dataclasses.is_dataclass(cls) and "__slots__" in vars(cls)
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]

"""Importing the package is free of TVM, entry-point scans and metadata libraries."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["tvm", "tvm_ffi", "importlib.metadata", "importlib_metadata", "packaging", "dataclasses",
         "tilelang_hostcg._registry", "tilelang_hostcg._discovery"]


def loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_loads_nothing_heavy():
    assert loaded_after("import tilelang_hostcg") == []


def test_public_names_resolve_lazily():
    assert loaded_after("from tilelang_hostcg import HostCodegen, PluginWarning") == ["dataclasses"]


def test_all_names_exist():
    import tilelang_hostcg

    for name in tilelang_hostcg.__all__:
        assert getattr(tilelang_hostcg, name) is not None

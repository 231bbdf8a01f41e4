"""Importing the package is free of TVM, entry-point scans and metadata libraries."""

from __future__ import annotations

import json
import subprocess
import sys

# What a user pays for: TVM, and the metadata libraries an entry-point scan needs.
HEAVY = ["tvm", "tvm_ffi", "importlib.metadata", "importlib_metadata", "packaging"]


def loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_loads_nothing_heavy():
    assert loaded_after("import tilelang_hostcg") == []


def test_public_names_resolve_lazily():
    """The value types and errors come without TVM and without a scan of the environment."""
    assert loaded_after("from tilelang_hostcg import HostCodegen, PluginWarning, Registry") == []


def test_all_names_exist():
    import tilelang_hostcg

    for name in tilelang_hostcg.__all__:
        assert getattr(tilelang_hostcg, name) is not None


def test_every_public_error_derives_from_host_codegen_error():
    import tilelang_hostcg

    errors = [getattr(tilelang_hostcg, name) for name in tilelang_hostcg.__all__
              if name.endswith("Error")]
    assert {e.__name__ for e in errors} >= {
        "AmbiguousHostCodegenError", "DeviceAsHostError", "DuplicateRegistrationError",
        "MissingGlobalFuncError", "NoHostCodegenError", "PluginCallbackError", "PluginLoadError",
        "TVMNotFoundError", "TargetParseError", "UnsupportedTileLangError"}
    for error in errors:
        assert issubclass(error, tilelang_hostcg.HostCodegenError), error
    assert issubclass(tilelang_hostcg.HostCodegenError, ValueError)
    assert issubclass(tilelang_hostcg.PluginWarning, UserWarning)


def test_errors_raised_by_the_public_api_are_exported():
    """Every error class defined in the package's modules is importable from the package
    (the command line's own usage errors excepted). Of the warnings, the root ``PluginWarning`` is;
    each kind of warning, its subclass, is exported by ``tilelang_hostcg.core``."""
    import importlib
    import inspect
    import pkgutil

    import tilelang_hostcg

    internal = {"InputError", "LockFileError", "UnknownKindError", "CliError",
                "UsageError",  # the command line's own
                "UnsupportedTVMError"}  # the TVM client's own: tilelang_hostcg.tvm exports it
    found = []
    for info in pkgutil.walk_packages(tilelang_hostcg.__path__, "tilelang_hostcg."):
        if info.name.rpartition(".")[2] in ("__main__", "testing"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, Exception) and obj.__module__ == module.__name__
                    and not name.startswith("_") and name not in internal):
                if issubclass(obj, tilelang_hostcg.PluginWarning) and obj is not tilelang_hostcg.PluginWarning:
                    assert getattr(importlib.import_module("tilelang_hostcg.core"), name) is obj
                    continue
                assert name in tilelang_hostcg.__all__, (info.name, name)
                assert getattr(tilelang_hostcg, name) is obj
                found.append(name)
    assert "HostCodegenError" in found and "TVMNotFoundError" in found  # the walk reaches the errors' module


def test_import_alone_does_not_import_typing():
    probe = "import sys, tilelang_hostcg\nprint('typing' in sys.modules, 're' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    assert out.stdout.split() == ["False", "False"]

"""How many of our modules ``import tvm`` imports, counted the same way by the promise test
(``test_tvm_import_cost.py``) and by ``benchmarks/bench.py`` (section 9), in a fresh process of an
environment where a routed third-party plugin is installed.

Counted: the entries of ``sys.modules`` of the ``tilelang_hostcg`` package right after ``import tvm``,
split into modules and package ``__init__``s (a module with ``__path__``). The start-up hook and the
switches' module beside the package (``_tilelang_hostcg_hook``, ``_tilelang_hostcg_switch``) are not
counted: they are not of the package, and every interpreter of the environment runs the hook."""

from __future__ import annotations

from typing import Any

TARGET = 12
"""The most of our modules (package ``__init__``s not counted) ``import tvm`` may import."""

PROGRAM = """
import json, sys, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tvm
ours = {name: hasattr(module, "__path__") for name, module in list(sys.modules.items())
        if name == "tilelang_hostcg" or name.startswith("tilelang_hostcg.")}
from tilelang_hostcg import tvm as client
print(json.dumps({"modules": sorted(n for n, package in ours.items() if not package),
                  "packages": sorted(n for n, package in ours.items() if package),
                  "installed": client.is_installed(), "state": client.CLIENT.state is not None,
                  "warnings": [str(w.message) for w in caught]}))
"""
"""Prints one JSON document: ``modules``, ``packages`` (of ours, after ``import tvm``), ``installed``
(``tilelang_hostcg.tvm.is_installed()``), ``state`` (the route in place) and ``warnings`` (at the import)."""


def summary(document: dict[str, Any]) -> str:
    """``N of our modules (M package __init__s)`` of a :data:`PROGRAM` document."""
    return f"{len(document['modules'])} of our modules ({len(document['packages'])} package __init__s)"

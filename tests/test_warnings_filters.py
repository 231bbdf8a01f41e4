"""Warnings filters never decide what runs (the TVM client; ``test_tilelang_warnings_filters.py``
is TileLang's). An unchanged apache-tvm program, with the stamp plugin and a distribution whose
entry points are in a near miss of our groups pip-installed, is routed under ``python -W error``
(and ``-W error::UserWarning``, and a filter set in code) exactly as without a filter, for each
warning activation at ``import tvm`` can give; each warning is shown once on stderr, as without
the filter. The command line, under ``-W error``, leaves no unclosed file behind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment, write_distribution

from .conftest import Environments
from .plugin_factory import build_source_wheels

NEAR_MISS = "[tilelang.host_codegens]"
CONTROLS: dict[str, tuple[dict[str, str], str]] = {
    "unknown-variable": ({"TILELANG_HOSTCG_AUTO_INSTAL": "0"},
                         "'TILELANG_HOSTCG_AUTO_INSTAL' is not a tilelang-hostcg control"),
    "unknown-variable-disabled": ({"TILELANG_HOSTCG_DISABLED": "tilelang-hostcg-stamp"},
                                  "'TILELANG_HOSTCG_DISABLED' is not a tilelang-hostcg control"),
    "names-nothing": ({"TILELANG_HOSTCG_DISABLE": "tilelang-hostcg-stmp"},
                      "no installed distribution 'tilelang-hostcg-stmp'"),
    "not-understood": ({"TILELANG_HOSTCG_AUTO_INSTALL": "nope"},
                       "TILELANG_HOSTCG_AUTO_INSTALL='nope' is not understood"),
    "malformed": ({"TILELANG_HOSTCG_PREFER": "llvm"}, "TILELANG_HOSTCG_PREFER: ignoring 'llvm'"),
}
"""Each control problem activation warns about: its variables, and a piece of its warning."""

# An unchanged program; its first line sets the filter in code (or not), so that every
# variant's warnings point at the same line.
PROGRAM = """\
import json, sys, warnings; FILTER
import tvm
from tvm.script import tirx as T


@T.prim_func
def fill(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = T.float32(2)


source = tvm.compile(fill, target="c").mod.inspect_source()
route = sys.modules["tvm.tirx.build"].tir_to_runtime
print(json.dumps({"stamped": "tilelang_hostcg_stamp_codegen" in source,
                  "routed": route.__module__ == "tilelang_hostcg.tvm._route"}))
"""


@pytest.fixture(scope="module")
def env(environments: Environments, tmp_path_factory: pytest.TempPathFactory,
        first_party_wheels: dict[str, Path]) -> PluginEnvironment:
    """apache-tvm with the stamp plugin and a near-miss distribution, both wheels pip-installed."""
    env = environments.new("tvm-filters")
    root = tmp_path_factory.mktemp("tvm-filters")
    source = write_distribution(root / "src", "hcgw-typo", requires=["tilelang-hostcg>=0.1,<1"],
                                entry_points={"tilelang.host_codegens": {"c": "hcgw_typo:CODEGEN"}},
                                files={"hcgw_typo.py": "CODEGEN = None\n"})
    (wheel,) = build_source_wheels(root / "wheels", [source])
    env.pip("install", "-q", "--no-deps", "--no-index", str(wheel),
            str(first_party_wheels["tilelang-hostcg-stamp"]))
    return env


def run(env: PluginEnvironment, options: list[str], controls: dict[str, str],
        in_code: bool = False) -> tuple[Any, str]:
    script = env.path / "filters_program.py"
    script.write_text(PROGRAM.replace("FILTER", "warnings.simplefilter('error')" if in_code else "pass"))
    proc = subprocess.run([env.python, *options, str(script)], capture_output=True, text=True,
                          env=env.environ(controls), cwd=env.path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


@pytest.mark.parametrize("kind", sorted(CONTROLS))
def test_warnings_filter_never_changes_routing_tvm(env: PluginEnvironment, kind: str) -> None:
    controls, needle = CONTROLS[kind]
    plain, plain_err = run(env, [], controls)
    strict, strict_err = run(env, ["-W", "error"], controls)
    assert plain == strict == {"stamped": True, "routed": True}
    assert strict_err == plain_err  # shown as without the filter: once each, at the same line
    assert strict_err.count(needle) == 1 and strict_err.count(NEAR_MISS) == 1, strict_err
    assert strict_err.count("PluginWarning") == 2 and "filters_program.py:2:" in strict_err


@pytest.mark.parametrize("options, in_code", [(["-W", "error::UserWarning"], False), ([], True)],
                         ids=["user-warning-category", "filter-in-code"])
def test_warnings_filter_never_changes_routing_tvm_all_at_once(env: PluginEnvironment,
                                                              options: list[str], in_code: bool) -> None:
    controls = {k: v for variables, _ in CONTROLS.values() for k, v in variables.items()}
    plain, plain_err = run(env, [], controls)
    strict, strict_err = run(env, options, controls, in_code)
    assert plain == strict == {"stamped": True, "routed": True}
    assert strict_err == plain_err
    for _, needle in CONTROLS.values():
        assert strict_err.count(needle) == 1, (needle, strict_err)


@pytest.mark.parametrize("argv", [["list"], ["list", "--load", "--json"], ["check"], ["explain", "c"],
                                  ["lock"], ["--help"]], ids=" ".join)
def test_cli_leaves_no_unclosed_file_under_warnings_as_errors(argv: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-W", "error", "-m", "tilelang_hostcg", *argv],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stdout
    assert "ResourceWarning" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr

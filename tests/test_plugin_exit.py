"""A plugin that calls ``sys.exit()`` while it is imported: the command line reports it as
that plugin's failure and goes on, and so does the library (real installed distributions,
fresh processes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .plugin_factory import Plugin, install, module

pytestmark = pytest.mark.slow

EXITING = Plugin("hcgt-x-exiting", codegens={"test": "hcgt_x_exiting"},
                 files={"hcgt_x_exiting.py": module("""
                     import sys
                     sys.exit(3)
                 """)})
GOOD = Plugin("hcgt-x-good", codegens={"composite": "hcgt_x_good:CODEGEN"},
              files={"hcgt_x_good.py": module('CODEGEN = _codegen("good-composite")\n')})


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> PluginEnvironment:
    environment = environments.new("exit")
    install(environment, tmp_path_factory.mktemp("exit"), [EXITING, GOOD])
    return environment


def test_check_json_names_the_exiting_plugin_and_fails(env: PluginEnvironment) -> None:
    proc = env.command("check", "--json")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    doc = json.loads(proc.stdout)
    (problem,) = [p for p in doc["problems"] if p["distribution"] == "hcgt-x-exiting"]
    assert problem["severity"] == "error" and problem["entry_point"] == "test = hcgt_x_exiting"
    assert "sys.exit(3)" in problem["message"]


def test_list_load_goes_on_past_the_exiting_plugin(env: PluginEnvironment) -> None:
    proc = env.command("list", "--load", "--json")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    doc = json.loads(proc.stdout)
    states = {(e["distribution"], kind["kind"]): e["state"]
              for kind in doc["codegens"] for e in kind["entry_points"]}
    assert states[("hcgt-x-exiting", "test")] == "broken"
    assert states[("hcgt-x-good", "composite")] == "loaded"


def test_explain_reports_it_instead_of_exiting(env: PluginEnvironment) -> None:
    proc = env.command("explain", "test", "--json")
    assert proc.returncode != 3 and proc.stdout, (proc.returncode, proc.stderr)
    assert "sys.exit(3)" in proc.stdout


def test_in_the_library_the_exit_is_the_plugins_failure(env: PluginEnvironment, tmp_path: Path) -> None:
    proc = env.python_run("""
        import warnings
        import tilelang_hostcg as hc
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                hc.resolve_host_codegen("test")
            except hc.PluginLoadError as exc:
                print("failed", type(exc.__cause__).__name__, exc.__cause__.code)
        print(len(caught), hc.resolve_host_codegen("composite").name)
    """, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["failed", "SystemExit", "3", "0", "good-composite"]

"""The pytest plugin for plugin authors: fixtures, ``check_plugin`` and the ``pytest11`` hook-up."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tilelang_hostcg import HostCodegen, Registry, global_func_host_codegen
from tilelang_hostcg.testing import PluginEnvironment, write_distribution

from .conftest import Environments
from .plugin_factory import install_sources

pytestmark = pytest.mark.slow

CG = "tilelang.host_codegen"
HOOKS = "tilelang.host_codegen_hooks"
REQUIRES = ["tilelang-hostcg>=0.1,<1"]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> PluginEnvironment:
    root = tmp_path_factory.mktemp("testing-env")
    src = root / "src"
    environment = environments.new("testing-plugin")
    install_sources(environment, root / "wheels", [
        write_distribution(src, "hcgp-good", "1.0", requires=REQUIRES, entry_points={
            CG: {"cuda_host": "hcgp_good:CODEGEN"},
            HOOKS: {"hip": "hcgp_good:hooks"},
        }, files={"hcgp_good/__init__.py": """
            from tilelang_hostcg import HostCodegen, HostCodegenHook, global_func_host_codegen
            CODEGEN = HostCodegen("good", global_func_host_codegen("target.build.cuda_host"))
            def hooks():
                return [HostCodegenHook("prep", lambda mod, host, target: mod)]
        """}),
        write_distribution(src, "hcgp-bad", "1.0", requires=REQUIRES, entry_points={
            CG: {"cuda_host": "hcgp_bad.empty", "c": "hcgp_bad:NOFUNC",
                 "cuda": "hcgp_bad:DEVICE", "llvm": "hcgp_bad:WRONG_TYPE"},
            HOOKS: {"nosuchdev": "hcgp_bad:HOOK"},
        }, files={"hcgp_bad/__init__.py": """
            from tilelang_hostcg import HostCodegen, HostCodegenHook, global_func_host_codegen
            NOFUNC = HostCodegen("nofunc", global_func_host_codegen("target.build.hcgp_nothing"),
                                 priority=-1)
            DEVICE = HostCodegen("on-device", global_func_host_codegen("target.build.llvm"))
            WRONG_TYPE = "not a codegen"
            HOOK = HostCodegenHook("lost", lambda mod, host, target: mod)
        """, "hcgp_bad/empty.py": "# registers nothing\n"}),
        write_distribution(src, "hcgp-old", "1.0", requires=["tilelang-hostcg<0.1"],
                           entry_points={CG: {"c": "hcgp_old"}},
                           files={"hcgp_old/__init__.py": "raise SystemExit('imported')\n"}),
    ])
    return environment


CHECKED = ("hcgp-good", "HCGP_Good", "hcgp-bad", "hcgp-old", "hcgp-not-installed")


@pytest.fixture(scope="module")
def checked(env: PluginEnvironment) -> dict[str, dict[str, object]]:
    """``check_plugin`` of each name in ``CHECKED``, called in turn in one fresh process
    of the environment, as a plugin's test session calls it (it reads the installed
    metadata afresh at each call)."""
    result: dict[str, dict[str, object]] = env.run_json(f"""
        import json
        from tilelang_hostcg.testing import check_plugin
        results = {{}}
        for distribution in {CHECKED!r}:
            try:
                results[distribution] = {{"kinds": check_plugin(distribution)}}
            except AssertionError as exc:
                results[distribution] = {{"error": str(exc)}}
        print(json.dumps(results))
    """)
    assert sorted(result) == sorted(CHECKED)
    return result


def test_check_plugin_accepts_a_good_plugin(checked: dict[str, dict[str, object]]) -> None:
    assert checked["hcgp-good"] == {"kinds": ["cuda_host", "hip"]}
    assert checked["HCGP_Good"] == {"kinds": ["cuda_host", "hip"]}  # PEP 503 names


def test_check_plugin_lists_every_problem(checked: dict[str, dict[str, object]]) -> None:
    error = str(checked["hcgp-bad"]["error"])
    assert error.startswith("plugin distribution 'hcgp-bad' breaks the contract")
    assert "'cuda_host = hcgp_bad.empty' is broken" in error
    assert "registered no host codegen for kind 'cuda_host'" in error
    assert "'llvm = hcgp_bad:WRONG_TYPE' is broken: TypeError" in error
    assert "cannot build with apache-tvm" in error and "function 'target.build.hcgp_nothing'" in error
    assert "'on-device' is registered for 'cuda', a device kind" in error
    assert "'lost' is registered for kind 'nosuchdev'" in error


def test_check_plugin_reports_incompatible_without_importing(
        checked: dict[str, dict[str, object]]) -> None:
    error = str(checked["hcgp-old"]["error"])  # importing it would have ended the process
    assert "is incompatible" in error and "tilelang-hostcg<0.1" in error


def test_check_plugin_needs_an_installed_distribution(
        checked: dict[str, dict[str, object]]) -> None:
    error = str(checked["hcgp-not-installed"]["error"])
    assert "advertises no entry point" in error


def test_hostcg_registry_is_empty_and_isolated(hostcg_registry: Registry) -> None:
    assert hostcg_registry.sources() == []
    assert list(hostcg_registry) == []
    hostcg_registry.register_host_codegen(
        "llvm", HostCodegen("mine", global_func_host_codegen("target.build.llvm")))
    assert [r.name for r in hostcg_registry] == ["mine"]


def test_hostcg_registry_is_fresh_per_test(hostcg_registry: Registry) -> None:
    assert list(hostcg_registry) == []


def test_importing_the_plugin_module_is_cheap() -> None:
    code = ("import sys, json, tilelang_hostcg.testing\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('tvm', 'tvm_ffi', 'importlib_metadata', 'packaging') "
            "or m.startswith('tilelang_hostcg._'))))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True)
    assert json.loads(out.stdout) == []


def test_pytest_plugin_is_registered_by_entry_point(env: PluginEnvironment,
                                                    tmp_path: Path) -> None:
    """A plugin author's test file, run by pytest with no conftest: fixtures just work."""
    (tmp_path / "test_author.py").write_text(textwrap.dedent("""
        from tilelang_hostcg import Registry
        from tilelang_hostcg.testing import check_plugin, write_distribution

        def test_isolated(hostcg_registry):
            assert isinstance(hostcg_registry, Registry) and list(hostcg_registry) == []

        def test_contract():
            assert check_plugin("hcgp-good") == ["cuda_host", "hip"]

        def test_environment(plugin_environment, tmp_path):
            src = write_distribution(tmp_path, "hcgp-inner", "0.3", entry_points={
                "tilelang.host_codegen": {"test": "hcgp_inner:CG"}}, files={
                "hcgp_inner/__init__.py": '''
                    from tilelang_hostcg import HostCodegen, global_func_host_codegen
                    CG = HostCodegen("inner", global_func_host_codegen("target.build.llvm"))
                '''})
            plugin_environment.install(src)
            proc = plugin_environment.command("check", "--require", "test", "--json", cwd=tmp_path,
                                              env={"TILELANG_HOSTCG_ONLY": "hcgp-inner"})
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert {"name": "hcgp-inner", "version": "0.3"} in __import__("json").loads(
                proc.stdout)["distributions"]
    """))
    proc = subprocess.run([env.python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-W", "error::tilelang_hostcg.PluginWarning", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path,
                          env=env.environ({"TILELANG_HOSTCG_ONLY": "hcgp-good,hcgp-inner"}),
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout


def test_the_core_honours_its_own_contract() -> None:
    from tilelang_hostcg.testing import check_plugin

    assert check_plugin("tilelang-hostcg") == ["c", "llvm"]


def test_a_check_plugin_failure_shows_the_message_not_our_source(env: PluginEnvironment,
                                                                 tmp_path: Path) -> None:
    (tmp_path / "test_bad.py").write_text(textwrap.dedent("""
        from tilelang_hostcg.testing import check_plugin

        def test_contract():
            check_plugin("hcgp-bad")
    """))
    proc = subprocess.run([env.python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tmp_path)], capture_output=True, text=True, cwd=tmp_path,
                          env=env.environ(), timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "plugin distribution 'hcgp-bad' breaks the contract" in proc.stdout
    assert 'check_plugin("hcgp-bad")' in proc.stdout  # the caller's line is shown
    assert "testing.py" not in proc.stdout and "problems.append" not in proc.stdout, proc.stdout

"""Apache TVM's own host-codegen extension point (``patches/apache-tvm-0.27.diff``: the global functions
``tir_to_runtime`` looks up for the host build and for the host module of each device target, and a
host rule by device type in ``split_host_device_mods``), applied with ``git apply`` to a real installed
copy of the test environment's apache-tvm (its ``RECORD`` kept true), with unchanged programs:
tilelang-hostcg's adapter registers there at ``import tvm``, so a third-party plugin's codegen and
hooks build the host code and TVM's own ``tir_to_runtime`` stays; a plugin's host target kind reaches
the host build; with the core and no third-party plugin, and without the core at all, the output is
stock's byte for byte; the command line names the client native; ``check --strict`` judges the
plugins."""

from __future__ import annotations

import json
import site
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .native_patches import PATCHES, apply_patch, record_problems, standalone_copy
from .plugin_factory import Plugin, install, module
from .test_tvm import run, stamped

pytestmark = pytest.mark.slow

PATCH = PATCHES / "apache-tvm-0.27.diff"
OURS = ("tilelang_hostcg", "_tilelang_hostcg_hook", "_editable_impl_tilelang_hostcg", "__editable__.tilelang_hostcg")
OFF = {"TILELANG_HOSTCG_AUTO_INSTALL": "0"}

STATE = """
build = sys.modules["tvm.tirx.build"]
def native_state():
    hostcg = "tilelang_hostcg" in sys.modules  # imported by TVM's autoload, or not at all
    point = None
    if hostcg:
        import tilelang_hostcg.tvm as integration
        native = integration.CLIENT.native()
        point = native.point if native is not None else None
    route = build.tir_to_runtime
    return {"point": point, "own": route.__module__ == "tvm.tirx.build" and not hasattr(route, "__wrapped__"),
            "hostcg": hostcg, "registered": tvm.get_global_func(build.HOST_CODEGEN_FUNC, allow_missing=True)
            is not None, "calls": sys.modules["tilelang_hostcg.native"].calls()
            if "tilelang_hostcg.native" in sys.modules else None}
"""


def _site() -> Path:
    return Path(next(p for p in site.getsitepackages() if (Path(p) / "tvm").is_dir()))


def _patched(dest: Path, *, without_core: bool = False) -> PluginEnvironment:
    _, new_site = standalone_copy(_site(), dest, without=OURS if without_core else ())
    changed = apply_patch(new_site, PATCH)
    assert changed == ["tvm/tirx/build.py"]
    assert record_problems(new_site, changed) == []
    return PluginEnvironment(dest)


@pytest.fixture(scope="module")
def stock_env(environments: Any) -> PluginEnvironment:
    """The running environment's stock apache-tvm, nothing of a plugin's installed."""
    return environments.new("native-tvm-stock")  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def stock(stock_env: PluginEnvironment) -> dict[str, Any]:
    out, _ = run(stock_env, "print(json.dumps(programs()))", env_vars=OFF)
    return out  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def native_env(tmp_path_factory: pytest.TempPathFactory) -> PluginEnvironment:
    """apache-tvm patched, the core installed, no third-party plugin yet."""
    return _patched(tmp_path_factory.mktemp("native-tvm") / "env")


def test_with_the_core_and_no_plugin_the_output_is_stocks_and_nothing_is_patched(native_env, stock):
    out, err = run(native_env, STATE + "got = programs()\nprint(json.dumps({'got': got, 'state': native_state()}))")
    assert out["got"] == stock  # LLVM IR, C source, Relax, CUDA host and device: byte for byte
    # No third-party plugin: TVM's autoload imported the core, which left TVM's extension point empty.
    assert out["state"] == {"point": None, "own": True, "hostcg": True, "registered": False, "calls": None}
    assert "Warning" not in err.replace("Unable to detect CUDA version", "")


def test_without_the_core_the_patched_tvm_is_stock(tmp_path, stock):
    env = _patched(tmp_path / "env", without_core=True)
    out, _ = run(env, STATE + "got = programs()\nprint(json.dumps({'got': got, 'state': native_state()}))")
    assert out["got"] == stock
    assert out["state"] == {"point": None, "own": True, "hostcg": False, "registered": False, "calls": None}
    probe = env.python_run("import tilelang_hostcg", cwd=tmp_path)
    assert probe.returncode != 0 and "ModuleNotFoundError" in probe.stderr  # really not installed


@pytest.fixture(scope="module")
def stamp_env(tmp_path_factory: pytest.TempPathFactory, first_party_wheels: dict[str, Path]) -> PluginEnvironment:
    """apache-tvm patched, the core and the stamp plugin (a third party's codegens and hooks) installed."""
    env = _patched(tmp_path_factory.mktemp("native-tvm-stamp") / "env")
    env.pip("install", "-q", "--no-deps", "--no-index", str(first_party_wheels["tilelang-hostcg-stamp"]))
    return env


def test_a_plugins_codegen_and_hooks_build_the_host_code_and_no_function_is_replaced(stamp_env, stock):
    out, _ = run(stamp_env, STATE + textwrap.dedent("""
        got = programs()
        import tilelang_hostcg.tvm as integration
        print(json.dumps({"got": got, "state": native_state(), "installed": integration.is_installed()}))
    """))
    got = out["got"]
    assert got["llvm_runs"] and got["relax_runs"]
    assert stamped(got["llvm"]) == [True, False]  # the plugin's llvm codegen; no device, no hook
    assert stamped(got["c"]) == [True, False]
    assert stamped(got["relax"]) == [True, False]
    assert stamped(got["cuda_llvm"][:1]) == [True, True]  # the plugin's hook marked the host IR
    assert got["cuda_llvm"][1:] == stock["cuda_llvm"][1:]  # device code: TVM's
    assert stamped(got["cuda_host"][:1]) == [False, True]  # TVM's cuda_host default, the plugin's hook
    assert stamped(got["global_func"]) == [True, False]
    assert out["state"]["own"] and out["state"]["point"] and out["installed"]
    assert out["state"]["registered"] and out["state"]["calls"]["tvm"] > 0  # TVM's builds called the adapter


def test_the_switches_leave_the_patched_tvm_stock(stamp_env, stock):
    for switch in (OFF, {"TILELANG_HOSTCG_DISABLE": "tilelang-hostcg-stamp"}):
        out, _ = run(stamp_env, "print(json.dumps(programs()))", env_vars=switch)
        assert out == stock, switch


def test_the_command_line_names_the_client_native(stamp_env):
    listed = stamp_env.command("list", "--load", cwd=stamp_env.path)
    assert listed.returncode == 0, listed.stderr
    assert ("Client: native: TVM calls tilelang-hostcg itself (tvm.tirx.build calls its global functions"
            in listed.stdout), listed.stdout
    checked = stamp_env.command("check", "--strict", "--json", "--require", "llvm",
                                "--require-hook", "cuda", cwd=stamp_env.path)
    doc = json.loads(checked.stdout)
    assert checked.returncode == 0 and doc["ok"], checked.stdout
    assert doc["client"]["routed"] is True and doc["client"]["describe"].startswith("native: TVM")


def test_check_strict_fails_where_a_required_kind_has_no_usable_codegen(tmp_path, stock):
    env = _patched(tmp_path / "env")
    install(env, tmp_path / "plugins", [Plugin(
        "hcgt-native-broken", codegens={"c": "hcgt_native_broken:CODEGEN"},
        hooks={"rocm": "hcgt_native_broken:HOOKS"},
        files={"hcgt_native_broken.py": module("raise RuntimeError('broken on purpose')\n")})])
    checked = env.command("check", "--strict", "--json", "--require-hook", "rocm", cwd=env.path)
    doc = json.loads(checked.stdout)
    assert checked.returncode != 0 and not doc["ok"]
    assert any("rocm" in p["message"] and p["severity"] == "error" for p in doc["problems"]), doc["problems"]
    # A build still works where TVM's own codegen can build: the broken plugin is named in a warning.
    out, _ = run(env, """
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = tree(tvm.compile(vector_add, target="c").mod)
        print(json.dumps({"c": c, "warnings": [str(w.message) for w in caught]}))
    """)
    assert out["c"] == stock["c"]
    assert any("hcgt-native-broken" in w and "broken on purpose" in w for w in out["warnings"]), out["warnings"]


def test_a_plugins_host_target_kind_reaches_the_host_build(tmp_path):
    """A plugin's codegen for a host target kind of TVM's other than ``llvm`` and ``c`` (``test``, of CPU
    device type, as a kind an extension registers): ``split_host_device_mods`` keeps its functions on
    the host, and TVM's build hands them to the plugin, whose module runs on the CPU."""
    env = _patched(tmp_path / "env")
    install(env, tmp_path / "plugins", [Plugin(
        "hcgt-test-host", codegens={"test": "hcgt_test_host:CODEGEN"},
        files={"hcgt_test_host.py": module("""
            import tvm
            from tvm.target import Target

            def _build(mod, target_host):
                _mark("build:" + target_host.kind.name)
                return tvm.get_global_func("target.build.c")(mod, Target("c"))

            CODEGEN = hc.HostCodegen("test_host", _build)
        """)})])
    out, _ = run(env, """
        import os, tempfile
        built = tvm.compile(vector_add, target="test")
        path = os.path.join(tempfile.mkdtemp(), "vector_add.so")
        built.export_library(path)
        add = tvm.runtime.load_module(path)["vector_add"]
        a, b = np.arange(16, dtype="float32"), np.full(16, 0.5, dtype="float32")
        c = tvm.runtime.tensor(np.zeros(16, dtype="float32"))
        add(tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
        print(json.dumps({"runs": bool(np.allclose(c.numpy(), a + b)), "kinds": sorted(
            {m.kind for m in [built.mod, *built.mod.imports]})}))
    """, env_vars={"HOSTCG_TEST_MARKERS": str(tmp_path / "markers")})
    assert out["runs"] and out["kinds"] == ["c"]  # one host module: no "device" module of kind test
    assert (tmp_path / "markers").read_text().splitlines().count("build:test") == 1


def test_install_joins_the_extension_point_where_tvms_autoload_is_off(stamp_env, stock):
    """With ``TVM_DEVICE_BACKEND_AUTOLOAD=0`` nothing registers at ``import tvm`` (TVM builds stock);
    ``tilelang_hostcg.tvm.install()`` registers the adapter at TVM's point and patches nothing."""
    out, _ = run(stamp_env, STATE + textwrap.dedent("""
        import warnings
        before = tree(tvm.compile(vector_add, target="c").mod)
        registered_before = tvm.get_global_func(build.HOST_CODEGEN_FUNC, allow_missing=True) is not None
        import tilelang_hostcg.tvm as integration
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            integration.install()
        after = tree(tvm.compile(vector_add, target="c").mod)
        print(json.dumps({"before": before, "registered_before": registered_before, "after": after,
                          "state": native_state(), "warnings": [str(w.message) for w in caught]}))
    """), env_vars={"TVM_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert out["before"] == stock["c"] and not out["registered_before"]
    assert stamped(out["after"]) == [True, False]
    assert out["state"]["own"] and out["state"]["point"]  # tir_to_runtime is TVM's: nothing patched
    assert any("install() patches nothing" in w for w in out["warnings"]), out["warnings"]


def test_a_host_codegen_function_another_package_registered_is_left_to_it(stamp_env):
    out, _ = run(stamp_env, STATE + textwrap.dedent("""
        import warnings
        calls = []

        def theirs(mod, target_host):
            calls.append(target_host.kind.name)
            return build.codegen_build(mod, target_host)

        tvm.register_global_func(build.HOST_CODEGEN_FUNC, theirs)
        import tilelang_hostcg.tvm as integration
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            integration.install()
        c = tree(tvm.compile(vector_add, target="c").mod)
        print(json.dumps({"calls": calls, "c": c, "state": native_state(), "installed": integration.is_installed(),
                          "warnings": [str(w.message) for w in caught]}))
    """), env_vars={"TVM_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert out["calls"] == ["c"] and stamped(out["c"]) == [False, False]  # theirs built, as TVM's own
    assert out["state"]["own"] and out["state"]["point"] is None and not out["installed"]
    assert any("tirx.build.host_codegen" in w and "another package" in w for w in out["warnings"]), out["warnings"]

"""Discovery end to end: real plugin distributions, pip-installed, used in fresh processes.

All distributions are installed once into one throwaway environment; each test
picks the ones it is about with ``TILELANG_HOSTCG_ONLY`` (or another control),
runs a script in a fresh interpreter and checks what it reports, including which
plugin modules were imported (``sys.modules`` and the marker file every plugin
module writes on import).
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from pathlib import Path

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .plugin_factory import Plugin, build_wheels, codegen_module, install, module, run

pytestmark = pytest.mark.slow

TVM_VERSION = importlib.metadata.version("apache-tvm")

MODFORM = Plugin(
    "hcgt-modform", "1.0",
    codegens={"test": "hcgt_modform.codegen"},
    hooks={"vulkan": "hcgt_modform.hooks"},
    files={
        "hcgt_modform/__init__.py": module(),
        "hcgt_modform/codegen.py": codegen_module("test", "modform-test"),
        "hcgt_modform/hooks.py": module(
            'hc.register_host_codegen_hook("vulkan", _hook("modform-vulkan"))\n'),
    })
ATTRFORM = Plugin(
    "hcgt-attrform", "2.0",
    codegens={"cuda_host": "hcgt_attrform:CODEGEN"},
    hooks={"cuda": "hcgt_attrform.hooks:HOOKS", "metal": "hcgt_attrform.hooks:make_metal_hooks"},
    files={
        "hcgt_attrform/__init__.py": module('CODEGEN = _codegen("attrform-cuda-host")\n'),
        "hcgt_attrform/hooks.py": module("""
            HOOKS = (_hook("attrform-cuda-low"), _hook("attrform-cuda-high", 1))

            def make_metal_hooks():
                return [_hook("attrform-metal")]
        """),
    })
CALLABLE = Plugin(
    "hcgt-callable", "3.0",
    codegens={"composite": "hcgt_callable:make_codegen"},
    files={"hcgt_callable.py": module("""
        def make_codegen():
            return _codegen("callable-composite")
    """)})
BROKEN = Plugin(
    "hcgt-broken", "0.3",
    codegens={"test": "hcgt_broken.codegen"},
    files={"hcgt_broken/__init__.py": module(),
           "hcgt_broken/codegen.py": module('raise RuntimeError("simulated failure")\n')})
AMB_A = Plugin("hcgt-amb-a", codegens={"test": "hcgt_amb_a:CODEGEN"},
               files={"hcgt_amb_a.py": module('CODEGEN = _codegen("amb-a")\n')})
AMB_B = Plugin("hcgt-amb-b", codegens={"test": "hcgt_amb_b:CODEGEN"},
               files={"hcgt_amb_b.py": module('CODEGEN = _codegen("amb-b")\n')})
NEEDS_TVM = Plugin("hcgt-needs-tvm", codegens={"test": "hcgt_needs_tvm"},
                   requires=["apache-tvm>=9"],
                   files={"hcgt_needs_tvm.py": codegen_module("test", "needs-tvm")})
NEEDS_CORE = Plugin("hcgt-needs-core", codegens={"cuda_host": "hcgt_needs_core"},
                    requires=["tilelang-hostcg>=5"],
                    files={"hcgt_needs_core.py": codegen_module("cuda_host", "needs-core")})
COMPATIBLE = Plugin(
    "hcgt-compatible", codegens={"composite": "hcgt_compatible"},
    requires=["apache-tvm>=0.27,<0.28", "tilelang-hostcg>=0.1,<1",
              'apache-tvm>=9; python_version < "3"', "tilelang-hostcg>=5; sys_platform == 'none'"],
    files={"hcgt_compatible.py": codegen_module("composite", "compatible")})
HOOKS_A = Plugin("hcgt-hooks-a", hooks={"rocm": "hcgt_hooks_a:HOOKS"},
                 files={"hcgt_hooks_a.py": module('HOOKS = [_hook("a-first"), _hook("a-second")]\n')})
HOOKS_M = Plugin("hcgt-hooks-m", hooks={"hip": "hcgt_hooks_m"},
                 files={"hcgt_hooks_m.py": module(
                     'hc.register_host_codegen_hook("hip", _hook("m-hip"))\n')})
# Installed into a folder that comes first on sys.path, so path order is not name order.
HOOKS_Z = Plugin("hcgt-hooks-z", hooks={"rocm": "hcgt_hooks_z:HOOKS"},
                 files={"hcgt_hooks_z.py": module(
                     'HOOKS = [_hook("z-low"), _hook("z-high", priority=5)]\n')})
REMOVABLE = Plugin("hcgt-removable", codegens={"composite": "hcgt_removable:CODEGEN"},
                   files={"hcgt_removable.py": module('CODEGEN = _codegen("removable")\n')})
LATE = Plugin("hcgt-late", "0.9", codegens={"composite": "hcgt_late:CODEGEN"},
              files={"hcgt_late.py": module('CODEGEN = _codegen("late")\n')})
# A package whose __init__ imports the submodule another entry point names.
PACKAGE = Plugin(
    "hcgt-package", codegens={"cuda_host": "hcgt_package"}, hooks={"cuda": "hcgt_package.hooks"},
    files={"hcgt_package/__init__.py": module("""
               from . import hooks
               hc.register_host_codegen("cuda_host", _codegen("package-cuda-host"))
           """),
           "hcgt_package/hooks.py": module(
               'hc.register_host_codegen_hook("cuda", _hook("package-cuda"))\n')})
# A front module that hands its kind on to a lazily imported implementation.
FACADE = Plugin(
    "hcgt-facade", "1.5", codegens={"composite": "hcgt_facade"},
    files={"hcgt_facade/__init__.py": module(
               'hc.register_lazy_host_codegen("composite", "hcgt_facade.impl")\n'),
           "hcgt_facade/impl.py": codegen_module("composite", "facade-composite")})

INSTALLED = [MODFORM, ATTRFORM, CALLABLE, BROKEN, AMB_A, AMB_B, NEEDS_TVM, NEEDS_CORE,
             COMPATIBLE, HOOKS_A, HOOKS_M, REMOVABLE, PACKAGE, FACADE]


@dataclass
class Setup:
    env: PluginEnvironment
    front: Path  # holds hcgt-hooks-z, for PYTHONPATH
    late_wheel: Path  # built, not installed


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> Setup:
    root = tmp_path_factory.mktemp("integration")
    env = environments.new("integration")
    install(env, root, INSTALLED)
    front = root / "front"
    install(env, root, [HOOKS_Z], "--target", str(front))
    (late_wheel,) = build_wheels(root, [LATE])
    return Setup(env, front, late_wheel)


def only(*plugins: Plugin) -> dict[str, str]:
    return {"TILELANG_HOSTCG_ONLY": ",".join(p.dist for p in plugins)}


def test_both_forms_load_lazily_one_kind_at_a_time(setup: Setup, tmp_path: Path) -> None:
    out = run(setup.env, """
        registry = hc.default_registry()
        out["listed"] = sources()
        out["after_listing"] = [markers(), plugin_modules(), "tvm" in sys.modules]
        for kind in ("test", "cuda_host", "composite"):
            out[kind] = [resolve(kind), markers(), plugin_modules()]
        for kind in ("cuda", "metal", "vulkan"):
            out[kind] = [hooks(kind), markers(), plugin_modules()]
        out["sources"] = sources()
        out["snapshot"] = snapshot()
    """, tmp_path / "markers", only(MODFORM, ATTRFORM, CALLABLE))

    listed = {(s["kind"], s["distribution"]): s for s in out["listed"] if s["state"] != "disabled"}
    assert {(k, d) for k, d in listed if d != "tilelang-hostcg"} == {
        ("test", "hcgt-modform"), ("vulkan", "hcgt-modform"), ("cuda_host", "hcgt-attrform"),
        ("cuda", "hcgt-attrform"), ("metal", "hcgt-attrform"), ("composite", "hcgt-callable")}
    assert {s["state"] for s in listed.values()} == {"lazy"}
    assert listed["cuda", "hcgt-attrform"]["entry_point"] == "cuda = hcgt_attrform.hooks:HOOKS"
    assert listed["cuda", "hcgt-attrform"]["version"] == "2.0"
    # Listing read metadata only: no plugin code, no TVM.
    assert out["after_listing"] == [[], [], False]

    # Each kind imports its own plugin module and nothing else.
    assert out["test"] == ["modform-test", ["import:hcgt_modform", "import:hcgt_modform.codegen"],
                           ["hcgt_modform", "hcgt_modform.codegen"]]
    assert out["cuda_host"][0] == "attrform-cuda-host"
    assert out["cuda_host"][1][2:] == ["import:hcgt_attrform"]
    assert "hcgt_attrform.hooks" not in out["cuda_host"][2]
    assert out["composite"][0] == "callable-composite"
    assert out["composite"][1][3:] == ["import:hcgt_callable"]
    assert out["cuda"][0] == ["attrform-cuda-high", "attrform-cuda-low"]
    assert out["cuda"][1][4:] == ["import:hcgt_attrform.hooks"]
    assert out["metal"][0] == ["attrform-metal"]
    assert out["metal"][1] == out["cuda"][1]  # same module, not imported again
    assert out["vulkan"] == [["modform-vulkan"], [*out["metal"][1], "import:hcgt_modform.hooks"],
                             sorted([*out["metal"][2], "hcgt_modform.hooks"])]
    assert {s["state"] for s in out["sources"] if s["distribution"] in (
        "hcgt-modform", "hcgt-attrform", "hcgt-callable")} == {"loaded"}

    # Provenance: distribution, version, entry point and group on every registration.
    regs = {(group, kind, name): rest for group, kind, name, _prio, *rest in out["snapshot"]}
    assert regs["tilelang.host_codegen", "cuda_host", "attrform-cuda-host"] == [
        "hcgt-attrform", "2.0", "cuda_host = hcgt_attrform:CODEGEN"]
    assert regs["tilelang.host_codegen", "composite", "callable-composite"] == [
        "hcgt-callable", "3.0", "composite = hcgt_callable:make_codegen"]
    assert regs["tilelang.host_codegen", "test", "modform-test"] == [
        "hcgt-modform", "1.0", "test = hcgt_modform.codegen"]
    assert regs["tilelang.host_codegen_hooks", "metal", "attrform-metal"] == [
        "hcgt-attrform", "2.0", "metal = hcgt_attrform.hooks:make_metal_hooks"]
    assert regs["tilelang.host_codegen_hooks", "vulkan", "modform-vulkan"] == [
        "hcgt-modform", "1.0", "vulkan = hcgt_modform.hooks"]


def test_error_names_distribution_version_and_entry_point(setup: Setup, tmp_path: Path) -> None:
    out = run(setup.env, """
        out["resolve"] = attempt(lambda: resolve("test"))
        out["allowed"] = attempt(lambda: hc.allowed_host_codegens_for_target(target("test")))
        out["llvm"] = attempt(lambda: resolve("llvm"))
        out["sources"] = [s for s in sources() if s["distribution"] == "hcgt-broken"]
    """, tmp_path / "markers", only(BROKEN))
    error = out["resolve"]["error"]
    assert error["type"] == "PluginLoadError"
    assert {"HostCodegenError", "ValueError"} <= set(error["mro"])
    for part in ("'hcgt-broken' 0.3", "'test = hcgt_broken.codegen'", "RuntimeError",
                 "simulated failure", "TILELANG_HOSTCG_DISABLE=hcgt-broken"):
        assert part in error["message"]
    assert "\n" not in error["message"]
    assert error["cause"]["type"] == "RuntimeError"
    assert error["cause"]["message"] == "simulated failure"
    assert out["allowed"]["ok"] and out["allowed"]["value"] == []
    assert [w[0] for w in out["allowed"]["warnings"]] == ["SkippedPluginWarning"]
    assert out["llvm"] == {"ok": True, "value": "apache-tvm-llvm", "warnings": []}  # TVM's own: the plugin turns it on
    (source,) = out["sources"]
    assert source["state"] == "broken" and source["version"] == "0.3"
    assert source["error"]["type"] == "RuntimeError"


def test_autoload_off_runs_no_plugin_code(setup: Setup, tmp_path: Path) -> None:
    out = run(setup.env, """
        registry = hc.default_registry()
        registry.load_all()
        out["sources"] = sources()
        out["llvm"], out["c"] = resolve("llvm"), resolve("c")
        out["test"] = attempt(lambda: resolve("test"))
        out["cuda"] = attempt(lambda: apply_hooks("cuda"))
        out["modules"] = plugin_modules()
    """, tmp_path / "markers", {"TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert {s["distribution"] for s in out["sources"]} == {"tilelang-hostcg"}
    assert (out["llvm"], out["c"]) == ("llvm", "c")
    assert out["test"]["error"]["type"] == "NoHostCodegenError"
    assert out["cuda"] == {"ok": True, "value": [], "warnings": []}
    assert out["modules"] == []
    assert not (tmp_path / "markers").exists()


def test_disable_a_distribution_by_normalized_name(setup: Setup, tmp_path: Path) -> None:
    out = run(setup.env, """
        hc.default_registry().load_all()
        out["test"] = attempt(lambda: resolve("test"))
        out["cuda_host"] = resolve("cuda_host")
        out["states"] = sorted({(s["distribution"], s["state"]) for s in sources()})
        out["modules"] = plugin_modules()
    """, tmp_path / "markers", {**only(MODFORM, ATTRFORM), "TILELANG_HOSTCG_DISABLE": "HCGT_Modform"})
    error = out["test"]["error"]
    assert error["type"] == "NoHostCodegenError"
    assert "'hcgt-modform'" in error["message"]
    assert "TILELANG_HOSTCG_DISABLE=hcgt-modform" in error["message"]
    assert out["cuda_host"] == "attrform-cuda-host"
    assert ["hcgt-modform", "disabled"] in out["states"]
    assert not any(m.startswith("hcgt_modform") for m in out["modules"])
    assert not any("hcgt_modform" in tag for tag in (tmp_path / "markers").read_text().split())


def test_disable_one_entry_point_of_a_distribution(setup: Setup, tmp_path: Path) -> None:
    out = run(setup.env, """
        out["cuda_host"] = attempt(lambda: resolve("cuda_host", hc.Registry(discover=True)))
        out["served"] = resolve("cuda_host")
        out["cuda"] = apply_hooks("cuda")
        out["states"] = {s["kind"]: s["state"] for s in sources()
                         if s["distribution"] == "hcgt-attrform"}
    """, tmp_path / "markers", {**only(ATTRFORM),
                                "TILELANG_HOSTCG_DISABLE": "hcgt-attrform:cuda_host"})
    # The program's registry: TVM's own cuda_host codegen serves (the plugin turns the integration
    # on), not the disabled entry point; a registry without TVM's defaults says which control skips it.
    assert out["served"] == "apache-tvm-cuda_host"
    error = out["cuda_host"]["error"]
    assert error["type"] == "NoHostCodegenError"
    assert "TILELANG_HOSTCG_DISABLE=hcgt-attrform:cuda_host" in error["message"]
    assert out["cuda"] == ["attrform-cuda-high", "attrform-cuda-low"]
    assert out["states"] == {"cuda_host": "disabled", "cuda": "loaded", "metal": "lazy"}


def test_only_allowlist_runs_no_other_distribution(setup: Setup, tmp_path: Path) -> None:
    out = run(setup.env, """
        hc.default_registry().load_all()
        out["composite"] = resolve("composite")
        out["llvm"] = resolve("llvm")
        out["loaded"] = sorted({s["distribution"] for s in sources() if s["state"] == "loaded"})
        out["modules"] = plugin_modules()
    """, tmp_path / "markers", only(CALLABLE))
    assert out["composite"] == "callable-composite" and out["llvm"] == "apache-tvm-llvm"
    assert out["loaded"] == ["hcgt-callable", "tilelang-hostcg"]
    assert out["modules"] == ["hcgt_callable"]
    assert (tmp_path / "markers").read_text().split() == ["import:hcgt_callable"]


def test_prefer_resolves_an_ambiguity(setup: Setup, tmp_path: Path) -> None:
    script = """
        out["test"] = attempt(lambda: resolve("test"))
        out["allowed"] = attempt(lambda: hc.allowed_host_codegens_for_target(target("test")))
    """
    out = run(setup.env, script, tmp_path / "markers", only(AMB_A, AMB_B))
    error = out["test"]["error"]
    assert error["type"] == "AmbiguousHostCodegenError"
    for part in ("'amb-a' from 'hcgt-amb-a'", "'amb-b' from 'hcgt-amb-b'",
                 "TILELANG_HOSTCG_PREFER=test="):
        assert part in error["message"]
    assert out["allowed"] == {"ok": True, "value": ["amb-a", "amb-b"], "warnings": []}

    out = run(setup.env, script, tmp_path / "markers2",
              {**only(AMB_A, AMB_B), "TILELANG_HOSTCG_PREFER": "test=amb-b"})
    assert out["test"] == {"ok": True, "value": "amb-b", "warnings": []}


def test_incompatible_plugin_is_not_imported_and_says_why(setup: Setup, tmp_path: Path) -> None:
    out = run(setup.env, """
        out["test"] = attempt(lambda: resolve("test"))
        out["cuda_host"] = attempt(lambda: resolve("cuda_host", hc.Registry(discover=True)))
        out["served"] = attempt(lambda: resolve("cuda_host"))
        out["composite"] = attempt(lambda: resolve("composite"))
        out["states"] = {s["distribution"]: [s["state"], s["reason"]] for s in sources()}
        out["modules"] = plugin_modules()
    """, tmp_path / "markers", only(NEEDS_TVM, NEEDS_CORE, COMPATIBLE))
    tvm_error = out["test"]["error"]
    assert tvm_error["type"] == "PluginLoadError" and tvm_error["cause"] is None
    assert "'apache-tvm>=9'" in tvm_error["message"]
    assert f"apache-tvm {TVM_VERSION} is installed" in tvm_error["message"]
    assert "'hcgt-needs-tvm' 1.0" in tvm_error["message"]
    # Where nothing else serves cuda_host (a registry without TVM's defaults), the error says why the
    # plugin is not used; the program's registry has TVM's own, and warns of the plugin.
    core_error = out["cuda_host"]["error"]
    assert "'tilelang-hostcg>=5'" in core_error["message"]
    assert out["served"]["value"] == "apache-tvm-cuda_host", out["served"]
    assert any("'tilelang-hostcg>=5'" in w[1] for w in out["served"]["warnings"]), out["served"]
    assert "tilelang-hostcg 0.1.0 is installed" in core_error["message"]
    # Markers that do not apply and satisfied ranges do not block a plugin.
    assert out["composite"] == {"ok": True, "value": "compatible", "warnings": []}
    assert out["states"]["hcgt-needs-tvm"][0] == "incompatible"
    assert out["states"]["hcgt-needs-core"][0] == "incompatible"
    assert out["states"]["hcgt-compatible"] == ["loaded", None]
    assert out["modules"] == ["hcgt_compatible"]
    assert (tmp_path / "markers").read_text().split() == ["import:hcgt_compatible"]


def test_requirement_check_accepts_prereleases_and_dev_builds() -> None:
    """A unit test of discovery's requirement rule (``discovery._requirements``)."""
    from tilelang_hostcg.environment._requirements import check_requirements

    installed = {"apache-tvm": "0.27.1.dev42", "tilelang-hostcg": "0.2.0rc1"}
    assert check_requirements("p", ["apache-tvm>=0.27,<0.28", "tilelang-hostcg>=0.1,<1"],
                              installed) is None
    assert check_requirements("p", ["apache-tvm>=0.28; python_version < '3'"], installed) is None
    reason = check_requirements("p", ["apache-tvm>=0.28"], installed)
    assert reason is not None and "'apache-tvm>=0.28'" in reason and "0.27.1.dev42" in reason


def test_uninstall_removes_the_kind(setup: Setup, tmp_path: Path) -> None:
    script = """
        out["composite"] = attempt(lambda: resolve("composite"))
        out["dists"] = sorted({s["distribution"] for s in sources()})
    """
    before = run(setup.env, script, tmp_path / "m1", only(REMOVABLE))
    assert before["composite"]["value"] == "removable"
    setup.env.uninstall(REMOVABLE.dist)
    after = run(setup.env, script, tmp_path / "m2", only(REMOVABLE))
    assert after["composite"]["error"]["type"] == "NoHostCodegenError"
    assert "hcgt-removable" in before["dists"]
    assert "hcgt-removable" not in after["dists"]


def test_refresh_sees_a_plugin_installed_while_running(setup: Setup, tmp_path: Path) -> None:
    out = run(setup.env, f"""
        import subprocess
        out["before"] = attempt(lambda: resolve("composite"))
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                        {str(setup.late_wheel)!r}], check=True)
        out["stale"] = attempt(lambda: resolve("composite"))
        hc.refresh()
        out["after"] = attempt(lambda: resolve("composite"))
        out["source"] = [s for s in sources() if s["distribution"] == "hcgt-late"]
    """, tmp_path / "markers", only(LATE))
    assert out["before"]["error"]["type"] == "NoHostCodegenError"
    # Discovery is read once per registry: nothing changes until refresh().
    assert out["stale"]["error"]["type"] == "NoHostCodegenError"
    assert out["after"] == {"ok": True, "value": "late", "warnings": []}
    (source,) = out["source"]
    assert (source["version"], source["entry_point"]) == ("0.9", "composite = hcgt_late:CODEGEN")


def test_hook_order_is_by_priority_then_distribution_name(setup: Setup, tmp_path: Path) -> None:
    out = run(setup.env, """
        import importlib.metadata
        out["path_order"] = [d.name for d in importlib.metadata.distributions()
                             if d.name.startswith("hcgt-hooks")]
        out["rocm"] = hooks("rocm")
        out["applied"] = apply_hooks("rocm")
    """, tmp_path / "markers", {**only(HOOKS_A, HOOKS_M, HOOKS_Z),
                                "PYTHONPATH": str(setup.front)})
    # sys.path puts hcgt-hooks-z first; the order must not follow it.
    assert out["path_order"][0] == "hcgt-hooks-z"
    expected = ["z-high", "a-first", "a-second", "m-hip", "z-low"]
    assert out["rocm"] == expected
    assert out["applied"] == expected


def test_package_and_facade_layouts(setup: Setup, tmp_path: Path) -> None:
    out = run(setup.env, """
        out["cuda_host"] = attempt(lambda: resolve("cuda_host"))
        out["cuda"] = attempt(lambda: apply_hooks("cuda"))
        out["before_composite"] = plugin_modules()
        out["composite"] = attempt(lambda: resolve("composite"))
        out["states"] = sorted([s["value"], s["state"], s["distribution"]] for s in sources()
                               if s["distribution"] in ("hcgt-package", "hcgt-facade"))
        out["origins"] = {r[2]: r[4:] for r in snapshot()}
    """, tmp_path / "markers", only(PACKAGE, FACADE))
    assert out["cuda_host"] == {"ok": True, "value": "package-cuda-host", "warnings": []}
    # The hooks module was imported by the package: its entry point is loaded, no warning.
    assert out["cuda"] == {"ok": True, "value": ["package-cuda"], "warnings": []}
    assert "hcgt_facade" not in out["before_composite"]
    assert out["composite"] == {"ok": True, "value": "facade-composite", "warnings": []}
    assert out["states"] == [
        ["hcgt_facade", "loaded", "hcgt-facade"],
        ["hcgt_facade.impl", "loaded", "hcgt-facade"],
        ["hcgt_package", "loaded", "hcgt-package"],
        ["hcgt_package.hooks", "loaded", "hcgt-package"],
    ]
    assert out["origins"]["facade-composite"] == [
        "hcgt-facade", "1.5", "composite = hcgt_facade.impl"]
    assert out["origins"]["package-cuda"][0] == "hcgt-package"


def test_disable_one_entry_point_accepts_either_rocm_spelling() -> None:
    from tilelang_hostcg import Controls

    for written in ("hip", "rocm"):
        controls = Controls.from_environ({"TILELANG_HOSTCG_DISABLE": f"HCGT_Hooks_M:{written}"})
        for advertised in ("hip", "rocm"):
            reason = controls.skip_reason("hcgt-hooks-m", advertised)
            assert reason == f"disabled by TILELANG_HOSTCG_DISABLE=hcgt-hooks-m:{written}"
        assert controls.skip_reason("hcgt-hooks-m", "cuda") is None

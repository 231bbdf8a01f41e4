"""The first-party plugins under plugins/, installed with pip and checked in fresh processes.

One throwaway environment for this module (layered over the running one) gets the
three distributions from their wheels (built once per run, see ``first_party_wheels``
in ``conftest.py``), with one ``pip install``. Every check runs in a new interpreter,
so it sees exactly what a user gets after ``pip install``. A separate environment
checks that uninstalling removes them from the next process's answers. (Their own tests run
from a copy of the source trees.)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import NESTED, Environments, skip_or_fail

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ("tilelang-hostcg-cuda", "tilelang-hostcg-rocm", "tilelang-hostcg-template")


def _copy_plugins(dest: Path) -> list[Path]:
    copies = []
    for name in PLUGINS:
        copies.append(dest / name)
        shutil.copytree(ROOT / "plugins" / name, copies[-1],
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    return copies


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _copy_plugins(tmp_path_factory.mktemp("first-party-src"))


def _install(env: PluginEnvironment, wheels: dict[str, Path]) -> None:
    env.pip("install", "-q", "--no-deps", "--no-index", *(str(wheels[name]) for name in PLUGINS))


@pytest.fixture(scope="module")
def env(environments: Environments, first_party_wheels: dict[str, Path]) -> PluginEnvironment:
    environment = environments.new("first-party")
    _install(environment, first_party_wheels)
    return environment


def run_json(env: PluginEnvironment, code: str) -> dict:
    """Run ``code`` in a fresh interpreter of ``env`` from the repository root (so that
    ``tests.kernels`` imports); it prints one JSON document last."""
    proc = env.python_run(code, cwd=ROOT)
    assert proc.returncode == 0, f"subprocess failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_discovery_lists_them_without_importing_them(env):
    result = run_json(env, """
        import json, sys
        import tilelang_hostcg
        found = sorted([s.origin.distribution, s.group.rsplit(".", 1)[-1], s.kind, s.value, s.state]
                       for s in tilelang_hostcg.default_registry().sources()
                       if (s.origin.distribution or "").startswith("tilelang-hostcg-"))
        imported = sorted(m for m in sys.modules if m.startswith("tilelang_hostcg_"))
        print(json.dumps({"found": found, "imported": imported}))
    """)
    assert result["found"] == [
        ["tilelang-hostcg-cuda", "host_codegen", "cuda_host", "tilelang_hostcg_cuda.codegen",
         "lazy"],
        ["tilelang-hostcg-cuda", "host_codegen_hooks", "cuda",
         "tilelang_hostcg_cuda.hooks:CUDA_HOOKS", "lazy"],
        ["tilelang-hostcg-cuda", "host_codegen_hooks", "nvptx",
         "tilelang_hostcg_cuda.hooks:NVPTX_HOOKS", "lazy"],
        ["tilelang-hostcg-rocm", "host_codegen_hooks", "hip",
         "tilelang_hostcg_rocm.hooks:ROCM_HOOKS", "lazy"],
        ["tilelang-hostcg-template", "host_codegen", "llvm", "tilelang_hostcg_template.codegen",
         "lazy"],
        ["tilelang-hostcg-template", "host_codegen_hooks", "ext_dev",
         "tilelang_hostcg_template.hooks:ACME_HOOKS", "lazy"],
    ]
    assert result["imported"] == []


def test_the_cli_check_passes_with_them_installed(env, tmp_path):
    proc = env.command("check", "--require", "cuda_host", "--require-hook", "cuda",
                       "--require-hook", "hip", "--require-hook", "ext_dev", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_resolution_and_hooks(env):
    result = run_json(env, """
        import json
        import tvm
        import tilelang_hostcg as hostcg
        from tvm.target import Target
        from tests.kernels import gpu_vector_add

        reg = hostcg.default_registry()
        out = {}
        for name, target in {"cuda_host": Target("cuda_host"),
                             "cuda_with_cuda_host": Target({"kind": "cuda"}, host="cuda_host"),
                             "acme": Target({"kind": "llvm", "mtriple": "x86_64-acme-linux-gnu"}),
                             "llvm": Target("llvm")}.items():
            codegen = hostcg.resolve_host_codegen(target)
            origin = next(r.origin for r in reg.registrations(kind=target.host.kind.name
                          if target.host is not None else target.kind.name) if r.obj is codegen)
            out["resolve_" + name] = [codegen.name, origin.distribution]

        rocm = Target({"kind": "rocm", "mcpu": "gfx942"})
        devices = {"cuda": Target({"kind": "cuda", "arch": "sm_90"}),
                   "nvptx": Target({"kind": "nvptx", "mcpu": "sm_90"}),
                   "rocm": rocm, "ext_dev": Target("ext_dev")}
        out["hooks"] = {k: [r.name for r in reg.matching_hooks(t)] for k, t in devices.items()}
        group = "tilelang.host_codegen_hooks"
        out["hip_spelling"] = [r.name for r in reg.registrations(group, "hip")]
        out["rocm_spelling"] = [r.name for r in reg.registrations(group, "rocm")]
        # A hook registered in code under TVM's spelling joins the plugin's (TileLang's).
        hostcg.register_host_codegen_hook("rocm", hostcg.HostCodegenHook(
            "in_code", lambda mod, host, target: mod.with_attr("in_code", 1)))
        out["hooks_after_code_registration"] = [r.name for r in reg.matching_hooks(rocm)]

        from tilelang_hostcg_rocm import rocm_device_info
        prepared = hostcg.apply_host_codegen_hooks(tvm.IRModule({}), Target("llvm"), rocm)
        out["rocm_record"] = [rocm_device_info(prepared).arch, int(prepared.attrs["in_code"])]
        # build_host: the codegen builds the module the plugin's hooks returned (a codegen
        # registered in code, above the core's, records what it was given).
        received = []
        for h in ("llvm", "c"):
            base = tvm.get_global_func("target.build." + h)
            def recording(mod, target_host, base=base):
                info = rocm_device_info(mod)
                marked = mod.attrs.get("in_code") if mod.attrs is not None else None
                received.append([target_host.kind.name, info.arch if info else None,
                                 None if marked is None else int(marked)])
                return base(mod, target_host)
            hostcg.register_host_codegen(h, hostcg.HostCodegen("recording", recording, priority=100))
        out["rocm_build_host"] = [hostcg.build_host(tvm.IRModule({}), Target(h), rocm).kind
                                  for h in ("llvm", "c")]
        out["rocm_build_host_received"] = list(received)

        from tilelang_hostcg_cuda import cuda_host_requirements
        sm90 = devices["cuda"]
        prepared = hostcg.apply_host_codegen_hooks(tvm.IRModule({}), Target("cuda_host"), sm90)
        out["cuda_requirements"] = cuda_host_requirements(prepared).nvcc_options()
        out["cuda_builds"] = {h: hostcg.build(gpu_vector_add, Target(sm90, host=h)).kind
                              for h in ("llvm", "cuda_host")}
        print(json.dumps(out))
    """)
    assert result["resolve_cuda_host"] == ["cuda_host", "tilelang-hostcg-cuda"]
    assert result["resolve_cuda_with_cuda_host"] == ["cuda_host", "tilelang-hostcg-cuda"]
    assert result["resolve_acme"] == ["acme_llvm", "tilelang-hostcg-template"]
    # The plugins turn TVM's integration on: TVM's own default serves a plain llvm host from the start.
    assert result["resolve_llvm"] == ["apache-tvm-llvm", "apache-tvm"]
    assert result["hooks"] == {
        "cuda": ["cuda_host_pairing", "cuda_host_requirements"],
        "nvptx": ["nvptx_host_pairing"],
        "rocm": ["rocm_host_pairing", "rocm_device_record"],
        "ext_dev": ["acme_device"],
    }
    assert result["hip_spelling"] == result["rocm_spelling"] == [
        "rocm_host_pairing", "rocm_device_record"]
    assert result["hooks_after_code_registration"] == [
        "rocm_host_pairing", "rocm_device_record", "in_code"]
    assert result["rocm_record"] == ["gfx942", 1]
    assert result["rocm_build_host"] == ["llvm", "c"]
    assert result["rocm_build_host_received"] == [["llvm", "gfx942", 1], ["c", "gfx942", 1]]
    assert result["cuda_requirements"] == ["-std=c++17", "-arch=sm_90", "-ltvm_ffi"]
    assert result["cuda_builds"] == {"llvm": "llvm", "cuda_host": "c"}


def test_impossible_pairings_fail_with_clear_errors(env):
    result = run_json(env, """
        import json
        import tvm
        import tilelang_hostcg as hostcg
        from tvm.target import Target
        from tests.kernels import gpu_vector_add

        def attempt(call):
            try:
                call()
            except Exception as exc:
                return {"type": type(exc).__name__, "message": str(exc),
                        "hostcg_error": isinstance(exc, hostcg.HostCodegenError),
                        "value_error": isinstance(exc, ValueError),
                        "notes": getattr(exc, "__notes__", [])}
            return None

        empty = tvm.IRModule({})
        print(json.dumps({
            "cuda_device_test_host": attempt(lambda: hostcg.build(
                gpu_vector_add, Target({"kind": "cuda", "arch": "sm_90"}, host="test"))),
            "rocm_device_cuda_host": attempt(lambda: hostcg.apply_host_codegen_hooks(
                empty, Target("cuda_host"), Target({"kind": "rocm", "mcpu": "gfx942"}))),
            "rocm_device_via_target_host": attempt(lambda: hostcg.build_host(
                empty, Target("cuda_host"),
                Target({"kind": "rocm", "mcpu": "gfx90a"}, host="cuda_host"))),
            "nvptx_device_cuda_host": attempt(lambda: hostcg.apply_host_codegen_hooks(
                empty, Target("cuda_host"), Target({"kind": "nvptx", "mcpu": "sm_90"}))),
            "ext_dev_c_host": attempt(lambda: hostcg.apply_host_codegen_hooks(
                empty, Target("c"), Target("ext_dev"))),
        }))
    """)
    for case, error in result.items():
        assert error is not None, f"{case}: no error"
        assert error["hostcg_error"] and error["value_error"], case
    for case in ("cuda_device_test_host", "rocm_device_cuda_host", "rocm_device_via_target_host",
                 "nvptx_device_cuda_host"):
        error = result[case]
        assert error["type"] == "IncompatibleHostError", case
        assert "cannot launch the kernels of device target" in error["message"], case
        assert "host='llvm'" in error["message"] and "TILELANG_HOSTCG_DISABLE=" in error["message"]
    cuda = result["cuda_device_test_host"]
    assert "Target host 'test'" in cuda["message"] and "'cuda_host'" in cuda["message"]
    assert any("cuda_host_pairing" in note and "tilelang-hostcg-cuda" in note
               for note in cuda["notes"])
    assert "tilelang-hostcg-rocm" in result["rocm_device_cuda_host"]["message"]
    assert "need an 'llvm' host" in result["ext_dev_c_host"]["message"]


@pytest.mark.needs_tool("nvcc", why="the CUDA Toolkit's compiler builds the translation unit")
def test_cuda_host_build_is_one_translation_unit_that_nvcc_compiles(env, tmp_path):
    result = run_json(env, f"""
        import json, re
        import numpy as np
        import tvm_ffi
        import tilelang_hostcg as hostcg
        from tvm.backend.cuda import export_cuda_host
        from tvm.target import Target
        from tests.kernels import gpu_vector_add
        from tilelang_hostcg_cuda import export_cuda_host_library

        target = Target({{"kind": "cuda", "arch": "sm_90"}}, host="cuda_host")
        module = hostcg.build(gpu_vector_add, target)
        source = export_cuda_host(module)
        library = export_cuda_host_library(module, {str(tmp_path / "vector_add.so")!r},
                                           arch=target)
        func = tvm_ffi.load_module(str(library))["gpu_vector_add"]
        cpu = tvm_ffi.from_dlpack(np.zeros(8, dtype="float32"))
        try:
            func(cpu, cpu, cpu)
            rejected = None
        except ValueError as exc:
            rejected = str(exc)
        print(json.dumps({{
            "kind": module.kind,
            "imports": [m.kind for m in module.imports],
            "kernels": re.findall(r"__global__ void (?:__launch_bounds__\\(\\d+\\) )?(\\w+)\\(",
                                  source),
            "wrappers": sorted(set(re.findall(r"int32_t (__tvm_ffi_\\w+)\\(", source))),
            "library": library.name, "size": library.stat().st_size,
            "rejected": rejected,
        }}))
    """)
    assert result["kind"] == "c" and result["imports"] == ["cuda"]
    assert set(result["kernels"]) == {"gpu_vector_add_kernel"}
    assert result["wrappers"] == ["__tvm_ffi_gpu_vector_add", "__tvm_ffi_main"]
    assert result["library"] == "vector_add.so" and result["size"] > 0
    # The library loads without a GPU; its wrappers check arguments before launching.
    assert result["rejected"] is not None and "expected cuda" in result["rejected"]


@pytest.mark.parametrize(("example", "expected"), [
    ("cuda_host_build.py", "host 'test' rejected before host codegen"),
    ("rocm_hooks.py", "registered under 'rocm': ['rocm_host_pairing', 'rocm_device_record']"),
    ("template_plugin.py",
     "codegens matching the Acme triple, best first: ['acme_llvm', 'apache-tvm-llvm', 'llvm']"),
])
def test_examples_run(env, tmp_path, example, expected):
    # --skip-compile: the nvcc compile is covered above; the others ignore arguments.
    proc = env.python_run(f"import runpy, sys; sys.argv[1:] = ['--skip-compile']; "
                          f"runpy.run_path({str(ROOT / 'examples' / example)!r}, "
                          "run_name='__main__')", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert expected in proc.stdout


def nested_outcomes(junit: Path) -> dict:
    """What a pytest run wrote to its JUnit XML: counts by outcome, the tests that passed,
    and each test that did not, with its outcome and reason."""
    counts: dict[str, int] = {}
    passed, not_passed = [], []
    for case in ElementTree.parse(junit).iter("testcase"):
        test = f"{case.get('classname')}::{case.get('name')}"
        found = [child for child in case if child.tag in ("skipped", "failure", "error")]
        outcome = found[0].tag if found else "passed"
        counts[outcome] = counts.get(outcome, 0) + 1
        if found:
            not_passed.append([outcome, test, (found[0].get("message") or "").strip()])
        else:
            passed.append(test)
    return {"counts": counts, "passed": passed, "not_passed": not_passed}


def test_each_plugins_own_tests_pass_installed(env, sources, tmp_path, record_property):
    # Judged by every test's outcome, not the exit status alone: the run's counts and each
    # test it skipped show in the terminal summary ("nested pytest runs"), and a skipped test
    # skips this one (fails it where TILELANG_HOSTCG_TEST_REQUIRE_TOOLS=1, as in CI).
    junit = tmp_path / "plugins-own-tests.xml"
    proc = env.python_run("import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))",
                          "-q", "-rs", "-W", "error", "-p", "no:cacheprovider",
                          f"--junitxml={junit}", "-o", "junit_family=xunit1",
                          *(str(s / "tests") for s in sources),
                          cwd=ROOT, timeout=300)
    outcomes = nested_outcomes(junit) if junit.exists() else {"counts": {}, "not_passed": []}
    record_property(NESTED, {k: v for k, v in outcomes.items() if k != "passed"})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    passed = " ".join(outcomes["passed"])
    for name in PLUGINS:  # each plugin's own tests ran
        assert f"test_{name.rsplit('-', 1)[1]}_plugin" in passed, (name, outcomes["counts"])
    skipped = [f"{test}: {reason}" for outcome, test, reason in outcomes["not_passed"]
               if outcome == "skipped"]
    if skipped:
        skip_or_fail(f"the plugins' own tests skipped {len(skipped)}: {'; '.join(skipped)}")


def _installed_outside_the_test_environment() -> list[str]:
    import importlib.util

    return [m for m in ("tilelang_hostcg_cuda", "tilelang_hostcg_rocm", "tilelang_hostcg_template")
            if importlib.util.find_spec(m) is not None]


@pytest.mark.skipif(bool(_installed_outside_the_test_environment()),
                    reason="the first-party plugins are installed in the environment running the "
                           "tests, so uninstalling them from a layer over it cannot remove them")
def test_uninstalling_removes_them(environments, first_party_wheels):
    env = environments.new("first-party-uninstall")  # its own: it uninstalls
    _install(env, first_party_wheels)
    probe = """
        import importlib.util, json
        import tvm
        import tilelang_hostcg as hostcg
        from tvm.target import Target

        reg = hostcg.default_registry()
        out = {"dists": sorted({s.origin.distribution for s in reg.sources()
                                if (s.origin.distribution or "").startswith("tilelang-hostcg-")}),
               "modules": [m for m in ("tilelang_hostcg_cuda", "tilelang_hostcg_rocm",
                                       "tilelang_hostcg_template")
                           if importlib.util.find_spec(m) is not None]}
        try:
            out["cuda_host"] = hostcg.resolve_host_codegen(Target("cuda_host")).name
        except hostcg.HostCodegenError as exc:
            out["cuda_host"] = [type(exc).__name__, str(exc)]
        acme = Target({"kind": "llvm", "mtriple": "x86_64-acme-linux-gnu"})
        out["acme"] = hostcg.resolve_host_codegen(acme).name
        out["rocm_hooks"] = [r.name for r in reg.matching_hooks(Target("rocm"))]
        out["cuda_hooks"] = [r.name for r in reg.matching_hooks(Target("cuda"))]
        print(json.dumps(out))
    """
    before = run_json(env, probe)
    assert before["dists"] == list(PLUGINS) and len(before["modules"]) == 3
    assert before["cuda_host"] == "cuda_host" and before["acme"] == "acme_llvm"
    env.uninstall(*PLUGINS)
    after = run_json(env, probe)  # right away: the next process scans again
    assert after["dists"] == [] and after["modules"] == []
    assert after["cuda_host"][0] == "NoHostCodegenError"
    assert "'cuda_host'" in after["cuda_host"][1]
    assert after["acme"] == "llvm"
    assert after["rocm_hooks"] == [] and after["cuda_hooks"] == []

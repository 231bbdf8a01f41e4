"""TileLang's own host-codegen extension point (``patches/tilelang-0.1.15.diff``: its group of
host-codegen providers, applied when TileLang creates a compilation's ``BackendContext``), applied
with ``git apply`` to a real pip-installed TileLang 0.1.15 (its ``RECORD`` kept true), with unchanged
programs: tilelang-hostcg is one provider, so the stamp plugin's codegen and hook build the host code
of real kernels and no function of TileLang is replaced; with the core and no third-party plugin,
and without the core at all, the host code and the kernel cache key are stock's byte for byte; the
context carries the plan's fingerprint and the controls act on it; the command line names the client
native; ``check --strict`` judges the plugins; the kernel cache follows the plugin set; a broken
plugin leaves the compile working."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from .native_patches import PATCHES, apply_patch, record_problems
from .plugin_factory import Plugin, install, module
from .tilelang_env import KERNELS, TileLangEnv, TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]

STAMPS = ("tilelang_hostcg_stamp_codegen", "tilelang_hostcg_stamp_hook")
OFF = {"TILELANG_HOSTCG_AUTO_INSTALL": "0"}
PATCH = PATCHES / "tilelang-0.1.15.diff"

SOURCES = KERNELS + """
import json, os, sys, tempfile

def own_functions():
    from tilelang.cache.kernel_cache import KernelCache
    from tilelang.autotuner.tuner import AutoTuner
    import importlib
    import tilelang.backend.module as m
    lower = importlib.import_module("tilelang.engine.lower")
    return [KernelCache.__dict__["_generate_key"], AutoTuner.__dict__["generate_cache_key"], lower.lower,
            m.create_backend_context] + [m.BackendModule.__dict__[n] for n in ("get_host_codegen",
                                         "preprocess_host_codegen", "codegen_host")]

def cache_key():
    # The kernel cache's key of the elementwise kernel, as KernelCache.cached computes it.
    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp()
    from tilelang.backend.module import create_backend_context, get_backend
    from tilelang.cache.kernel_cache import KernelCache
    context = create_backend_context(SM80, "c", "tvm_ffi")
    extra = {}
    if hasattr(context, "host_codegen_fingerprint"):
        extra["host_codegen_fingerprint"] = context.host_codegen_fingerprint
    key = KernelCache()._generate_key(elementwise(), [2], "tvm_ffi", (), context.target, context.target_host,
                                      None, None, **extra)
    return {"key": key, "fingerprint": extra.get("host_codegen_fingerprint"),
            "stock_module": context.module is get_backend(context.module.name),
            "codegen": context.module.get_host_codegen(context.target_host).name}

def native_state():
    try:
        import tilelang_hostcg.tilelang as integration
    except ImportError:  # the core not installed
        return None
    native = integration.CLIENT.native()
    api = sys.modules.get("tilelang_hostcg.native")
    return {"point": native.point if native else None, "installed": integration.is_installed(),
            "calls": api.calls() if api is not None else None}

sources = [host_source(elementwise()), host_source(gemm())]
own = all(f.__module__.startswith("tilelang.") and not hasattr(f, "__wrapped__") for f in own_functions())
print(json.dumps({"sources": sources, "own": own, "cache": cache_key(), "state": native_state(),
                  "provider": "tilelang_hostcg.tilelang._provider" in sys.modules}))
"""

COMPILE = KERNELS + """
import json, os
kernel = tilelang.compile(elementwise(), target=SM80, execution_backend="tvm_ffi")
root = os.environ["TILELANG_CACHE_DIR"]
entries = sum(len(files) for _, _, files in os.walk(root))
print(json.dumps({"stamped": [s in kernel.get_host_source() for s in STAMPS], "entries": entries}))
""".replace("STAMPS", repr(STAMPS))


def stamps(sources: list[str]) -> list[list[bool]]:
    return [[s in src for s in STAMPS] for src in sources]


class Patched:
    """TileLang 0.1.15: the stock environment (the project installed, unpatched), and copies of it
    patched with the extension point, with the core and without."""

    def __init__(self, envs: TileLangEnvs, key: str, folder: Path) -> None:
        self.key = key
        self.stock_env = envs[key].env
        self.wheels = envs.wheels
        self.folder = folder
        self.env = self._patched(self._copy(self.stock_env, folder / "with-core"))
        self._bare: TileLangEnv | None = None

    def _copy(self, env: TileLangEnv, dest: Path) -> TileLangEnv:
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(env.path, dest, symlinks=True, copy_function=_link)
        return TileLangEnv(dest, env.key, build=False)

    @staticmethod
    def _patched(env: TileLangEnv) -> TileLangEnv:
        changed = apply_patch(env.site_packages, PATCH)
        assert changed and record_problems(env.site_packages, changed) == []
        return env

    @property
    def bare(self) -> TileLangEnv:
        """Patched, without tilelang-hostcg installed at all."""
        if self._bare is None:
            self._bare = self._patched(TileLangEnv(self.folder / "bare", self.key))  # a copy of the base
        return self._bare


def _link(source: str, dest: str) -> None:
    import os
    os.link(source, dest)


@pytest.fixture(scope="module", params=params("0.1.15"))
def layout(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs,
           tmp_path_factory: pytest.TempPathFactory) -> Patched:
    return Patched(tilelang_envs, request.param, tmp_path_factory.mktemp(f"native-{request.param}"))


@pytest.fixture(scope="module")
def stock(layout: Patched) -> dict[str, Any]:
    """Stock TileLang's host code and cache key (the unpatched environment, activation off)."""
    out = layout.stock_env.run_json(SOURCES, env=OFF)
    assert stamps(out["sources"]) == [[False, False]] * 2 and out["cache"]["fingerprint"] is None
    return out  # type: ignore[no-any-return]


@pytest.fixture
def with_stamp(layout: Patched) -> Any:
    layout.env.pip("install", "-q", "--no-deps", str(layout.wheels["tilelang-hostcg-stamp"]))
    try:
        yield layout.env
    finally:
        layout.env.pip("uninstall", "-q", "-y", "tilelang-hostcg-stamp")


def test_with_the_core_and_no_plugin_the_host_code_and_cache_key_are_stocks(layout, stock):
    out = layout.env.run_json(SOURCES)
    assert out["sources"] == stock["sources"]
    assert out["cache"] == stock["cache"]  # the key byte for byte; the backend's own manifest, no fingerprint
    assert out["cache"]["stock_module"] and out["own"] and out["provider"]  # TileLang loaded our provider
    assert out["state"]["point"] and "tilelang.host_codegen_providers" in out["state"]["point"]
    assert out["state"]["installed"] is False  # nothing third-party: TileLang's own decide alone


def test_without_the_core_the_patched_tilelang_is_stock(layout, stock):
    out = layout.bare.run_json(SOURCES)
    assert out["sources"] == stock["sources"] and out["cache"] == stock["cache"]
    assert out["own"] and not out["provider"] and out["state"] is None
    probe = layout.bare.python_run("import tilelang_hostcg")
    assert probe.returncode != 0 and "ModuleNotFoundError" in probe.stderr


def test_a_plugins_codegen_and_hook_build_and_no_function_is_replaced(layout, stock, with_stamp):
    out = with_stamp.run_json(SOURCES)
    assert stamps(out["sources"]) == [[True, True]] * 2
    assert out["own"] and out["state"]["installed"] is True
    assert out["state"]["calls"] and sum(out["state"]["calls"].values()) > 0  # builds ran the plan
    cache = out["cache"]
    assert not cache["stock_module"] and cache["codegen"] == "stamp_c"  # the context carries the choice
    assert cache["fingerprint"].startswith("tilelang_hostcg=") and cache["key"] != stock["cache"]["key"]
    again = with_stamp.run_json(SOURCES)["cache"]
    assert again == cache  # the same installed set: the same fingerprint in a fresh process
    for control in ({"TILELANG_HOSTCG_DISABLE": "tilelang-hostcg-stamp"}, OFF):  # the controls act on it
        off = with_stamp.run_json(SOURCES, env=control)
        assert off["sources"] == stock["sources"] and off["cache"] == stock["cache"], control
    listed, checked = with_stamp.cli_each(("list", "--load"), ("check", "--strict", "--json", "--require", "c",
                                                                "--require-hook", "cuda"))
    assert listed.returncode == 0, listed.stderr
    assert "Client: native: TileLang calls tilelang-hostcg itself" in listed.stdout, listed.stdout
    doc = json.loads(checked.stdout)
    assert doc["client"]["routed"] is True and doc["client"]["describe"].startswith("native: TileLang")
    assert checked.returncode == 0 and doc["ok"], doc["problems"]


def test_a_broken_plugin_fails_check_strict_and_never_the_compile(layout, stock, tmp_path):
    env = layout.env
    install(env, tmp_path, [Plugin(
        "hcgt-native-broken", codegens={"c": "hcgt_native_broken:CODEGEN"},
        hooks={"cuda": "hcgt_native_broken:HOOKS", "rocm": "hcgt_native_broken:HOOKS"},
        files={"hcgt_native_broken.py": module("raise RuntimeError('broken on purpose')\n")})])
    try:
        out = env.run_json(SOURCES.replace("sources = [", "import warnings\nwarnings.simplefilter('always')\n"
                                                          "sources = ["))
        (checked,) = env.cli_each(("check", "--strict", "--json", "--require-hook", "rocm"))
        proc = env.run(SOURCES)
    finally:
        env.pip("uninstall", "-q", "-y", "hcgt-native-broken")
    assert out["sources"] == stock["sources"]  # TileLang's own codegen and hooks served
    assert "hcgt-native-broken" in proc.stderr and "broken on purpose" in proc.stderr
    doc = json.loads(checked.stdout)
    assert checked.returncode != 0 and not doc["ok"]
    assert any("rocm" in p["message"] and p["severity"] == "error" for p in doc["problems"]), doc["problems"]


@pytest.mark.needs_tool("nvcc", why="tilelang.compile for CUDA runs it")
def test_the_kernel_cache_follows_the_plugin_set(layout, tmp_path):
    env = layout.env
    cache = {"TILELANG_CACHE_DIR": str(tmp_path / "kernel-cache")}
    env.pip("install", "-q", "--no-deps", str(layout.wheels["tilelang-hostcg-stamp"]))
    try:
        first = env.run_json(COMPILE, env=cache)
        hit = env.run_json(COMPILE, env=cache)  # a fresh process, the same plugin set
    finally:
        env.pip("uninstall", "-q", "-y", "tilelang-hostcg-stamp")
    removed = env.run_json(COMPILE, env=cache)  # the cache warm, the plugin gone
    assert first["stamped"] == [True, True]
    assert hit == first  # served from the cache: no new entry
    assert removed["stamped"] == [False, False]  # never the stale stamped kernel
    assert removed["entries"] > first["entries"]

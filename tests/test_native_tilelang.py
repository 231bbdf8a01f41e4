"""The native patches of TileLang (``patches/tilelang-*.diff``), each applied to a real pip-installed
TileLang (its ``RECORD`` kept true; 0.1.11's hard-coded layout relabelled as a vendor's build
ships it), with unchanged programs: the stamp plugin's codegen and hook build the host code of
real kernels and no function of TileLang is replaced; with the core and no third-party plugin,
and without the core at all, the host code is stock's byte for byte; the command line names the
client native; ``check --strict`` judges the plugins; the kernel cache follows the plugin set; a
broken plugin leaves the compile working."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from .native_patches import PATCHES, apply_patch, record_problems
from .plugin_factory import Plugin, install, module
from .tilelang_env import KERNELS, TileLangEnv, TileLangEnvs, params, relabel

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]

STAMPS = ("tilelang_hostcg_stamp_codegen", "tilelang_hostcg_stamp_hook")
OFF = {"TILELANG_HOSTCG_AUTO_INSTALL": "0"}
# The layout each environment has, and the patch of it.
LAYOUTS = {"0.1.15": "tilelang-0.1.15.diff", "0.1.12": "tilelang-0.1.12.diff", "0.1.11": "tilelang-0.1.11.diff"}
VENDOR = {"0.1.11": ("tilelang-vendor", "0.1.11")}  # relabelled as a vendor's build of that layout

SOURCES = KERNELS + """
import json, sys

def native_state():
    from importlib import import_module
    declared = {name: getattr(sys.modules.get(name), "__tilelang_hostcg_native__", None)
                for name in ("tilelang.backend.module", "tilelang.engine.lower")}
    points = [getattr(f, "__module__", "") for f in own_functions()]
    native = sys.modules.get("tilelang_hostcg.native")
    return {"declared": {k: v for k, v in declared.items() if v is not None},
            "own": all(m.startswith("tilelang.") for m in points) and not any(
                hasattr(f, "__wrapped__") for f in own_functions()),
            "calls": native.calls() if native is not None else None}

def own_functions():
    from tilelang.cache.kernel_cache import KernelCache
    from tilelang.autotuner.tuner import AutoTuner
    import importlib
    lower = importlib.import_module("tilelang.engine.lower")
    found = [KernelCache.__dict__["_generate_key"], AutoTuner.__dict__["generate_cache_key"], lower.lower]
    try:
        import tilelang.backend.module as m
        found += [m.BackendModule.__dict__[n] for n in ("get_host_codegen", "preprocess_host_codegen",
                                                        "codegen_host")]
    except ImportError:
        found += [getattr(lower, n) for n in ("host_codegen", "resolve_host_codegen", "apply_host_codegen_hooks")
                  if hasattr(lower, n)]
    return found

sources = [host_source(elementwise()), host_source(gemm())]
print(json.dumps({"sources": sources, "state": native_state()}))
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
    """One TileLang layout: the stock environment (the project installed, unpatched), and copies of
    it patched natively, with the core and without."""

    def __init__(self, envs: TileLangEnvs, key: str, folder: Path) -> None:
        self.key = key
        self.stock_env = envs[key].env
        self.wheels = envs.wheels
        self.patch = PATCHES / LAYOUTS[key]
        self.folder = folder
        self.env = self._patched(self._copy(self.stock_env, folder / "with-core"))
        self._bare: TileLangEnv | None = None

    def _copy(self, env: TileLangEnv, dest: Path) -> TileLangEnv:
        if self.key in VENDOR:
            return relabel(env, dest, *VENDOR[self.key])
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(env.path, dest, symlinks=True, copy_function=_link)
        return TileLangEnv(dest, env.key, build=False)

    def _patched(self, env: TileLangEnv) -> TileLangEnv:
        changed = apply_patch(env.site_packages, self.patch)
        assert changed and record_problems(env.site_packages, changed) == []
        return env

    @property
    def bare(self) -> TileLangEnv:
        """Patched, without tilelang-hostcg installed at all."""
        if self._bare is None:
            env = TileLangEnv(self.folder / "bare", self.key)  # a copy of the base: nothing of ours
            self._bare = self._patched(self._copy(env, self.folder / "bare-patched") if self.key in VENDOR else env)
        return self._bare


def _link(source: str, dest: str) -> None:
    import os
    os.link(source, dest)


@pytest.fixture(scope="module", params=params("0.1.15", "0.1.12", "0.1.11"))
def layout(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs,
           tmp_path_factory: pytest.TempPathFactory) -> Patched:
    return Patched(tilelang_envs, request.param, tmp_path_factory.mktemp(f"native-{request.param}"))


@pytest.fixture(scope="module")
def stock(layout: Patched) -> list[str]:
    """Stock TileLang's host code (the unpatched environment, activation off)."""
    out = layout.stock_env.run_json(SOURCES, env=OFF)
    assert stamps(out["sources"]) == [[False, False]] * 2
    return out["sources"]  # type: ignore[no-any-return]


@pytest.fixture
def with_stamp(layout: Patched) -> Any:
    layout.env.pip("install", "-q", "--no-deps", str(layout.wheels["tilelang-hostcg-stamp"]))
    try:
        yield layout.env
    finally:
        layout.env.pip("uninstall", "-q", "-y", "tilelang-hostcg-stamp")


def test_with_the_core_and_no_plugin_the_host_code_is_stocks(layout, stock):
    out = layout.env.run_json(SOURCES)
    assert out["sources"] == stock
    assert out["state"]["own"] and out["state"]["declared"]
    assert out["state"]["calls"] and out["state"]["calls"]["tilelang"] > 0  # TileLang called the API itself


def test_without_the_core_the_patched_tilelang_is_stock(layout, stock):
    out = layout.bare.run_json(SOURCES)
    assert out["sources"] == stock
    assert out["state"]["calls"] is None and out["state"]["own"]
    probe = layout.bare.python_run("import tilelang_hostcg")
    assert probe.returncode != 0 and "ModuleNotFoundError" in probe.stderr


def test_a_plugins_codegen_and_hook_build_and_no_function_is_replaced(layout, stock, with_stamp):
    out = with_stamp.run_json(SOURCES)
    assert stamps(out["sources"]) == [[True, True]] * 2
    assert out["state"]["own"] and set(out["state"]["declared"].values()) == {1}
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
    assert out["sources"] == stock  # TileLang's own codegen and hooks served
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


@pytest.fixture(scope="module", params=params("0.1.11"))
def hard_coded(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs,
               tmp_path_factory: pytest.TempPathFactory) -> Patched:
    return Patched(tilelang_envs, request.param, tmp_path_factory.mktemp(f"hard-coded-{request.param}"))


def test_the_hard_coded_layout_refused_when_routed_gets_plugins_natively(hard_coded):
    """A vendor's build of the hard-coded layout: stock, the stamp plugin installed, is refused with one
    warning and builds stock host code; patched natively, the plugin builds its host code."""
    wheel = str(hard_coded.wheels["tilelang-hostcg-stamp"])
    refused_env = relabel(hard_coded.stock_env, hard_coded.folder / "vendor-stock", *VENDOR["0.1.11"])
    for env in (refused_env, hard_coded.env):
        env.pip("install", "-q", "--no-deps", wheel)
    try:
        refused = refused_env.run(SOURCES)
        native = hard_coded.env.run_json(SOURCES)
    finally:
        hard_coded.env.pip("uninstall", "-q", "-y", "tilelang-hostcg-stamp")
    assert refused.returncode == 0, refused.stderr
    assert stamps(json.loads(refused.stdout.strip().splitlines()[-1])["sources"]) == [[False, False]] * 2
    assert "lacks the integration point" in refused.stderr and "tilelang-vendor 0.1.11" in refused.stderr
    assert stamps(native["sources"]) == [[True, True]] * 2
    assert native["state"]["declared"] == {"tilelang.engine.lower": 1} and native["state"]["own"]

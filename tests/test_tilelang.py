"""tilelang_hostcg with a real TileLang (0.1.15, 0.1.12, and PaddlePaddle's build
``tilelang-paddle`` 0.1.13, which the integration enters as it enters 0.1.12), in
virtual environments of their own: installing changes nothing else, ``install()`` keeps host code stock until a
plugin opts in, a pip-installed plugin decides the host code of real kernels, the kernel
cache follows the plugin set, ``uninstall()`` restores TileLang, and the CLI works."""

from __future__ import annotations

import pytest

from .tilelang_env import KERNELS, POINTS, TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]

VERSIONS = ("0.1.15", "0.1.12", "paddle-0.1.13")
OUR_DEPENDENCIES = {"importlib-metadata", "packaging"}
STAMPS = ("tilelang_hostcg_stamp_codegen", "tilelang_hostcg_stamp_hook")


@pytest.fixture(scope="module", params=params(*VERSIONS))
def tl(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs) -> dict:
    """A TileLang environment with the project installed by a plain ``pip install`` (of
    its wheel, dependencies resolved), and the installed set before and after."""
    install = tilelang_envs[request.param]
    return {"env": install.env, "distribution": install.env.distribution, "version": install.env.version,
            "before": install.before, "after": install.after, "wheels": tilelang_envs.wheels}


def changes(before: dict[str, str], after: dict[str, str]) -> dict[str, tuple]:
    return {name: (before.get(name), after.get(name)) for name in sorted({*before, *after})
            if before.get(name) != after.get(name)}


def test_plain_install_changes_no_other_package(tl):
    changed = changes(tl["before"], tl["after"])
    assert changed.pop("tilelang-hostcg")[0] is None
    # Nothing installed is upgraded, downgraded or removed; what is added are our own
    # small dependencies (importlib-metadata, packaging and theirs), never a TVM.
    assert all(old is None for old, _ in changed.values()), changed
    assert {"importlib-metadata", "packaging"} & set(changed) <= OUR_DEPENDENCIES
    assert not [name for name in changed if "tvm" in name or name.startswith("tilelang") or name == "torch"]
    assert "apache-tvm" not in tl["after"]
    assert tl["after"][tl["distribution"]] == tl["version"]
    assert not {"tilelang", "tilelang-paddle"} - {tl["distribution"]} & set(tl["after"])  # no other build
    tl["env"].pip("check")  # every installed distribution's requirements are met (raises if not)
    out = tl["env"].run_json("""
        import json, tilelang, tvm, tilelang_hostcg
        print(json.dumps({"tilelang": tilelang.__version__, "tvm": tvm.__file__}))
    """)
    assert out["tilelang"] == tl["version"]
    assert "3rdparty" in out["tvm"]


def test_cli_names_tilelangs_tvm(tl):
    *runs, explain = tl["env"].cli_each(("list",), ("check",), ("explain", "c"), ("explain", "llvm"))
    for proc in runs:
        assert proc.returncode == 0, (proc.args, proc.stdout, proc.stderr)
        assert f"bundled with {tl['distribution']} {tl['version']}" in proc.stdout, (proc.args, proc.stdout)
    assert explain.returncode == 1  # TileLang's TVM has no LLVM: nothing resolves, and it says so
    assert "target.build.llvm" in explain.stdout + explain.stderr


def test_install_without_plugins_keeps_tilelang_stock(tl):
    out = tl["env"].run_json(KERNELS + """
import json
import tilelang_hostcg, tilelang_hostcg.tilelang as integration

stock = [host_source(elementwise()), host_source(gemm())]
current = integration_points
originals = current()
integration.install()
integration.install()
patched = current()
registry = tilelang_hostcg.default_registry()
defaults = sorted([r.kind, r.name, r.origin.distribution, r.origin.version, r.default]
                  for r in registry.registrations())
with_integration = [host_source(elementwise()), host_source(gemm())]
integration.uninstall()
restored = current()
after = [host_source(elementwise()), host_source(gemm())]
integration.install()
again = [host_source(elementwise()), host_source(gemm())]
integration.uninstall()
print(json.dumps({
    "same_with": with_integration == stock, "same_after": after == stock,
    "same_again": again == stock, "gemm_len": len(stock[1]),
    "patched": [a is not b for a, b in zip(originals, patched)],
    "restored": [a is b for a, b in zip(originals, restored)],
    "defaults": defaults, "left": [r.name for r in registry.registrations()
                                   if r.origin.distribution.startswith("tilelang")
                                   and r.origin.distribution != "tilelang-hostcg"],
}))
""")
    assert out["same_with"] and out["same_after"] and out["same_again"]
    assert out["gemm_len"] > 1000
    assert out["patched"] == [True] * POINTS
    assert out["restored"] == [True] * POINTS
    v = tl["version"]
    assert ["c", "tilelang-c", tl["distribution"], v, True] in out["defaults"]  # the build in use
    assert out["left"] == []


@pytest.fixture
def with_stamp(tl):
    """The example plugin, installed by a plain ``pip install`` (of its wheel); removed
    afterwards."""
    env = tl["env"]
    before = env.freeze()
    env.pip("install", "-q", str(tl["wheels"]["tilelang-hostcg-stamp"]))
    try:
        yield changes(before, env.freeze())
    finally:
        env.pip("uninstall", "-q", "-y", "tilelang-hostcg-stamp")


def test_plugin_decides_tilelangs_host_code(tl, with_stamp):
    assert with_stamp == {"tilelang-hostcg-stamp": (None, "0.1.0")}
    out = tl["env"].run_json(KERNELS + """
import json
import tilelang_hostcg, tilelang_hostcg.tilelang as integration
stock = [host_source(elementwise()), host_source(gemm())]
integration.install()
ours = [host_source(elementwise()), host_source(gemm())]
registry = tilelang_hostcg.default_registry()
chosen = registry.resolve_host_codegen(Target("c")).name
integration.uninstall()
after = [host_source(elementwise()), host_source(gemm())]
print(json.dumps({"stock": [[s in src for s in STAMPS] for src in stock],
                  "ours": [[s in src for s in STAMPS] for src in ours],
                  "after_is_stock": after == stock, "chosen": chosen}))
""".replace("STAMPS", repr(STAMPS)), env={"TILELANG_HOSTCG_AUTO_INSTALL": "0"})  # install() by hand
    assert out["stock"] == [[False, False], [False, False]]
    assert out["ours"] == [[True, True], [True, True]]  # codegen and hook, both kernels
    assert out["after_is_stock"]
    assert out["chosen"] == "stamp_c"
    explain = tl["env"].cli("explain", "cuda", "--host", "c")
    assert explain.returncode == 0 and "stamp_c" in explain.stdout and "stamp_cuda" in explain.stdout



RIVAL = """
import functools, json, warnings
import tilelang_hostcg.tilelang as integration

originals = integration_points()
stock = host_source(elementwise())
integration.install()
try:  # another package wraps the replacement of TileLang's codegen choice, and calls it
    import tilelang.backend.module as m
    owner, name = m.BackendModule, "get_host_codegen"
    found = owner.__dict__[name]
except ImportError:
    import importlib
    owner, name = importlib.import_module("tilelang.engine.lower"), "resolve_host_codegen"
    found = getattr(owner, name)


@functools.wraps(found)
def rival(*args):
    return found(*args)


setattr(owner, name, rival)
wrapped = host_source(elementwise())
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    integration.uninstall()
after = host_source(elementwise())
now = integration_points()
print(json.dumps({"wrapped": [s in wrapped for s in STAMPS], "after": [s in after for s in STAMPS],
                  "after_is_stock": after == stock, "kept": now[0] is rival,
                  "restored": [a is b for a, b in zip(originals[1:], now[1:])],
                  "installed": integration.is_installed(), "warnings": [str(w.message) for w in caught]}))
"""


def test_uninstall_leaves_another_packages_wrapper_and_tilelangs_own_serves(tl, with_stamp):
    out = tl["env"].run_json(KERNELS + RIVAL.replace("STAMPS", repr(STAMPS)),
                             env={"TILELANG_HOSTCG_AUTO_INSTALL": "0"})  # install() by hand
    assert out["wrapped"] == [True, True]  # the plugin's codegen through the wrapper, and its hook
    assert out["kept"] and out["restored"] == [True] * (POINTS - 1)  # the wrapper stays; the rest is TileLang's
    assert out["after"] == [False, False] and out["after_is_stock"]  # ours in the wrapper hands on to TileLang's
    assert out["installed"] is False
    (warning,) = out["warnings"]
    attribute = "get_host_codegen" if tl["version"] == "0.1.15" else "resolve_host_codegen"
    assert "uninstall() left tilelang." in warning and f".{attribute} as it is" in warning, warning
    assert "'__main__'" in warning and "hands every call to TileLang's original" in warning, warning


def test_build_host_builds_what_the_plugins_hook_returns(tl, with_stamp):
    # tilelang_hostcg.build_host(mod, host, device) with TileLang's TVM: the codegen (one
    # registered in code above the plugin's, recording what it gets) receives the host
    # module with the stamp plugin's hook function, and the built C source has it.
    out = tl["env"].run_json("""
        import json
        import tilelang, tvm  # TileLang's TVM: importable after tilelang
        import tilelang_hostcg
        from tilelang_hostcg_stamp.codegen import build_stamped_c

        received = []

        def recording(mod, target_host):
            received.append(sorted(gvar.name_hint for gvar in mod.functions))
            return build_stamped_c(mod, target_host)

        tilelang_hostcg.register_host_codegen("c", tilelang_hostcg.HostCodegen(
            "recording", recording, priority=20))
        device = {"kind": "cuda", "arch": "sm_90a"}
        with_device = tilelang_hostcg.build_host(tvm.IRModule({}), "c", device)
        host_only = tilelang_hostcg.build_host(tvm.IRModule({}), "c")
        print(json.dumps({"received": received, "kind": with_device.kind,
                          "with_device": [s in with_device.inspect_source() for s in STAMPS],
                          "host_only": [s in host_only.inspect_source() for s in STAMPS]}))
    """.replace("STAMPS", repr(STAMPS)), env={"TILELANG_HOSTCG_AUTO_INSTALL": "0"})
    assert out["received"] == [[STAMPS[1]], []]  # the hook's function, for the device build only
    assert out["kind"] == "c"
    assert out["with_device"] == [True, True]
    assert out["host_only"] == [True, False]

COMPILE = KERNELS + """
import json, os
import tilelang_hostcg.tilelang as integration
integration.install()
kernel = tilelang.compile(elementwise(), target=SM80, execution_backend="tvm_ffi")
root = os.environ["TILELANG_CACHE_DIR"]
entries = sum(len(files) for _, _, files in os.walk(root))
print(json.dumps({"stamped": [s in kernel.get_host_source() for s in STAMPS], "entries": entries}))
""".replace("STAMPS", repr(STAMPS))


@pytest.mark.needs_tool("nvcc", why="tilelang.compile for CUDA runs it")
def test_kernel_cache_follows_the_plugin_set(tl, tmp_path):
    env = tl["env"]
    cache = {"TILELANG_CACHE_DIR": str(tmp_path / "kernel-cache")}
    env.pip("install", "-q", str(tl["wheels"]["tilelang-hostcg-stamp"]))
    try:
        first = env.run_json(COMPILE, env=cache)
        hit = env.run_json(COMPILE, env=cache)  # fresh process, same plugin set
    finally:
        env.pip("uninstall", "-q", "-y", "tilelang-hostcg-stamp")
    removed = env.run_json(COMPILE, env=cache)  # fresh process, cache warm, plugin gone
    assert first["stamped"] == [True, True]
    assert hit == first  # served from the cache: no new entry
    assert removed["stamped"] == [False, False]  # never the stale stamped kernel
    assert removed["entries"] > first["entries"]


AUTOTUNE_KEY = KERNELS + """
import inspect, json
import tilelang_hostcg.tilelang as integration
from tilelang.autotuner import AutoTuner


def tuned(block=128):
    return elementwise(block=block)


def key():
    tuner = AutoTuner.from_kernel(kernel=tuned, configs=[{"block": 128}, {"block": 256}])
    tuner.set_compile_args(target=SM80)
    tuner.set_kernel_parameters(((), ()), {})
    return tuner.generate_cache_key(dict(inspect.signature(tuned).parameters), {})


original = AutoTuner.__dict__["generate_cache_key"]
stock = key()
integration.install()
ours = key()
integration.uninstall()
print(json.dumps({"stock": stock, "ours": ours, "after": key(),
                  "restored": AutoTuner.__dict__["generate_cache_key"] is original}))
"""


def test_the_autotuners_cache_key_follows_the_plugin_set(tl):
    """``@tilelang.autotune`` caches tuned kernels, host code included, under
    ``AutoTuner.generate_cache_key``: with the integration the key also holds what the
    plugins run, so a kernel tuned before a plugin was installed is not served after; with
    no plugin it is TileLang's own key (no GPU is needed to compute a key)."""
    env = tl["env"]
    off = {"TILELANG_HOSTCG_AUTO_INSTALL": "0"}  # install() by hand
    bare, again = env.run_json(AUTOTUNE_KEY, env=off), env.run_json(AUTOTUNE_KEY, env=off)
    env.pip("install", "-q", str(tl["wheels"]["tilelang-hostcg-stamp"]))
    try:
        stamped = env.run_json(AUTOTUNE_KEY, env=off)
    finally:
        env.pip("uninstall", "-q", "-y", "tilelang-hostcg-stamp")
    assert bare == again  # the same installed set: the same keys, in a fresh process
    assert bare["ours"] == bare["stock"]  # nothing third-party runs: TileLang's own key, byte for byte
    assert stamped["ours"] != bare["ours"]  # the stamp plugin's codegen and hook count
    for out in (bare, stamped):
        assert out["stock"] == bare["stock"]  # TileLang's own key knows no plugin ...
        assert out["after"] == out["stock"] and out["restored"]  # ... and uninstall() puts it back


def test_build_works_with_tilelangs_tvm(tl):
    out = tl["env"].run_json("""
        import json
        import os
        import tilelang, tvm  # TileLang's TVM: importable after tilelang
        import tilelang_hostcg
        from tvm.script import tirx as T

        @T.prim_func
        def add_one(a: T.handle, b: T.handle):
            A = T.match_buffer(a, (16,), "float32")
            B = T.match_buffer(b, (16,), "float32")
            for i in range(16):
                B[i] = A[i] + T.float32(1)

        module = tilelang_hostcg.build(add_one, "c")
        bundled = os.path.dirname(tvm.__file__).startswith(os.path.dirname(tilelang.__file__))
        print(json.dumps({"kind": module.kind, "source": "add_one" in module.inspect_source(),
                          "bundled": bundled, "llvm": tvm.runtime.enabled("llvm")}))
    """)
    assert out == {"kind": "c", "source": True, "bundled": True, "llvm": False}


def test_a_codegen_returning_the_wrong_type_is_named_in_tilelangs_build(tl):
    out = tl["env"].run_json(KERNELS + """
import json
import tilelang_hostcg, tilelang_hostcg.tilelang as integration
integration.install()
tilelang_hostcg.register_host_codegen("c", tilelang_hostcg.HostCodegen("returns-none", lambda m, t: None))
try:
    host_source(elementwise())
    error = None
except Exception as exc:
    error = {"type": type(exc).__name__, "message": str(exc),
             "bases": [c.__name__ for c in type(exc).__mro__]}
integration.uninstall()
print(json.dumps({"error": error}))
""")
    error = out["error"]
    assert error is not None and error["type"] == "PluginCallbackError", error
    assert "'returns-none' (registered in code) returned None" in error["message"]
    assert {"HostCodegenError", "TypeError"} <= set(error["bases"])

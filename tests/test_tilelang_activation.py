"""Activation without code, with a real TileLang (0.1.15, 0.1.12 and PaddlePaddle's
``tilelang-paddle`` 0.1.13) in environments of its own: an unchanged TileLang program
picks up a pip-installed plugin (in spawned workers too, with editable installs too),
TileLang is untouched without one or with the off switches, a failure is one warning and
stock TileLang, and ``install()`` from a plugin's import keeps TileLang's defaults
TileLang's."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tilelang_hostcg.testing import write_distribution

from .tilelang_env import INTEGRATION_POINTS, KERNELS, POINTS, ROOT, TileLangEnv, TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]

VERSIONS = ("0.1.15", "0.1.12", "paddle-0.1.13")
STAMPS = ("tilelang_hostcg_stamp_codegen", "tilelang_hostcg_stamp_hook")
OFF = {"TILELANG_HOSTCG_AUTO_INSTALL": "0"}

# What a script reports about TileLang: which of the attributes the integration replaces
# are ours, TileLang's module loader, and what of tilelang-hostcg the process imported.
PROBE = f"""
import json, sys

STAMPS = {STAMPS!r}


def stamps(source):
    return [s in source for s in STAMPS]


{INTEGRATION_POINTS}

replaced = integration_points


def tilelang_state():
    return {{
        "ours": [getattr(f, "__module__", "").startswith("tilelang_hostcg") for f in replaced()],
        "loader": type(tilelang.__loader__).__name__,
        "spec_loader": tilelang.__spec__.loader is tilelang.__loader__,
        "hook_left": [type(f).__module__ for f in sys.meta_path
                      if type(f).__module__ == "_tilelang_hostcg_hook"],
        "installed": sys.modules["tilelang_hostcg.tilelang"].is_installed()
                     if "tilelang_hostcg.tilelang" in sys.modules else False,
    }}
"""

UNCHANGED = KERNELS + PROBE + """
print(json.dumps({"sources": [host_source(elementwise()), host_source(gemm())],
                  "state": tilelang_state()}))
"""
"""An unchanged TileLang program (plus the probe): two kernels' host sources."""

UNTOUCHED = {"ours": [False] * POINTS, "loader": "SourceFileLoader", "spec_loader": True,
             "hook_left": [], "installed": False}


@pytest.fixture(scope="module", params=params(*VERSIONS))
def env(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs) -> TileLangEnv:
    """A TileLang environment with tilelang-hostcg installed by a plain ``pip install``."""
    return tilelang_envs[request.param].env


def copy_plugin(tmp_path: Path) -> Path:
    source = tmp_path / "tilelang-hostcg-stamp"
    shutil.copytree(ROOT / "plugins" / "tilelang-hostcg-stamp", source,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    return source


@pytest.fixture(scope="module")
def stamp_wheel(tilelang_envs: TileLangEnvs) -> Path:
    """The example plugin's wheel, built once per session (installing a wheel is much
    faster than a source tree)."""
    return tilelang_envs.wheels["tilelang-hostcg-stamp"]


@pytest.fixture(scope="module")
def stock(env: TileLangEnv) -> list[str]:
    """The host sources of stock TileLang (activation off, no plugin installed)."""
    out = env.run_json(UNCHANGED, env=OFF)
    assert out["state"] == UNTOUCHED
    return out["sources"]


def test_without_a_plugin_tilelang_is_untouched(env, stock):
    out = env.run_json(UNCHANGED)
    assert out["sources"] == stock
    assert out["state"] == UNTOUCHED


def test_an_unchanged_program_picks_up_a_pip_installed_plugin(env, stock, stamp_wheel):
    env.pip("install", "-q", "--no-deps", str(stamp_wheel))
    try:
        # The unchanged program, then, in the same process, uninstall(): it undoes the
        # automatic activation, and TileLang's very objects come back.
        on, undone = env.run_json(KERNELS + PROBE + """
on = {"sources": [host_source(elementwise()), host_source(gemm())], "state": tilelang_state()}
import tilelang_hostcg.tilelang as integration
active = replaced()
integration.uninstall()
back = replaced()
print(json.dumps([on, {"back": [b is a.__wrapped__ for a, b in zip(active, back)],
                       "source": host_source(elementwise()), "state": tilelang_state()}]))
""")
        off = env.run_json(UNCHANGED, env=OFF)
        no_autoload = env.run_json(UNCHANGED, env={"TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD": "1"})
    finally:
        env.pip("uninstall", "-q", "-y", "tilelang-hostcg-stamp")
    removed = env.run_json(UNCHANGED)
    assert [stamps_of(s) for s in on["sources"]] == [[True, True], [True, True]]
    assert on["state"]["ours"] == [True] * POINTS and on["state"]["installed"]
    assert on["state"]["loader"] == "SourceFileLoader" and on["state"]["spec_loader"]
    assert on["state"]["hook_left"] == []  # the finder left sys.meta_path
    for out in (off, no_autoload, removed):
        assert out["sources"] == stock  # byte-identical
        assert out["state"] == UNTOUCHED
    assert undone["back"] == [True] * POINTS
    assert undone["source"] == stock[0] and undone["state"] == UNTOUCHED


def stamps_of(source: str) -> list[bool]:
    return [s in source for s in STAMPS]


@pytest.fixture(scope="class")
def stamp_installed(env: TileLangEnv, stamp_wheel: Path) -> Iterator[None]:
    env.pip("install", "-q", "--no-deps", str(stamp_wheel))
    yield
    env.pip("uninstall", "-q", "-y", "tilelang-hostcg-stamp")


@pytest.mark.usefixtures("stamp_installed")
class TestWithTheStampPluginInstalled:
    """Tests that run with the example plugin installed (by ``pip install`` of its wheel,
    once for the class, and uninstalled afterwards)."""

    def test_the_off_switch_imports_nothing_of_ours(self, env):
        out = env.run_json("""
            import json, sys
            import tilelang
            print(json.dumps(sorted(m for m in sys.modules if m.startswith("tilelang_hostcg"))))
        """, env=OFF)
        assert out == []

    def test_activation_decides_without_judging_requirements(self, env):
        """Stock ``import tilelang`` never imports ``packaging.requirements``; activation
        decides on what is advertised and leaves it so. The requirement verdicts come with
        the default registry's own discovery, at its first use."""
        probe = """
            import json, sys
            import tilelang
            import tilelang_hostcg.tilelang as integration
            at_import = "packaging.requirements" in sys.modules
            import tilelang_hostcg
            states = {s.origin.distribution: s.state for s in
                      tilelang_hostcg.default_registry().sources()}
            print(json.dumps({"at_import": at_import, "installed": integration.is_installed(),
                              "after_first_use": "packaging.requirements" in sys.modules,
                              "stamp": states.get("tilelang-hostcg-stamp")}))
        """
        on, off = env.run_json(probe), env.run_json(probe, env=OFF)
        assert on == {"at_import": False, "installed": True, "after_first_use": True,
                      "stamp": "lazy"}
        assert off == dict(on, installed=False)

    def test_only_an_import_activates_and_once(self, env):
        """A look at TileLang (``importlib.util.find_spec``, the command line's look at the
        TVM in use) and a first ``import tilelang`` that fails leave activation to the
        import that succeeds; ``activate`` (an internal, counted here) runs once."""
        out = env.run_json(PROBE + """
import contextlib, importlib.util, io
import tilelang_hostcg.tilelang._activation as activation
from tilelang_hostcg.cli import main

calls = []
stock_activate = activation.activate
activation.activate = lambda: (calls.append(1), stock_activate())[1]
spec = importlib.util.find_spec("tilelang")
with contextlib.redirect_stdout(io.StringIO()):
    main(["list"])
sys.modules["torch"] = None  # a broken environment: TileLang's import fails ...
try:
    import tilelang
except ImportError as exc:
    failed = str(exc)
del sys.modules["torch"]  # ... is repaired, and the import retried
import tilelang
import tilelang  # and again, and a reload: nothing more
importlib.reload(tilelang)
print(json.dumps({"failed": failed, "calls": len(calls), "state": tilelang_state(),
                  "spec": spec is not None}))
""")
        assert "torch" in out["failed"] and out["spec"]
        assert out["calls"] == 1
        assert out["state"]["installed"] and out["state"]["ours"] == [True] * POINTS
        assert out["state"]["hook_left"] == []

    def test_spawned_workers_activate_too(self, env, stock):
        out = env.run_json(KERNELS + PROBE + """
import multiprocessing


def child():
    return {"source": host_source(elementwise()), "state": tilelang_state()}


if __name__ == "__main__":
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        worker = pool.apply(child)
    print(json.dumps({"worker": worker, "parent": tilelang_state()}))
""")
        assert stamps_of(out["worker"]["source"]) == [True, True]
        assert out["worker"]["state"]["installed"] and out["parent"]["installed"]

    def test_a_failed_activation_is_one_warning_and_stock_tilelang(self, env, stock):
        # Code that claims TileLang's default name before importing TileLang: install()
        # fails half-way, and must leave TileLang and the registry as they were.
        out = env.run_json("""
import warnings
warnings.simplefilter("always")
import tilelang_hostcg
tilelang_hostcg.register_host_codegen("c", tilelang_hostcg.HostCodegen("tilelang-c", lambda m, t: m))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
""" + "\n".join("    " + line for line in KERNELS.splitlines()) + "\n" + PROBE + """
registry = tilelang_hostcg.default_registry()
print(json.dumps({
    "warnings": [[w.category.__name__, str(w.message), w.filename == __file__] for w in caught],
    "source": host_source(elementwise()), "state": tilelang_state(),
    "tilelang_owned": [r.name for g in ("tilelang.host_codegen", "tilelang.host_codegen_hooks")
                       for r in registry.registrations(g) if r.origin.distribution == TL_DIST],
}))
""".replace("TL_DIST", repr(env.distribution)))
        [(category, message, at_user_line)] = out["warnings"]
        assert category == "ActivationFailedPluginWarning" and at_user_line
        assert "DuplicateRegistrationError" in message and "'tilelang-c'" in message
        assert "TILELANG_HOSTCG_AUTO_INSTALL=0" in message
        assert out["state"]["ours"] == [False] * POINTS and not out["state"]["installed"]
        assert out["tilelang_owned"] == []
        assert out["source"] == stock[0]

    def test_a_prefer_typo_warning_points_at_the_users_line(self, env):
        out = env.run_json(KERNELS + PROBE + """
import linecache, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    host_source(elementwise())
print(json.dumps([[str(w.message), w.filename == __file__,
                   linecache.getline(w.filename, w.lineno).strip()] for w in caught]))
""", env={"TILELANG_HOSTCG_PREFER": "c=no-such-codegen"})
        [(message, in_script, line)] = [w for w in out if "no-such-codegen" in w[0]]
        assert in_script and "tilelang.lower(" in line, (message, line)

    def test_install_from_threads_while_tilelang_is_imported(self, env):
        """Threads calling install() while the main thread's ``import tilelang`` activates the
        integration: no deadlock, one installation, TileLang's defaults registered once."""
        out = env.run_json(PROBE.replace("import json, sys", "import json, sys, threading") + """
import tilelang_hostcg, tilelang_hostcg.tilelang as integration
threads = [threading.Thread(target=integration.install) for _ in range(4)]
for thread in threads:
    thread.start()
import tilelang
for thread in threads:
    thread.join(120)
registry = tilelang_hostcg.default_registry()
print(json.dumps({
    "alive": [thread.is_alive() for thread in threads], "state": tilelang_state(),
    "wrapped": [f.__wrapped__.__module__.startswith("tilelang.") for f in replaced()],
    "defaults": sorted(r.name for r in registry.registrations() if r.origin.distribution == TL_DIST),
}))
""".replace("TL_DIST", repr(env.distribution)))
        assert out["alive"] == [False] * 4
        assert out["state"]["installed"] and out["state"]["ours"] == [True] * POINTS
        assert out["wrapped"] == [True] * POINTS  # patched once: each wraps TileLang's own
        assert len(out["defaults"]) == len(set(out["defaults"])) and "tilelang-c" in out["defaults"]


def plugin_calling_install(tmp_path: Path, *, fails: bool) -> Path:
    """A plugin for TileLang users that turns the integration on in its own import."""
    return write_distribution(tmp_path / ("bad" if fails else "good"), "tl-self-install", "1.0",
                              entry_points={"tilelang.host_codegen": {"c": "tl_self_install.codegen"}},
                              requires=["tilelang-hostcg"], files={
        "tl_self_install/__init__.py": "",
        "tl_self_install/codegen.py": f"""
            import tilelang_hostcg
            import tilelang_hostcg.tilelang

            tilelang_hostcg.tilelang.install()


            def build(mod, target):
                import tvm
                for name in ("target.build.tilelang_c_host", "target.build.c"):
                    func = tvm.get_global_func(name, allow_missing=True)
                    if func is not None:
                        return func(mod, target)


            tilelang_hostcg.register_host_codegen(
                "c", tilelang_hostcg.HostCodegen("self-installed", build, priority=5))
            if {fails!r}:
                raise RuntimeError("half-way")
        """})


SELF_INSTALL = KERNELS + PROBE + """
import warnings
import tilelang_hostcg
registry = tilelang_hostcg.default_registry()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    chosen = registry.resolve_host_codegen(Target("c")).name  # loads the plugin
    source = host_source(elementwise())
print(json.dumps({
    "chosen": chosen, "source": source, "state": tilelang_state(),
    "sources": [[s.origin.distribution, s.state] for s in registry.sources()
                if s.origin.distribution == "tl-self-install"],
    "regs": sorted([r.name, r.origin.distribution, r.default] for r in registry.registrations()),
    "warnings": [str(w.message) for w in caught],
}))
"""


@pytest.mark.parametrize("fails", [False, True], ids=["loads", "fails-half-way"])
def test_install_from_a_plugins_import_keeps_tilelangs_defaults_tilelangs(env, stock, tmp_path, fails):
    env.pip("install", "-q", "--no-deps", "--no-build-isolation",
            str(plugin_calling_install(tmp_path, fails=fails)))
    try:
        out = env.run_json(SELF_INSTALL, env=OFF)  # only the plugin's own call installs
    finally:
        env.pip("uninstall", "-q", "-y", "tl-self-install")
    assert out["state"]["installed"] and out["state"]["ours"] == [True] * POINTS
    assert ["tilelang-c", env.distribution, True] in out["regs"]  # TileLang's, not the plugin's
    if not fails:
        assert out["sources"] == [["tl-self-install", "loaded"]]
        assert out["chosen"] == "self-installed"
        assert ["self-installed", "tl-self-install", False] in out["regs"]
    else:
        assert out["sources"] == [["tl-self-install", "broken"]]
        assert "half-way" in " ".join(out["warnings"])
        assert out["chosen"] == "tilelang-c"
        assert out["source"] == stock[0]  # TileLang's own host code, not TVM's target.build.c
        assert not [r for r in out["regs"] if r[1] == "tl-self-install"]


def test_tilelangs_own_bookkeeping_is_left_as_it_was(env):
    """install() then uninstall() leaves every container of TileLang's host-codegen module
    (0.1.12-0.1.13: ``tilelang.backend.host_codegen``, ``_LOADED_HOST_CODEGENS`` included;
    0.1.14-0.1.15: ``tilelang.backend.module`` and each backend's mappings) the same
    object with the same contents."""
    out = env.run_json(KERNELS + PROBE + """
import tilelang_hostcg.tilelang as integration
name = ("tilelang.backend.host_codegen" if "tilelang.backend.host_codegen" in sys.modules
        and hasattr(sys.modules["tilelang.backend.host_codegen"], "_LOADED_HOST_CODEGENS")
        else "tilelang.backend.module")
module = sys.modules[name]
held = {n: v for n, v in vars(module).items() if isinstance(v, (set, dict, list))}
for backend in getattr(module, "_BACKENDS", {}).values():
    held[backend.name + ".host_codegens"] = backend.host_codegens
    held[backend.name + ".host_codegen_hooks"] = backend.host_codegen_hooks
before = {n: (v, repr(v)) for n, v in held.items()}
integration.install()
integration.uninstall()
after = {n: getattr(module, n) if n in vars(module) else None for n in held}
for backend in getattr(module, "_BACKENDS", {}).values():
    after[backend.name + ".host_codegens"] = backend.host_codegens
    after[backend.name + ".host_codegen_hooks"] = backend.host_codegen_hooks
print(json.dumps({"module": name, "names": sorted(held),
                  "same": {n: after[n] is before[n][0] for n in held},
                  "equal": {n: repr(after[n]) == before[n][1] for n in held}}))
""", env=OFF)
    if env.version in ("0.1.12", "0.1.13"):  # the registry mode
        assert out["module"] == "tilelang.backend.host_codegen"
        assert "_LOADED_HOST_CODEGENS" in out["names"]
    else:
        assert out["module"] == "tilelang.backend.module"
        assert "_BACKENDS" in out["names"] and any(n.endswith(".host_codegens") for n in out["names"])
    assert all(out["same"].values()) and all(out["equal"].values()), out


def test_editable_installs_activate_too(env, stock, tmp_path, tilelang_envs):
    plugin = copy_plugin(tmp_path)
    try:
        env.pip("install", "-q", "-e", str(ROOT), "-e", str(plugin))
        out = env.run_json(UNCHANGED)
        where = env.run_json("""
            import json, _tilelang_hostcg_hook, tilelang_hostcg_stamp
            print(json.dumps([_tilelang_hostcg_hook.__file__, tilelang_hostcg_stamp.__file__]))
        """)
    finally:
        env.pip("uninstall", "-q", "-y", "tilelang-hostcg-stamp")
        tilelang_envs.restore(env.key)  # the plain install the other tests expect
    assert where == [str(ROOT / "_tilelang_hostcg_hook.py"),
                     str(plugin / "tilelang_hostcg_stamp" / "__init__.py")]
    assert [stamps_of(s) for s in out["sources"]] == [[True, True], [True, True]]
    assert out["state"]["installed"]

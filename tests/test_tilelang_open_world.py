"""Open world: a plugin reaches every TileLang that has the integration points, whatever its
distribution's name or version, and the command line tells the truth about it.

Real TileLang wheels (0.1.15's and 0.1.12's installed files) relabelled as an installer
writes metadata (:func:`~tests.tilelang_env.relabel`): the next releases (0.1.16, 0.2.0),
vendors' builds on both layouts (0.1.15's files as ``tilelang-musa``, 0.1.12's as
``tilelang-hygon``), an editable install, a build with an integration point renamed, builds
whose lowering no longer calls a point (its code edited away, or kept under a dead branch:
installed, and a build shows it is not used), and builds edited in ways that keep every point
working (a ``functools.wraps`` decorator on the lowering's ``host_codegen`` or on
``BackendModule.codegen_host``, a positional-only ``get_host_codegen``).
Each runs an unchanged program with the stamp plugin pip-installed. A contract test runs
the check of the integration points in every real TileLang environment CI builds.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .tilelang_env import KERNELS, TileLangEnv, TileLangEnvs, params, relabel

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]

STAMPS = ("tilelang_hostcg_stamp_codegen", "tilelang_hostcg_stamp_hook")
OFF = {"TILELANG_HOSTCG_AUTO_INSTALL": "0"}
DECORATOR = "@(lambda f: __import__('functools').wraps(f)(lambda *a, **k: f(*a, **k)))"
MODULE = "tilelang/backend/module.py"
CODEGEN_CALL = "return self.get_host_codegen(target_host).lower(mod, target_host)"
HELPER = '''
class _HostCodegens:
    """A backend's host codegens, by the host target's kind."""

    def __init__(self, codegens):
        self.codegens = codegens

    def get_host_codegen(self, target_host):
        return self.codegens[target_host.kind.name]

'''
ALIAS = '''    def get_host_codegen(self, target_host: Target) -> HostCodegen:
        """Deprecated: use select_host_codegen."""
        __import__("logging").getLogger(__name__).warning("get_host_codegen is deprecated: use select_host_codegen")
        return self.select_host_codegen(target_host)

'''
LEGACY_FLAG = '''    if __import__("os").environ.get("TILELANG_LEGACY_HOST_CODEGEN") == "1":
        host_mod = context.preprocess_host_codegen(host_mod)
        return context.codegen_host(host_mod)
    return context.module.host_codegens[target_host.kind.name].lower(host_mod, target_host)
'''
CASES = {  # id: the real environment whose files are relabelled, the name and version, options
    "as-0.1.16": ("0.1.15", "tilelang", "0.1.16", {}),
    "as-0.2.0": ("0.1.15", "tilelang", "0.2.0", {}),
    "as-musa": ("0.1.15", "tilelang-musa", "0.1.15", {}),
    "editable": ("0.1.15", "tilelang", "0.1.15", {"editable": True}),
    "as-hygon": ("0.1.12", "tilelang-hygon", "0.1.12", {}),
    "renamed-point": ("0.1.15", "tilelang", "0.1.16",
                      {"rename": ("tilelang/backend/module.py", "get_host_codegen", "select_host_codegen")}),
    # The point is still there, but the lowering no longer calls it (a leftover of another release).
    "leftover-point": ("0.1.15", "tilelang", "0.1.16",
                       {"rename": ("tilelang/backend/module.py",
                                   "return self.get_host_codegen(target_host).lower(mod, target_host)",
                                   "return self.host_codegens[target_host.kind.name].lower(mod, target_host)")}),
    # The call kept only under a dead branch: the code still names the point, no build calls it.
    "dead-branch": ("0.1.15", "tilelang", "0.1.16",
                    {"rename": ("tilelang/backend/module.py",
                                "return self.get_host_codegen(target_host).lower(mod, target_host)",
                                "if globals().get('_LEGACY'):\n"
                                "            return self.get_host_codegen(target_host).lower(mod, target_host)\n"
                                "        return self.host_codegens[target_host.kind.name].lower(mod, target_host)")}),
    # The lowering calls a same-named method of a helper object.
    "same-named-helper": ("0.1.15", "tilelang", "0.1.16",
                          {"rename": [(MODULE, CODEGEN_CALL, "return _HostCodegens(self.host_codegens)"
                                       ".get_host_codegen(target_host).lower(mod, target_host)"),
                                      (MODULE, "\n_BACKENDS: dict", HELPER + "\n_BACKENDS: dict")]}),
    # The point renamed; the old name a deprecated alias that only a log message mentions.
    "renamed-alias": ("0.1.15", "tilelang", "0.1.16",
                      {"rename": [(MODULE, "    def get_host_codegen(self, target_host: Target) -> HostCodegen:",
                                   ALIAS + "    def select_host_codegen(self, target_host: Target) -> HostCodegen:"),
                                  (MODULE, CODEGEN_CALL, CODEGEN_CALL.replace("self.get_", "self.select_"))]}),
    # The lowering builds host code without either point, keeping them only behind a legacy flag.
    "legacy-flag": ("0.1.15", "tilelang", "0.1.16",
                    {"rename": ("tilelang/engine/lower.py", "    host_mod = context.preprocess_host_codegen(host_mod)\n"
                                "    return context.codegen_host(host_mod)\n", LEGACY_FLAG)}),
    # The point gains **options, and the lowering passes one.
    "options": ("0.1.15", "tilelang", "0.1.16",
                {"rename": [(MODULE, "    def get_host_codegen(self, target_host: Target) -> HostCodegen:",
                             "    def get_host_codegen(self, target_host: Target, **options) -> HostCodegen:"),
                            (MODULE, CODEGEN_CALL,
                             CODEGEN_CALL.replace("(target_host)", '(target_host, purpose="host")'))]}),
    # Edits that keep every point working: a functools.wraps decorator on the lowering's host_codegen
    # and on BackendModule.codegen_host, a positional-only get_host_codegen.
    "decorated-lowering": ("0.1.15", "tilelang", "0.1.16",
                           {"rename": ("tilelang/engine/lower.py", "\ndef host_codegen(", "\n" + DECORATOR
                                       + "\ndef host_codegen(")}),
    "decorated-codegen-host": ("0.1.15", "tilelang", "0.1.16",
                               {"rename": ("tilelang/backend/module.py", "    def codegen_host(self, mod",
                                           f"    {DECORATOR}\n    def codegen_host(self, mod")}),
    "positional-only": ("0.1.15", "tilelang", "0.1.16",
                        {"rename": ("tilelang/backend/module.py", "def get_host_codegen(self, target_host: Target)",
                                    "def get_host_codegen(self, target_host: Target, /)")}),
}
REFUSED = {  # the refused cases: the point named, and why
    "renamed-point": "tilelang.backend.module.BackendModule.get_host_codegen (missing)",
}
BACKEND_MODULE = "tilelang.backend.module.BackendModule"
GET, PRE = f"{BACKEND_MODULE}.get_host_codegen", f"{BACKEND_MODULE}.preprocess_host_codegen"
NOT_NAMED = f"{GET}: the code of {BACKEND_MODULE}.codegen_host does not name it (a renamed or leftover point?)"
UNUSED = {  # every point there and of its shape, but builds do not use one: what reading the code hints
    "leftover-point": [NOT_NAMED],
    "dead-branch": [],  # the code names it: no hint, and the build still decides
    "same-named-helper": [],
    "renamed-alias": [NOT_NAMED],
    "legacy-flag": [],
    "options": [],
}
MISSED = {  # what the program's first build warns of, once: the points it did not call
    "legacy-flag": f"without calling {GET} (TileLang's code no longer reaches it) or {PRE} (TileLang's code no longer "
                   "reaches it), which tilelang_hostcg.tilelang replaced",
    "options": f"TileLang called {GET}, which tilelang_hostcg.tilelang replaced, with purpose=",
}
PROGRAM = KERNELS + """
import json, os
import tilelang_hostcg.tilelang as integration  # KERNELS imported TileLang: activation alone
if os.environ.get("HOSTCG_TEST_INSTALL"):
    integration.install()  # by hand, where activation has nothing to activate
before = integration.is_installed()  # before a build: what can be known
source = host_source(elementwise())
from tilelang_hostcg.environment._compiler import tvm_info
print(json.dumps({"stamps": [s in source for s in STAMPS], "installed": integration.is_installed(),
                  "before": before, "by_build": integration.CLIENT.live().by_build,
                  "source": source, "describe": tvm_info().describe()}))
""".replace("STAMPS", repr(STAMPS))


def _run(env: TileLangEnv, extra: dict[str, str] | None = None) -> dict:
    """:data:`PROGRAM`'s document, with the warnings of tilelang-hostcg it printed on stderr."""
    proc = env.run(PROGRAM, env=extra)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["warnings"] = [line for line in proc.stderr.splitlines() if "Warning: tilelang-hostcg" in line]
    return out


def _case(key: str) -> object:
    return pytest.param(key, marks=pytest.mark.xdist_group(f"tilelang-{CASES[key][0]}"),
                        id=f"tilelang-{CASES[key][0]}-{key}")


@pytest.fixture(scope="module", params=[_case(key) for key in CASES])
def case(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs) -> Iterator[tuple[str, TileLangEnv]]:
    """A copy of the real environment, relabelled, with the project and the stamp plugin."""
    base_key, name, version, options = CASES[request.param]
    base = tilelang_envs[base_key].env
    env = relabel(base, base.path.parent / f"relabelled-{request.param}", name, version, **options)
    env.pip("install", "-q", "--no-deps", str(tilelang_envs.wheels["tilelang-hostcg-stamp"]))
    yield request.param, env
    shutil.rmtree(env.path, ignore_errors=True)


def test_an_unchanged_program_gets_the_plugin_where_the_points_are(case: tuple[str, TileLangEnv],
                                                                   tmp_path: Path) -> None:
    key, env = case
    out, stock = _run(env), _run(env, OFF)
    assert out["describe"].endswith(f"bundled with {env.distribution} {env.version}")  # its name and version
    assert stock["stamps"] == [False, False] and stock["warnings"] == []
    listed, checked, strict, explained = env.cli_each(("list", "--json"), ("check", "--json"),
                                                      ("check", "--strict"), ("explain", "cuda", "--json"))
    assert json.loads(listed.stdout)["client"]["routed"] is None  # plain list cannot know, and says so
    client = json.loads(checked.stdout)["client"]
    probe = client.pop("probe")
    if key in UNUSED:  # installed; the program's first build (one warning) and check's probe build show it is not used
        assert out["before"] and not out["installed"] and out["by_build"], out
        (warning,) = out["warnings"]
        missed = MISSED.get(key, f"without calling {GET} (TileLang's code no longer reaches it), which")
        assert missed in warning and "TILELANG_HOSTCG_AUTO_INSTALL=0" in warning and "pip install" not in warning
        # The hooks' route is still called (but where the lowering no longer calls either point); the codegen's is not.
        assert out["stamps"] == [False, key != "legacy-flag"]
        assert probe["called"] is False and probe["hints"] == UNUSED[key] and "seconds" not in probe
        assert client["routed"] is False and client["active"] is None
        (problem,) = [p for p in json.loads(checked.stdout)["problems"] if p["code"] == "route-unused"]
        assert problem["severity"] == "warning" and "did not call the route" in problem["message"]
        assert checked.returncode == 0 and strict.returncode == 1 and "error [route-unused]" in strict.stdout
        return
    explained_client = json.loads(explained.stdout)["client"]
    assert explained_client.pop("probe") is None  # only check builds a probe
    if key not in REFUSED:
        assert out["stamps"] == [True, True] and out["installed"] and out["by_build"] and out["warnings"] == []
        assert client["active"] == "tilelang" and client["routed"] and strict.returncode == 0, strict.stdout
        assert probe == {"called": True, "confirmed": True, "text": "confirmed by a probe build", "hints": []}
        assert client["describe"].endswith(" (confirmed by a probe build)")  # as its Client: line says
        client["describe"] = client["describe"].removesuffix(" (confirmed by a probe build)")
        # TileLang's own codegen as the default (the plugin disabled): byte-identical to stock.
        plain = _run(env, {"TILELANG_HOSTCG_DISABLE": "tilelang-hostcg-stamp", "HOSTCG_TEST_INSTALL": "1"})
        assert plain["installed"] and plain["source"] == stock["source"]
    else:  # refused: one warning naming the point, no advice about the compiler, TileLang stock
        point = REFUSED[key]
        (warning,) = out["warnings"]
        assert point in warning and "tilelang_hostcg.build() still works" in warning
        assert "TILELANG_HOSTCG_AUTO_INSTALL=0" in warning and "pip install" not in warning
        assert out["stamps"] == [False, False] and not out["installed"] and out["source"] == stock["source"]
        (problem,) = [p for p in json.loads(checked.stdout)["problems"] if p["code"] == "client"]
        assert problem["severity"] == "warning" and point in problem["message"] and checked.returncode == 0
        assert strict.returncode == 1 and "error [client]" in strict.stdout
        assert client["active"] is None and client["routed"] is False and point in client["problem"]
    assert explained_client == client  # the same answer from every command
    # From a folder holding a stray `tilelang` (a package, a module) the answer is the same.
    for stray in ("tilelang/__init__.py", "tilelang.py") if key in ("as-musa", "renamed-point") else ():
        cwd = tmp_path / stray.replace("/", "-")
        (cwd / stray).parent.mkdir(parents=True)
        (cwd / stray).write_text("raise RuntimeError('not TileLang')\n")
        proc = subprocess.run([env.python, "-m", "tilelang_hostcg", "explain", "cuda", "--json"], capture_output=True,
                              text=True, env=env.environ(), cwd=cwd, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert {k: v for k, v in json.loads(proc.stdout)["client"].items() if k != "probe"} == client, stray


@pytest.mark.xdist_group("tilelang-0.1.15")
def test_a_tilelang_checkout_on_pythonpath_is_routed_and_named_by_its_tree(tilelang_envs: TileLangEnvs) -> None:
    """How TileLang's developers work: its source tree on ``PYTHONPATH``, no distribution's
    metadata naming it. The ``tilelang`` that ``import`` gives is the TileLang: routed, and
    named by its tree, by the program and by every command."""
    base = tilelang_envs["0.1.15"].env
    env = relabel(base, base.path.parent / "relabelled-checkout", "tilelang", "0.1.15", editable=True)
    try:
        site = next((env.path / "lib").glob("python*/site-packages"))
        (site / "__editable__.tilelang-0.1.15.pth").unlink()  # no install at all: a checkout
        shutil.rmtree(site / "tilelang-0.1.15.dist-info")
        env.pip("install", "-q", "--no-deps", str(tilelang_envs.wheels["tilelang-hostcg-stamp"]))
        tree = env.path / "src"
        extra = {"PYTHONPATH": str(tree)}
        out = _run(env, extra)
        assert out["stamps"] == [True, True] and out["installed"] and out["warnings"] == [], out["warnings"]
        assert out["describe"].endswith(f"bundled with TileLang from a source tree at {tree}"), out["describe"]
        docs = {}
        for argv in (("list", "--json"), ("check", "--strict", "--json")):
            proc = subprocess.run([env.python, "-m", "tilelang_hostcg", *argv], capture_output=True, text=True,
                                  env=env.environ(extra), timeout=300, cwd=env.path)  # not this checkout's root
            assert proc.returncode == 0, proc.stdout + proc.stderr
            docs[argv[0]] = json.loads(proc.stdout)
        listed = docs["list"]["tvm"]["describe"]
        assert listed == f"TVM bundled with TileLang from a source tree at {tree} (not imported)", listed
        assert docs["check"]["client"]["routed"] is True and docs["check"]["client"]["active"] == "tilelang"
        assert "source tree" in docs["check"]["tvm"]["describe"]
    finally:
        shutil.rmtree(env.path, ignore_errors=True)


@pytest.fixture(scope="module", params=params("0.1.15", "0.1.12", "0.1.11", "paddle-0.1.13"))
def real(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs) -> TileLangEnv:
    return tilelang_envs[request.param].env


def test_the_points_of_every_real_tilelang(real: TileLangEnv) -> None:
    """The contract: the check of the integration points in each real TileLang CI builds, and where
    they are there, check's probe build goes through the route in well under a second."""
    out = real.run_json("""
        import json, tilelang
        from tilelang_hostcg.environment._finding import find
        from tilelang_hostcg.tilelang._points import POINTS, UnsupportedTileLangError, check
        try:
            mode, error = check(find("tilelang")), None
        except UnsupportedTileLangError as exc:
            mode, error = None, str(exc)
        found = None
        if mode is not None:
            import tilelang_hostcg.tilelang as integration
            from tilelang_hostcg import Registry
            from tilelang_hostcg.clients._probe import probe
            integration.install(registry=Registry())
            found = probe(integration.CLIENT)._asdict()
        print(json.dumps({"mode": mode, "error": error, "probe": found,
                          "problems": {m: [p.problem() for p in points] for m, points in POINTS.items()}}))
    """)
    expected = {"0.1.15": "backend", "0.1.12": "registry", "paddle-0.1.13": "registry", "0.1.11": None}[real.key]
    assert out["mode"] == expected, out
    if expected is not None:
        assert out["problems"][expected] == [None] * len(out["problems"][expected])
        assert out["probe"]["called"] is True and out["probe"]["seconds"] < 1, out["probe"]
    else:  # 0.1.11 hard-codes its host codegen: neither layout
        assert out["error"].startswith("TileLang (tilelang 0.1.11) lacks the integration point "
                                       "tilelang.backend.module.BackendModule.get_host_codegen (or "
                                       "tilelang.engine.lower.resolve_host_codegen)")

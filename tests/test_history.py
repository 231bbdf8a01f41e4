"""Answers depend on the target and the installed set, never on the history of the process.

Real distributions are installed into one throwaway environment; every scenario runs
in fresh interpreters, once per order of operations (kinds used first, plugin modules
imported by hand first, threads, targets resolved before), and the answers — the
codegen chosen, the hooks applied, every registration with its origin, every source's
state — must be the same in all of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .plugin_factory import Plugin, codegen_module, install, module, run

pytestmark = pytest.mark.slow

MOD = Plugin("hcgt-h-mod", codegens={"test": "hcgt_h_mod"},
             files={"hcgt_h_mod.py": codegen_module("test", "mod-test")})
TIE_A = Plugin("hcgt-h-tie-a", codegens={"composite": "hcgt_h_tie_a"},
               files={"hcgt_h_tie_a.py": codegen_module("composite", "tie-a")})
TIE_B = Plugin("hcgt-h-tie-b", codegens={"composite": "hcgt_h_tie_b"},
               files={"hcgt_h_tie_b.py": codegen_module("composite", "tie-b")})
# A backend in one package: its codegen module registers at import, its hooks by attribute.
CG = Plugin("hcgt-h-cg", codegens={"cuda_host": "hcgt_h_cg.codegen"},
            hooks={"cuda": "hcgt_h_cg.hooks:HOOKS"},
            files={"hcgt_h_cg/__init__.py": "",
                   "hcgt_h_cg/codegen.py": module("""
                       CG = _codegen("h-cuda-host")
                       hc.register_host_codegen("cuda_host", CG)
                   """),
                   "hcgt_h_cg/hooks.py": module('HOOKS = [_hook("cg-cuda")]\n')})
# Another distribution's hook module that imports the backend's codegen module.
HOOKPLUG = Plugin("hcgt-h-hookplug", hooks={"cuda": "hcgt_h_hookplug"},
                  files={"hcgt_h_hookplug.py": module("""
                      from hcgt_h_cg.codegen import CG
                      hc.register_host_codegen_hook("cuda", _hook("extra-cuda"))
                  """)})
# One module serving two hook kinds.
TWO = Plugin("hcgt-h-two", hooks={"metal": "hcgt_h_two", "vulkan": "hcgt_h_two"},
             files={"hcgt_h_two.py": module("""
                 hc.register_host_codegen_hook("metal", _hook("two-metal"))
                 hc.register_host_codegen_hook("vulkan", _hook("two-vulkan"))
             """)})
# One module serving two codegen kinds.
TWO_CG = Plugin("hcgt-h-twocg", codegens={"test": "hcgt_h_twocg", "c": "hcgt_h_twocg"},
                files={"hcgt_h_twocg.py": module("""
                    hc.register_host_codegen("test", _codegen("twocg-test"))
                    hc.register_host_codegen("c", _codegen("twocg-c", 5))
                """)})
EXTRAS = Plugin("hcgt-h-extras", codegens={"test": "hcgt_h_extras:CG [fast]"},
                files={"hcgt_h_extras.py": module('CG = _codegen("extras-test")\n')})

HISTORY = [MOD, TIE_A, TIE_B, CG, HOOKPLUG, TWO]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> PluginEnvironment:
    root = tmp_path_factory.mktemp("history")
    environment = environments.new("history")
    install(environment, root, [*HISTORY, TWO_CG, EXTRAS])
    return environment


ONLY = {"TILELANG_HOSTCG_ONLY": ",".join(p.dist for p in HISTORY)}
KINDS = {"resolve": ["test", "composite", "cuda_host", "llvm", "c"],
         "hooks": ["cuda", "metal", "vulkan"]}

# Runs OPS (from the environment) split over threads, then reports every answer.
SCRIPT = """
import importlib
ops = json.loads(os.environ["OPS"])
kinds = json.loads(os.environ["KINDS"])
registry = hc.default_registry()


def answer(op, arg):
    if op == "import":
        importlib.import_module(arg)
        return None
    if op == "resolve":
        codegen = registry.resolve_host_codegen(target(arg))
        origin = [r.origin.entry_point for r in registry.registrations(kind=arg)
                  if r.obj is codegen]
        return [codegen.name, origin]
    return hooks(arg)


def quiet(op, arg):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return answer(op, arg)
        except Exception as exc:
            return type(exc).__name__

by_thread = {}
for index, (thread, op, arg) in enumerate(ops):
    by_thread.setdefault(thread, []).append((op, arg))
barrier = threading.Barrier(len(by_thread))


def worker(items):
    barrier.wait()
    for op, arg in items:
        quiet(op, arg)

threads = [threading.Thread(target=worker, args=(items,)) for items in by_thread.values()]
for t in threads:
    t.start()
for t in threads:
    t.join(60)
out["answers"] = {op: {arg: quiet(op, arg) for arg in args} for op, args in kinds.items()}
out["registrations"] = loaded_snapshot(registry)
out["sources"] = sorted([s["kind"], s["value"], s["distribution"], s["state"]] for s in sources())
"""


def history(env: PluginEnvironment, tmp_path: Path, ops: list[list[Any]],
            extra_env: dict[str, str] | None = None) -> dict[str, Any]:
    environ = {**ONLY, "OPS": json.dumps(ops), "KINDS": json.dumps(KINDS), **(extra_env or {})}
    return run(env, SCRIPT, tmp_path / "markers.txt", environ)


@pytest.fixture(scope="module")
def reference(env: PluginEnvironment, tmp_path_factory: pytest.TempPathFactory,
              ) -> dict[str, Any]:
    """The answers of a fresh process that did nothing before asking."""
    return history(env, tmp_path_factory.mktemp("reference"), [])


def test_reference_answers_are_the_contract(reference):
    answers = reference["answers"]
    assert answers["resolve"]["test"] == ["mod-test", ["test = hcgt_h_mod"]]
    assert answers["resolve"]["composite"] == "AmbiguousHostCodegenError"
    assert answers["resolve"]["cuda_host"] == ["h-cuda-host", ["cuda_host = hcgt_h_cg.codegen"]]
    assert answers["hooks"]["cuda"] == ["cg-cuda", "extra-cuda"]
    assert answers["hooks"]["metal"] == ["two-metal"] and answers["hooks"]["vulkan"] == ["two-vulkan"]
    ours = {p.dist for p in HISTORY}
    states = {(kind, value): state for kind, value, dist, state in reference["sources"]
              if dist in ours}
    assert len(states) == 8
    assert all(state == "loaded" for state in states.values()), states


@pytest.mark.parametrize("ops", [
    # A plugin's module imported by hand before first use.
    [[0, "import", "hcgt_h_mod"]],
    # One of two tied plugins imported by hand: the tie stays an error.
    [[0, "import", "hcgt_h_tie_a"]],
    # A hook plugin importing another plugin's codegen module, hooks used first ...
    [[0, "resolve", "cuda"], [0, "hooks", "cuda"]],
    # ... or the hook plugin's module imported by hand, then the codegen's kind.
    [[0, "import", "hcgt_h_hookplug"], [0, "resolve", "cuda_host"]],
    [[0, "import", "hcgt_h_cg.codegen"], [0, "import", "hcgt_h_cg.hooks"]],
    # One module, two kinds: whichever kind comes first.
    [[0, "hooks", "vulkan"], [0, "hooks", "metal"]],
    [[0, "import", "hcgt_h_two"]],
], ids=["import-plugin", "import-one-of-a-tie", "hooks-first", "import-hook-plugin",
        "import-both-modules", "second-kind-first", "import-two-kind-module"])
def test_history_does_not_change_answers(env, tmp_path, reference, ops):
    assert history(env, tmp_path, ops) == reference


_OPS = [["import", "hcgt_h_mod"], ["import", "hcgt_h_tie_b"], ["import", "hcgt_h_hookplug"],
        ["import", "hcgt_h_cg.hooks"], ["import", "hcgt_h_two"], ["resolve", "test"],
        ["resolve", "composite"], ["resolve", "cuda_host"], ["resolve", "llvm"],
        ["hooks", "cuda"], ["hooks", "metal"], ["hooks", "vulkan"]]


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_OPS), min_size=1, max_size=8),
       st.lists(st.integers(0, 2), min_size=8, max_size=8))
def test_any_order_and_interleaving_gives_the_same_answers(env, tmp_path, reference, ops,
                                                          threads):
    """Random orders of hand imports and first uses, spread over up to three threads."""
    plan = [[threads[i], op, arg] for i, (op, arg) in enumerate(ops)]
    assert history(env, tmp_path, plan) == reference


DEVICE_TYPE = """
from tvm.target import Target
registry = isolated()
device_c = Target({"kind": "c", "target_device_type": 2})
order = os.environ["ORDER"].split(",")
for item in order:
    t = device_c if item == "device" else target(item)
    out[item] = registry.resolve_host_codegen(t).name
"""


@pytest.mark.parametrize("order", ["c,device", "device,c"])
def test_host_or_device_is_decided_per_target(env, tmp_path, order):
    out = run(env, DEVICE_TYPE, tmp_path / "m.txt", {"ORDER": order})
    assert out["c"] == "c"
    assert out["device"] == "llvm"  # a device target (CUDA's device type): built through TVM's default host


def test_build_after_a_device_typed_target_still_builds_c(env, tmp_path):
    out = run(env, """
        from tvm.target import Target
        from tests.kernels import vector_add
        hc.resolve_host_codegen(Target({"kind": "c", "target_device_type": 2}))
        out["kind"] = hc.build(vector_add, "c").kind
    """, tmp_path / "m.txt", {"PYTHONPATH": str(Path(__file__).resolve().parents[1]),
                              "TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert out["kind"] == "c"


DISABLE_ONE_KIND = """
controls = hc.Controls(only=frozenset({"hcgt-h-twocg"}), disable=frozenset({"hcgt-h-twocg:c"}))
registry = hc.Registry(discover=True, controls=controls)
first = os.environ["FIRST"]
for kind in (first, "c" if first == "test" else "test"):
    out[kind] = attempt(lambda kind=kind: resolve(kind, registry))
out["sources"] = sorted([s["kind"], s["state"]] for s in sources(registry)
                        if s["distribution"] == "hcgt-h-twocg")
out["registrations"] = [r[1:3] for r in snapshot(registry) if r[4] == "hcgt-h-twocg"]
"""


@pytest.mark.parametrize("first", ["test", "c"])
def test_disable_dist_kind_skips_that_entry_point_only(env, tmp_path, first):
    out = run(env, DISABLE_ONE_KIND, tmp_path / "m.txt", {"FIRST": first})
    assert out["test"]["ok"] and out["test"]["value"] == "twocg-test", out["test"]
    assert out["test"]["warnings"] == []
    # "c" is served by the core as if the plugin's "c" entry point did not exist.
    assert out["c"]["ok"] and out["c"]["value"] == "c", out["c"]
    assert out["sources"] == [["c", "disabled"], ["test", "loaded"]]
    assert out["registrations"] == [["test", "twocg-test"]]


def test_entry_point_value_with_extras_loads(env, tmp_path):
    out = run(env, """
        registry = isolated("hcgt-h-extras")
        out["resolve"] = attempt(lambda: resolve("test", registry))
        out["sources"] = [[s["value"], s["state"]] for s in sources(registry)
                          if s["distribution"] == "hcgt-h-extras"]
    """, tmp_path / "m.txt")
    assert out["resolve"]["value"] == "extras-test", out["resolve"]
    assert out["sources"] == [["hcgt_h_extras:CG [fast]", "loaded"]]

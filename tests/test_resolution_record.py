"""One rule, one place: resolution, ``allowed_host_codegens_for_target``, ``explain`` and
``check`` read the same resolution record, with real installed plugin distributions.

``hcg-odd`` serves the host kind ``test`` with codegens whose predicates return ``1``,
``None``, raise, and return ``True``; ``hcg-nobuild`` serves ``cuda_host`` with a codegen
whose TVM build function the installed TVM lacks (a plugin's own codegen: an error).
"""

from __future__ import annotations

from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment, write_distribution

from .plugin_factory import install_sources

pytestmark = pytest.mark.slow

CG = "tilelang.host_codegen"
REQUIRES = ["tilelang-hostcg>=0.1,<1"]

ODD = """
from tilelang_hostcg import HostCodegen, global_func_host_codegen

_BUILD = global_func_host_codegen("target.build.c")


def _raises(target):
    raise RuntimeError("predicate exploded")


CODEGENS = [
    HostCodegen("odd-one", _BUILD, supports_target=lambda t: 1, priority=30),
    HostCodegen("odd-none", _BUILD, supports_target=lambda t: None, priority=20),
    HostCodegen("odd-raises", _BUILD, supports_target=_raises, priority=10),
    HostCodegen("odd-true", _BUILD, supports_target=lambda t: True, priority=0),
]
"""

NOBUILD = """
from tilelang_hostcg import HostCodegen, global_func_host_codegen

CODEGEN = HostCodegen("nobuild-cuda-host", global_func_host_codegen("target.build.hcg_missing"))
"""

PROBE = """
import contextlib, io, json, warnings
import tilelang_hostcg as hc
from tilelang_hostcg.cli import main


def cli(*argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(list(argv))
    return rc, json.loads(out.getvalue())


result = {}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    result["resolved"] = hc.resolve_host_codegen("test").name
    result["allowed"] = hc.allowed_host_codegens_for_target("test")
    record = hc.default_registry().resolution("test")
    result["record"] = {c.registration.name: c.verdict for c in record.candidates}
    result["record_choice"] = record.choice.registration.name
    try:
        hc.resolve_host_codegen("cuda_host")
    except hc.HostCodegenError as exc:
        result["cuda_host_error"] = [type(exc).__name__, str(exc)]
result["warnings"] = sorted({str(w.message) for w in caught})
result["explain"] = cli("explain", "test", "--json")
result["explain_cuda_host"] = cli("explain", "cuda_host", "--json")
result["check"] = cli("check", "--json", "--require", "test")
result["check_cuda_host"] = cli("check", "--json", "--require", "cuda_host")
print(json.dumps(result))
"""


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("record")
    env = PluginEnvironment(root / "venv")
    install_sources(env, root / "wheels", [
        write_distribution(root / "src", "hcg-odd", "1.0", requires=REQUIRES,
                           entry_points={CG: {"test": "hcg_odd:CODEGENS"}},
                           files={"hcg_odd/__init__.py": ODD}),
        write_distribution(root / "src", "hcg-nobuild", "1.0", requires=REQUIRES,
                           entry_points={CG: {"cuda_host": "hcg_nobuild:CODEGEN"}},
                           files={"hcg_nobuild/__init__.py": NOBUILD})])
    # Activation off: no TVM default (apache-tvm-cuda_host, as in a routed build) serves cuda_host.
    out: dict[str, Any] = env.run_json(PROBE, env={"TILELANG_HOSTCG_ONLY": "hcg-odd,hcg-nobuild",
                                                   "TILELANG_HOSTCG_AUTO_INSTALL": "0"})
    return out


def _by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in doc["candidates"] if c["name"] is not None}


def test_only_true_matches_everywhere(result: dict[str, Any]) -> None:
    expected = {"odd-one": "not-bool", "odd-none": "not-bool", "odd-raises": "raised",
                "odd-true": "match"}
    # Resolution and the listing of allowed codegens.
    assert result["resolved"] == "odd-true"
    assert result["allowed"] == ["odd-true"]
    assert result["record"] == expected and result["record_choice"] == "odd-true"
    # explain: the same verdicts, the same choice (a predicate returning 1 is no match).
    rc, doc = result["explain"]
    assert rc == 0
    candidates = _by_name(doc)
    assert {name: c["verdict"] for name, c in candidates.items()} == expected
    assert {name: c["matches"] for name, c in candidates.items()} == {
        name: verdict == "match" for name, verdict in expected.items()}
    assert doc["codegen"]["name"] == "odd-true"
    assert [c["name"] for c in doc["candidates"] if c["selected"]] == ["odd-true"]
    assert "returned int 1, not a bool" in candidates["odd-one"]["reason"]
    assert "returned NoneType None, not a bool" in candidates["odd-none"]["reason"]
    assert "RuntimeError: predicate exploded" in candidates["odd-raises"]["reason"]
    assert candidates["odd-true"]["reason"] == "selected: the only codegen that matches"
    # check: the kind is served and not ambiguous; the odd predicates are reported.
    rc, check = result["check"]
    codes = {p["code"] for p in check["problems"]}
    assert "missing-codegen" not in codes and "ambiguous" not in codes
    warned = " ".join(p["message"] for p in check["problems"] if p["code"] == "plugin-warning")
    assert "'odd-one'" in warned and "'odd-none'" in warned and "'odd-raises'" in warned
    # Resolution warned about the same three.
    assert any("'odd-one'" in w and "not a bool" in w for w in result["warnings"])
    assert any("'odd-raises'" in w and "predicate exploded" in w for w in result["warnings"])


def test_a_plugin_codegen_without_its_build_function_is_an_error(result: dict[str, Any]) -> None:
    kind, message = result["cuda_host_error"]
    assert kind == "NoHostCodegenError"
    assert ("'nobuild-cuda-host' cannot build with apache-tvm" in message
            and ": it needs TVM global function 'target.build.hcg_missing'" in message)
    rc, doc = result["explain_cuda_host"]
    assert rc == 1 and doc["codegen"] is None
    (candidate,) = doc["candidates"]
    assert candidate["verdict"] == "missing-build" and candidate["buildable"] is False
    assert candidate["reason"].endswith("cannot build with apache-tvm " + doc["tvm"]["provider_version"]
                                        + ": it needs TVM global function 'target.build.hcg_missing'")
    rc, check = result["check_cuda_host"]
    assert rc == 1 and check["ok"] is False
    by_code = {p["code"]: p for p in check["problems"]}
    nofunc = by_code["missing-build-function"]
    assert nofunc["severity"] == "error" and nofunc["distribution"] == "hcg-nobuild"
    required = by_code["missing-codegen"]
    assert required["kind"] == "cuda_host" and required["severity"] == "error"
    assert "can build with the TVM in use" in required["message"]
    assert "target.build.hcg_missing" in required["message"]
    # The core's own codegens build with apache-tvm: nothing is reported for them.
    assert not [p for p in check["problems"] if p["distribution"] == "tilelang-hostcg"]


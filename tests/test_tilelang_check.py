"""``check`` as a CI gate in a stock TileLang environment (TileLang's bundled TVM has no
LLVM), with our core and a working plugin installed by ``pip``.

A capability the TVM in use lacks is information for the core's own codegens and for
TileLang's defaults (``--strict`` passes); ``--require KIND`` fails exactly when no
codegen of the kind can build with the TVM in use, as ``explain`` and resolution judge.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from .tilelang_env import TileLangEnv, TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]

VERSIONS = ("0.1.15", "0.1.12")


@pytest.fixture(scope="module", params=params(*VERSIONS))
def env(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs) -> Iterator[TileLangEnv]:
    """A TileLang environment with our core and the stamp plugin, each by ``pip install``
    (of its wheel); the stamp plugin is removed afterwards."""
    environment = tilelang_envs[request.param].env
    environment.pip("install", "-q", str(tilelang_envs.wheels["tilelang-hostcg-stamp"]))
    yield environment
    environment.pip("uninstall", "-q", "-y", "tilelang-hostcg-stamp")


def _json(env: TileLangEnv, *argv: str, expect: int) -> Any:
    return _docs(env, (argv, expect))[0]


def _docs(env: TileLangEnv, *commands: tuple[tuple[str, ...], int]) -> list[Any]:
    """Each command's JSON document (run with ``--json``, each in a process of its own),
    once its exit status is the one expected and it printed no traceback."""
    docs = []
    for (argv, expect), proc in zip(commands, env.cli_each(*((*argv, "--json") for argv, _ in commands)),
                                    strict=True):
        assert proc.returncode == expect, (argv, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
        docs.append(json.loads(proc.stdout))
    return docs


def test_strict_check_passes_with_a_working_plugin(env: TileLangEnv) -> None:
    doc = _json(env, "check", "--strict", expect=0)
    assert doc["ok"] is True and doc["summary"]["errors"] == 0
    assert "bundled with tilelang" in doc["tvm"]["describe"]
    assert {"name": "tilelang-hostcg-stamp", "version": "0.1.0"} in doc["distributions"]
    # TVM's missing LLVM is shown, as information about the TVM in use, for the core's
    # own llvm codegen; it counts neither as an error nor as a warning.
    missing = [p for p in doc["problems"] if p["code"] == "missing-build-function"]
    assert missing, doc["problems"]
    assert {p["severity"] for p in missing} == {"info"}
    assert any(p["distribution"] == "tilelang-hostcg" and p["kind"] == "llvm" for p in missing)
    assert doc["summary"]["info"] == len([p for p in doc["problems"] if p["severity"] == "info"])
    assert all(p["severity"] == "info" for p in doc["problems"]), doc["problems"]


def test_require_means_a_codegen_that_builds_with_the_tvm_in_use(env: TileLangEnv) -> None:
    # c: TileLang's TVM builds C host code (the stamp plugin's codegen and TileLang's own).
    ok, explain_c, failed, explain_llvm = _docs(
        env, (("check", "--strict", "--require", "c"), 0), (("explain", "c"), 0),
        (("check", "--require", "llvm"), 1), (("explain", "llvm"), 1))
    assert ok["ok"] is True
    assert explain_c["codegen"]["buildable"] is True
    # llvm: registered (the core's, TileLang's default where it has one) but nothing can
    # build it with this TVM: --require fails, and explain agrees that nothing resolves.
    (problem,) = [p for p in failed["problems"] if p["code"] == "missing-codegen"]
    assert problem["kind"] == "llvm" and problem["severity"] == "error"
    assert "can build with the TVM in use" in problem["message"]
    assert "target.build.llvm" in problem["message"]
    assert explain_llvm["codegen"] is None
    assert explain_llvm["candidates"]
    # Those that match cannot build; the stamp plugin's llvm codegen does not match a TVM
    # without LLVM (its predicate says so).
    assert {c["buildable"] for c in explain_llvm["candidates"] if c["name"] and c["verdict"] != "no-match"} == {False}
    assert {c["verdict"] for c in explain_llvm["candidates"] if c["name"] == "stamp_llvm"} == {"no-match"}

"""The template plugin installed into a TileLang environment (TileLang's bundled TVM has no
LLVM): its ``llvm`` codegen cannot build there, which ``check`` reports as an error (a
plugin's own codegen, SPEC: information only for the core's and TileLang's defaults), and
the advice never tells the user to install another TVM beside TileLang: it says to use the
plugin where a TVM with LLVM is installed, and here to uninstall or skip it. Following the
advice (the skip) makes ``check --strict`` pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from .tilelang_env import TileLangEnv, TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]

TEMPLATE = "tilelang-hostcg-template"


@pytest.fixture(scope="module", params=params("0.1.15"))
def env(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs) -> Iterator[TileLangEnv]:
    environment = tilelang_envs[request.param].env
    environment.pip("install", "-q", "--no-deps", str(tilelang_envs.wheels[TEMPLATE]))
    yield environment
    environment.pip("uninstall", "-q", "-y", TEMPLATE)


def test_the_templates_llvm_codegen_is_an_error_whose_advice_installs_no_tvm(env: TileLangEnv) -> None:
    (proc,) = env.cli_each(("check", "--json"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (problem,) = [p for p in json.loads(proc.stdout)["problems"]
                  if p["code"] == "missing-build-function" and p["distribution"] == TEMPLATE]
    message = problem["message"]
    assert problem["severity"] == "error" and "'acme_llvm'" in message, problem
    assert "install a TVM" not in message and "apache-tvm" not in message.replace("no other TVM", ""), message
    assert "TileLang's bundled TVM is built without it" in message, message
    assert f"pip uninstall -y {TEMPLATE}" in message and f"TILELANG_HOSTCG_DISABLE={TEMPLATE}" in message, message


def test_following_the_advice_passes_the_gate(env: TileLangEnv) -> None:
    proc = env.command("check", "--strict", "--json", env={"TILELANG_HOSTCG_DISABLE": TEMPLATE})
    assert proc.returncode == 0, proc.stdout + proc.stderr

"""``check`` as a CI gate in a stock TileLang environment (TileLang's bundled TVM has no
LLVM), with our core and a working plugin installed by ``pip``.

A capability the TVM in use lacks is information for the core's own codegens and for
TileLang's defaults (``--strict`` passes); ``--require KIND`` fails exactly when no
codegen of the kind can build with the TVM in use, as ``explain`` and resolution judge.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .plugin_factory import Plugin, build_wheels, module
from .tilelang_env import TileLangEnv, TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]

VERSIONS = ("0.1.15", "0.1.12", "paddle-0.1.13")


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
    assert f"bundled with {env.distribution} {env.version}" in doc["tvm"]["describe"]
    assert (doc["tvm"]["provider"], doc["tvm"]["distribution"]) == ("tilelang", env.distribution)
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


def test_a_plugin_requiring_stock_tilelang_is_explained_where_another_build_is_installed(
        env: TileLangEnv, tmp_path: Path) -> None:
    """A plugin that declares ``tilelang`` outside an extra: in a ``tilelang-paddle``
    environment ``check`` explains that pip would install stock TileLang over it (a
    warning, so ``--strict`` fails); in a stock TileLang environment it is fine."""
    (wheel,) = build_wheels(tmp_path, [WANTS_STOCK])
    env.pip("install", "-q", "--no-deps", str(wheel))  # as a user who knows, without pip's resolution
    try:
        doc, strict = _docs(env, (("check",), 0),
                            (("check", "--strict"), 0 if env.distribution == "tilelang" else 1))
    finally:
        env.pip("uninstall", "-q", "-y", WANTS_STOCK.dist)
    found = [p for p in doc["problems"] if p["code"] == "tilelang-requirement"]
    assert not [p for p in doc["problems"]  # it loads and works with the build installed
                if p["distribution"] == WANTS_STOCK.dist and p["code"] != "tilelang-requirement"]
    if env.distribution == "tilelang":
        assert found == [] and strict["ok"] is True
        return
    (problem,) = found
    assert problem["severity"] == "warning" and strict["ok"] is False
    assert f"'{WANTS_STOCK.dist}' 1.0 requires 'tilelang>=0.1.12'" in problem["message"]
    assert f"the TileLang installed is {env.distribution} {env.version}" in problem["message"]


WANTS_STOCK = Plugin("tl-wants-stock", "1.0", hooks={"cuda": "tl_wants_stock"},
                     files={"tl_wants_stock.py": module(
                         'hc.register_host_codegen_hook("cuda", _hook("wants-stock"))')},
                     requires=("tilelang-hostcg", "tilelang>=0.1.12"))


def test_explain_and_the_lock_file_name_the_build_in_use(env: TileLangEnv) -> None:
    (explain,) = _docs(env, (("explain", "c"), 0))
    lock = env.cli("lock")
    assert lock.returncode == 0, lock.stderr
    locked = json.loads(lock.stdout)
    named = {d["name"] for d in locked["distributions"]} | {
        item["distribution"] for key in ("entry_points", "codegens", "hooks") for item in locked[key]}
    assert named and named <= set(env.freeze()), named  # never a distribution that is not installed
    (default,) = [c for c in explain["candidates"] if c["name"] == "tilelang-c"]
    assert (default["distribution"], default["version"]) == (env.distribution, env.version)
    assert f"distribution {env.distribution!r} {env.version}" in default["reason"]  # passed over: stamp_c wins


RAISING_HOOK = Plugin("tl-raising-hook", "1.0", hooks={"cuda": "tl_raising_hook"},
                      files={"tl_raising_hook.py": module('''
                          def _apply(mod, target_host, target):
                              raise RuntimeError("hook failed in the probe")


                          hc.register_host_codegen_hook("cuda", hc.HostCodegenHook("raising-hook", _apply))
                      ''')})


@pytest.mark.xdist_group("tilelang-0.1.15")
def test_a_hook_that_raises_in_tilelangs_probe_build_fails_check_named(tilelang_envs: TileLangEnvs,
                                                                        tmp_path: Path) -> None:
    """TileLang's probe build (in a process of its own) runs the ``cuda`` hooks: one that raises fails
    the probe, named (plugin, hook, error) in the text and the JSON document, never "confirmed"."""
    environment = tilelang_envs["0.1.15"].env
    (wheel,) = build_wheels(tmp_path, [RAISING_HOOK])
    environment.pip("install", "-q", "--no-deps", str(wheel))
    try:
        doc, text = _docs(environment, (("check",), 1))[0], environment.cli("check", "--strict")
    finally:
        environment.pip("uninstall", "-q", "-y", RAISING_HOOK.dist)
    (problem,) = [p for p in doc["problems"] if p["code"] == "probe-failed"]
    assert (problem["distribution"], problem["kind"], problem["group"], problem["severity"]) == (
        RAISING_HOOK.dist, "cuda", "tilelang.host_codegen_hooks", "error")
    assert "the probe build failed in hook 'raising-hook' for kind 'cuda'" in problem["message"]
    assert "RuntimeError: hook failed in the probe" in problem["message"]
    assert doc["client"]["probe"]["confirmed"] is False and doc["ok"] is False
    assert text.returncode == 1 and "error [probe-failed]" in text.stdout
    assert f"Client: {doc['client']['describe']}" in text.stdout and "(not confirmed: " in text.stdout

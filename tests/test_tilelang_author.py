"""A plugin author's path in a real TileLang 0.1.15 environment.

``apache-tvm`` pulled in beside TileLang (the case the guide warns about) is reported by
``check`` even while ``import tilelang`` still works, and the repair ``check`` gives,
followed as written, restores the environment exactly (``pip check`` clean, torch and
TileLang untouched). A codegen that wraps TVM's LLVM build function (TileLang's TVM has no
LLVM) cannot build for ``check --require``, ``explain`` and ``list`` alike, whether it
declares the function or wraps a callback that can be seen.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.testing import write_distribution

from .plugin_factory import build_source_wheels
from .tilelang_env import TileLangEnv, TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]

APACHE_TVM = f"apache-tvm=={version('apache-tvm')}"  # the release the tests run with


@pytest.fixture(scope="module", params=params("0.1.15"))
def env(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs) -> TileLangEnv:
    return tilelang_envs[request.param].env


def _check(env: TileLangEnv, *argv: str) -> tuple[int, Any]:
    proc = env.cli("check", *argv, "--json")
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _follow(env: TileLangEnv, message: str) -> list[str]:
    """Run the repair a message gives (``Repair it with: CMD && CMD (nothing else...``) as a
    user would paste it; returns the commands."""
    text = message.split("Repair it with: ", 1)[1].split(" (nothing else changes)", 1)[0]
    commands = [shlex.split(part) for part in text.split(" && ")]
    for argv in commands:
        assert argv[0] == "pip", commands
        env.pip(*argv[1:])
    return [" ".join(argv) for argv in commands]


def test_apache_tvm_beside_tilelang_is_reported_and_its_repair_is_safe(env: TileLangEnv) -> None:
    before = env.freeze()
    assert "apache-tvm" not in before
    try:
        # Without its dependencies: TileLang's apache-tvm-ffi stays, import tilelang works.
        env.pip("install", "-q", "--no-deps", APACHE_TVM)
        assert env.run("import tilelang").returncode == 0
        code, doc = _check(env)
        assert code == 1
        (problem,) = [p for p in doc["problems"] if p["code"] == "tvm-conflict"]
        assert "apache-tvm" in problem["message"] and "beside TileLang (tilelang 0.1.15)" in problem["message"]
        assert _follow(env, problem["message"]) == ["pip uninstall -y apache-tvm"]
        assert env.freeze() == before

        # With them, as a plugin requiring apache-tvm makes pip do: apache-tvm-ffi is
        # replaced and import tilelang fails; the error gives the repair.
        env.pip("install", "-q", APACHE_TVM)
        assert env.freeze()["apache-tvm-ffi"] != before["apache-tvm-ffi"]
        proc = env.cli("check")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "--force-reinstall tilelang" not in proc.stderr
        followed = _follow(env, proc.stderr)
        assert followed == ["pip uninstall -y apache-tvm",
                            "pip install --force-reinstall --no-deps apache-tvm-ffi<0.1.13,>=0.1.11"], followed
        assert env.freeze() == before  # torch, TileLang and the rest untouched
        assert "No broken requirements found." in env.pip("check")
        code, doc = _check(env)
        assert code == 0, doc["problems"]
    finally:
        installed = env.freeze()
        if "apache-tvm" in installed:
            env.pip("uninstall", "-q", "-y", "apache-tvm")
        if installed.get("apache-tvm-ffi") != before["apache-tvm-ffi"]:
            env.pip("install", "-q", "--no-deps", f"apache-tvm-ffi=={before['apache-tvm-ffi']}")


WRAPPERS = """
import tilelang_hostcg as hc

_llvm = hc.global_func_host_codegen("target.build.llvm")


def wraps(mod, target):  # a module-level callback: seen by itself
    return _llvm(mod, target)


def made_at_call(mod, target):  # made inside the build: declared
    return hc.global_func_host_codegen("target.build.llvm")(mod, target)


CODEGENS = [hc.HostCodegen("acme-llvm-wraps", wraps, priority=10),
            hc.HostCodegen("acme-llvm-declared", made_at_call, priority=10,
                           global_funcs=("target.build.llvm",))]
"""


@pytest.fixture
def wrapping(env: TileLangEnv, tmp_path: Path) -> Iterator[TileLangEnv]:
    folder = write_distribution(tmp_path / "src", "acme-llvm", "1.0",
                                requires=["tilelang-hostcg>=0.1,<1"],
                                entry_points={"tilelang.host_codegen": {"llvm": "acme_llvm:CODEGENS"}},
                                files={"acme_llvm.py": WRAPPERS})
    (wheel,) = build_source_wheels(tmp_path / "wheels", [folder])
    env.pip("install", "-q", "--no-deps", str(wheel))
    yield env
    env.pip("uninstall", "-q", "-y", "acme-llvm")


def test_a_codegen_wrapping_llvm_cannot_build_under_tilelang(wrapping: TileLangEnv) -> None:
    code, doc = _check(wrapping, "--strict", "--require", "llvm")
    assert code == 1
    missing = {p["message"].split("'")[1]: p for p in doc["problems"]
               if p["code"] == "missing-build-function" and p["distribution"] == "acme-llvm"}
    assert set(missing) == {"acme-llvm-wraps", "acme-llvm-declared"}
    assert {p["severity"] for p in missing.values()} == {"error"}
    assert [p["kind"] for p in doc["problems"] if p["code"] == "missing-codegen"] == ["llvm"]
    proc = wrapping.cli("explain", "llvm", "--json")
    assert proc.returncode == 1
    explained = json.loads(proc.stdout)
    verdicts = {c["name"]: c["verdict"] for c in explained["candidates"] if c["name"]}
    assert verdicts["acme-llvm-wraps"] == verdicts["acme-llvm-declared"] == "missing-build"
    listed = wrapping.cli("list", "--load")
    lines = [line for line in listed.stdout.splitlines() if "'acme-llvm-" in line]
    assert len(lines) == 2 and all("cannot build with TVM" in line and "bundled with tilelang 0.1.15"
                                   in line for line in lines), lines

"""Standard output carries exactly the command's document, whatever a plugin does to it,
and ``check`` names each plugin that wrote to stdout or stderr while being imported.

Real plugin distributions, installed by ``pip``: one replaces ``sys.stdout`` by a
``TextIOWrapper`` over its buffer at import (the recipe for "UTF-8 output"), one prints
from ``atexit``, one writes to stderr at import, and a quiet one. Each command runs as
``python -m tilelang_hostcg`` in a fresh process.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments
from .plugin_factory import Plugin, install, module

# A working codegen (TVM's own C build): check's probe build confirms the route with it.
REGISTER = ('hc.register_host_codegen("c", hc.HostCodegen({name!r}, hc.global_func_host_codegen("target.build.c"), '
            'priority={priority}))\n')
PLUGINS = {
    "hcgo-wrap": """
        import io, sys
        sys.stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8")
        print("wrap: printed through its own wrapper")
    """,
    "hcgo-atexit": """
        import atexit
        atexit.register(lambda: print("atexit: printed at interpreter exit", flush=True))
    """,
    "hcgo-stderr": """
        import sys
        sys.stderr.write("stderr: written while imported\\n")
    """,
    "hcgo-quiet": "",
}
PRIORITY = {"hcgo-wrap": 4, "hcgo-atexit": 3, "hcgo-stderr": 2, "hcgo-quiet": 1}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> PluginEnvironment:
    env = environments.new("cli-stdout")
    plugins = []
    for dist, body in PLUGINS.items():
        name = dist.replace("-", "_")
        plugins.append(Plugin(dist, codegens={"c": name}, files={
            f"{name}.py": module(textwrap.dedent(body) + REGISTER.format(name=dist, priority=PRIORITY[dist]))}))
    install(env, tmp_path_factory.mktemp("cli-stdout"), plugins)
    return env


def _run(env: PluginEnvironment, *argv: str, only: str = ",".join(PLUGINS),
         stdout: Any = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    variables: Mapping[str, str] = {"TILELANG_HOSTCG_ONLY": only}
    return subprocess.run([env.python, "-m", "tilelang_hostcg", *argv], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, env=env.environ(variables),
                          cwd=env.path.parent, timeout=300)


@pytest.mark.parametrize("argv", [("check", "--json"), ("list", "--load", "--json"),
                                  ("explain", "c", "--json"), ("lock",)])
def test_stdout_is_the_document_alone(env: PluginEnvironment, argv: tuple[str, ...]) -> None:
    proc = _run(env, *argv)
    assert "lost sys.stderr" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)  # the whole of stdout is one document
    assert doc["command"] == argv[0]
    for line in ("wrap: printed through its own wrapper", "atexit: printed at interpreter exit",
                 "stderr: written while imported"):
        # Only inside the document (``check`` quotes what a plugin printed), never beside it.
        assert proc.stdout.count(line) == json.dumps(doc).count(line), proc.stdout
        assert line in proc.stderr, (argv, proc.stderr)
    assert proc.returncode == 0, proc.stderr  # plugin-output is a warning


def test_a_lock_redirected_to_a_file_is_one_check_accepts(env: PluginEnvironment,
                                                          tmp_path: Path) -> None:
    lock = tmp_path / "plugins.lock.json"
    with open(lock, "w") as stream:  # `tilelang-hostcg lock > plugins.lock.json`
        proc = _run(env, "lock", stdout=stream)
    assert proc.returncode == 0, proc.stderr
    assert "atexit: printed at interpreter exit" in proc.stderr
    doc = json.loads(lock.read_text())
    assert {d["name"] for d in doc["distributions"]} >= set(PLUGINS)
    check = _run(env, "check", "--lock", str(lock), "--json")
    problems = json.loads(check.stdout)["problems"]
    assert not [p for p in problems if p["code"].startswith("lock-")], problems


def test_check_names_each_plugin_that_printed_while_imported(env: PluginEnvironment) -> None:
    proc = _run(env, "check", "--json")
    doc = json.loads(proc.stdout)
    printed = {item["distribution"]: item for item in doc["printed"]}
    assert set(printed) == {"hcgo-wrap", "hcgo-stderr"}, doc["printed"]
    wrap, err = printed["hcgo-wrap"], printed["hcgo-stderr"]
    assert wrap["stdout"] == len("wrap: printed through its own wrapper\n") and wrap["stderr"] == 0
    assert err["stderr"] == len("stderr: written while imported\n") and err["stdout"] == 0
    assert wrap["entry_point"] == "c = hcgo_wrap" and wrap["version"] == "1.0"
    # Information: a plugin that prints is no problem of the installation.
    assert doc["ok"] is True and doc["problems"] == [] and proc.returncode == 0
    assert _run(env, "check", "--strict").returncode == 0
    text = _run(env, "check").stdout
    assert ("note: plugin distribution 'hcgo-wrap' 1.0, entry point 'c = hcgo_wrap' in group "
            "'tilelang.host_codegen' wrote 38 bytes to stdout while being imported") in text
    assert "'hcgo-stderr' 1.0" in text and "31 bytes to stderr" in text
    quiet = json.loads(_run(env, "check", "--json", only="hcgo-quiet").stdout)
    assert quiet["printed"] == []

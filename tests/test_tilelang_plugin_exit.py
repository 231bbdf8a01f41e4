"""A plugin calling ``sys.exit()`` while it is imported never ends a TileLang program: in a
TileLang 0.1.15 environment, the unchanged program compiles its kernel with TileLang's own
host codegen, and the plugin is one warning naming it, its file and line, and the switch
that skips it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from tilelang_hostcg.testing import write_distribution

from .tilelang_env import KERNELS, TileLangEnv, TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]

PROGRAM = KERNELS + """
print("host source:", len(host_source(elementwise())), "characters")
print("still running")
"""
"""An unchanged TileLang program: it compiles a kernel with host code."""


@pytest.fixture(scope="module", params=params("0.1.15"))
def env(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[TileLangEnv]:
    """A TileLang environment with a plugin whose ``c`` module calls ``sys.exit(3)``."""
    env = tilelang_envs[request.param].env
    source = write_distribution(
        tmp_path_factory.mktemp("exiting"), "exiting-hostcg", requires=["tilelang-hostcg"],
        entry_points={"tilelang.host_codegen": {"c": "exiting_hostcg.codegen"}},
        files={"exiting_hostcg/__init__.py": "", "exiting_hostcg/codegen.py":
               "import sys\n\nsys.exit(3)\n"})
    env.pip("install", "-q", "setuptools>=61")
    env.pip("install", "-q", "--no-deps", "--no-build-isolation", str(source))
    yield env
    env.pip("uninstall", "-q", "-y", "exiting-hostcg")


def test_a_plugin_exiting_at_import_does_not_end_the_unchanged_program(env: TileLangEnv) -> None:
    script = env.path / "scripts" / "exit_program.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(PROGRAM)
    proc = subprocess.run([env.python, str(script)], capture_output=True, text=True,
                          env=env.environ(), cwd=env.path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "still running", proc.stdout
    warnings = [line for line in proc.stderr.splitlines() if "PluginWarning" in line]
    assert len(warnings) == 1, proc.stderr
    (warning,) = warnings
    assert "'exiting-hostcg'" in warning and "sys.exit(3)" in warning
    assert "exiting_hostcg/codegen.py:3" in warning
    assert "TILELANG_HOSTCG_DISABLE=exiting-hostcg" in warning

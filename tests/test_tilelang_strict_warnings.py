"""Warnings as errors meet a broken plugin, in a TileLang 0.1.15 environment, as
``docs/tilelang.md`` ("A broken plugin where warnings are errors") says: the unchanged
program fails under ``python -W error``; a test suite stays strict with
``filterwarnings = ["error", "default::tilelang_hostcg.PluginWarning"]`` (or
``ignore::``); ``-W`` cannot name our category (Python reads it before
``site-packages`` is importable), and ``TILELANG_HOSTCG_DISABLE`` skips the plugin.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tilelang_hostcg.testing import write_distribution

from .tilelang_env import KERNELS, TileLangEnv, TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]

PROGRAM = KERNELS + """
print("host source:", len(host_source(elementwise())), "characters")
"""
"""An unchanged TileLang program: it compiles a kernel with host code."""

TEST = KERNELS + """

def test_compiles():
    assert "int32_t" in host_source(elementwise())
"""


@pytest.fixture(scope="module", params=params("0.1.15"))
def env(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[TileLangEnv]:
    """A TileLang environment with a plugin whose ``c`` module raises on import."""
    env = tilelang_envs[request.param].env
    source = write_distribution(
        tmp_path_factory.mktemp("broken"), "broken-hostcg", requires=["tilelang-hostcg"],
        entry_points={"tilelang.host_codegen": {"c": "broken_hostcg.codegen"}},
        files={"broken_hostcg/__init__.py": "", "broken_hostcg/codegen.py":
               "raise RuntimeError('broken on purpose')\n"})
    env.pip("install", "-q", "pytest", "setuptools>=61")
    env.pip("install", "-q", "--no-deps", "--no-build-isolation", str(source))
    yield env
    env.pip("uninstall", "-q", "-y", "broken-hostcg")


def python(env: TileLangEnv, *options: str, extra: dict[str, str] | None = None,
           program: str = PROGRAM) -> subprocess.CompletedProcess[str]:
    script = env.path / "scripts" / "strict_program.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(program)
    return subprocess.run([env.python, *options, str(script)], capture_output=True, text=True,
                          env=env.environ(extra), cwd=env.path, timeout=300)


def pytest_with(env: TileLangEnv, folder: Path, filterwarnings: str,
                ) -> subprocess.CompletedProcess[str]:
    folder.mkdir()
    (folder / "pyproject.toml").write_text(f"[tool.pytest.ini_options]\nfilterwarnings = {filterwarnings}\n")
    (folder / "test_program.py").write_text(TEST)
    return subprocess.run([env.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                          capture_output=True, text=True, env=env.environ(), cwd=folder,
                          timeout=300)


def test_warnings_as_errors_fail_the_unchanged_program(env: TileLangEnv) -> None:
    plain = python(env)
    assert plain.returncode == 0, plain.stderr
    assert "PluginWarning" in plain.stderr and "broken-hostcg" in plain.stderr
    strict = python(env, "-W", "error")
    assert strict.returncode == 1
    assert re.search(r"\btilelang_hostcg\.[\w.]*\.SkippedPluginWarning: plugin distribution 'broken-hostcg'",
                     strict.stderr), strict.stderr
    skipped = python(env, "-W", "error", extra={"TILELANG_HOSTCG_DISABLE": "broken-hostcg"})
    assert skipped.returncode == 0, skipped.stderr
    filtered = python(env, "-W", "error", program=(
        "import warnings\nimport tilelang_hostcg\n"
        "warnings.filterwarnings('default', category=tilelang_hostcg.PluginWarning)\n" + PROGRAM))
    assert filtered.returncode == 0, filtered.stderr
    assert "PluginWarning" in filtered.stderr and "broken-hostcg" in filtered.stderr


def test_the_category_cannot_be_named_with_dash_w(env: TileLangEnv) -> None:
    code = "import warnings; print(any(f[2].__name__ == 'PluginWarning' for f in warnings.filters))"
    proc = subprocess.run([env.python, "-W", "default::tilelang_hostcg.PluginWarning", "-c", code],
                          capture_output=True, text=True, env=env.environ(), timeout=60)
    assert "Invalid -W option ignored: invalid module name: 'tilelang_hostcg'" in proc.stderr
    assert proc.stdout.strip() == "False"  # the filter was dropped


def test_a_strict_suite_stays_strict_with_the_documented_line(env: TileLangEnv,
                                                               tmp_path: Path) -> None:
    strict = pytest_with(env, tmp_path / "strict", '["error"]')
    assert strict.returncode == 1 and "PluginWarning" in strict.stdout, strict.stdout
    for action in ("default", "ignore"):
        line = f'["error", "{action}::tilelang_hostcg.PluginWarning"]'
        proc = pytest_with(env, tmp_path / action, line)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "1 passed" in proc.stdout
        assert ("broken-hostcg" in proc.stdout) is (action == "default"), proc.stdout

"""Every code block of ``docs/authoring.md`` runs where TVM comes from TileLang (0.1.15).

The same runner as ``tests/test_docs.py``, over a TileLang environment instead of one
layered over apache-tvm: the guide's plugin is pip-installed there, its Python blocks
run in fresh interpreters that never ``import tilelang`` themselves, its shell
commands run there, and its tests run under pytest with the project's pytest plugin.
"""

from __future__ import annotations

import subprocess
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from .test_docs import BLOCKS, Plugin
from .test_docs import test_every_block_of_the_guide_runs as _every_block_runs
from .tilelang_env import TileLangEnv, TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]


class _TileLangPluginEnv:
    """What the guide's runner uses of a ``PluginEnvironment``, over a TileLang venv."""

    def __init__(self, env: TileLangEnv) -> None:
        self.env = env
        self.python = env.python

    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return self.env.environ(dict(extra or {}))

    def pip(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([self.python, "-m", "pip", "--disable-pip-version-check",
                               "--no-input", *args], capture_output=True, text=True,
                              env=self.environ(), timeout=600)
        assert proc.returncode == 0, f"pip {args} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc

    def command(self, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.python, "-m", "tilelang_hostcg", *argv], capture_output=True,
                              text=True, env=self.environ(), cwd=cwd, timeout=600)

    def python_run(self, code: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.python, "-c", textwrap.dedent(code)], capture_output=True,
                              text=True, env=self.environ(), cwd=cwd, timeout=600)


@pytest.fixture(scope="module", params=params("0.1.15"))
def tilelang_plugin(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                    tilelang_envs: TileLangEnvs) -> Iterator[Plugin]:
    env = tilelang_envs[request.param].env
    # What the guide's commands need beside TileLang: the project (installed), pytest,
    # and the build requirement its pyproject.toml declares (built without isolation).
    env.pip("install", "-q", "pytest", "setuptools>=77.0.1", "wheel")
    folder = tmp_path_factory.mktemp("guide-tilelang") / "acme-hostcg"
    for block in BLOCKS:
        if block.file is not None:
            target = folder / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
    yield Plugin(_TileLangPluginEnv(env), folder)  # type: ignore[arg-type]
    env.pip("uninstall", "-q", "-y", "acme-hostcg")  # the environment is shared: leave it clean


def test_every_block_of_the_guide_runs_with_tilelangs_tvm(tilelang_plugin: Plugin) -> None:
    _every_block_runs(tilelang_plugin)
    proc = tilelang_plugin.env.command("list", cwd=tilelang_plugin.folder)
    assert "TVM in use: TVM bundled with tilelang 0.1.15" in proc.stdout, proc.stdout

"""Every code block of ``docs/authoring.md`` runs where TVM comes from TileLang (0.1.15).

The same runner as ``tests/test_docs.py``, over a TileLang environment: the guide's
commands run as written there (the core from its checkout, then ``pip install -e .``,
dependencies resolved from the index), its Python blocks run in fresh interpreters that
never ``import tilelang`` themselves, and its tests run under pytest with the project's
pytest plugin. Afterwards ``pip check`` is clean, nothing but the plugin and the core
changed (torch, TileLang, ``apache-tvm-ffi`` stay), and ``import tilelang`` works.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .test_docs import GuideEnv, Plugin, run_the_guide, write_the_guides_plugin
from .tilelang_env import TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]


@pytest.fixture(scope="module", params=params("0.1.15"))
def tilelang_plugin(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                    tilelang_envs: TileLangEnvs) -> Iterator[Plugin]:
    env = tilelang_envs[request.param].env
    yield Plugin(GuideEnv(env.path, env.environ),
                 write_the_guides_plugin(tmp_path_factory.mktemp("guide-tilelang")))
    env.pip("uninstall", "-q", "-y", "acme-hostcg")  # the environment is shared: leave it clean
    tilelang_envs.restore(request.param)  # the guide installed the core from the checkout


def test_every_block_of_the_guide_runs_with_tilelangs_tvm(tilelang_plugin: Plugin) -> None:
    run_the_guide(tilelang_plugin)
    proc = tilelang_plugin.env.command("list", cwd=tilelang_plugin.folder)
    assert "TVM in use: TVM bundled with tilelang 0.1.15" in proc.stdout, proc.stdout
    proc = tilelang_plugin.env.python_run("import tilelang; print(tilelang.__version__)")
    assert proc.returncode == 0 and "0.1.15" in proc.stdout, proc.stdout + proc.stderr

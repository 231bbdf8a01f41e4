"""A plugin whose entry points are in a near miss of our groups (``[tilelang.host_codegens]``)
is one warning at the user's ``import tilelang`` line, in an unchanged TileLang program
(a real TileLang 0.1.15, the plugin a real wheel installed by ``pip``), and not a second
one at the registry's first use."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tilelang_hostcg.testing import write_distribution

from .plugin_factory import build_source_wheels
from .tilelang_env import TileLangEnv, TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]

DIST = "hcgn-typo"
PROGRAM = """\
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tilelang
    at_import = len(caught)
    import tilelang_hostcg
    tilelang_hostcg.default_registry().sources()
print(json.dumps({"at_import": at_import, "warnings": [
    [w.category.__name__, str(w.message), w.filename, w.lineno] for w in caught]}))
"""
IMPORT_LINE = 4


@pytest.fixture(scope="module", params=params("0.1.15"))
def env(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[TileLangEnv]:
    env = tilelang_envs[request.param].env
    root = tmp_path_factory.mktemp("near-miss")
    source = write_distribution(root / "src", DIST, "1.0", requires=["tilelang-hostcg>=0.1,<1"],
                                entry_points={"tilelang.host_codegens": {"c": "hcgn_typo:CODEGEN"}},
                                files={"hcgn_typo.py": "CODEGEN = None\n"})
    (wheel,) = build_source_wheels(root / "wheels", [source])
    env.pip("install", "-q", "--no-deps", "--no-index", str(wheel))
    try:
        yield env
    finally:
        env.pip("uninstall", "-q", "-y", DIST)


def test_a_near_miss_group_warns_at_the_users_import_tilelang_line(env: TileLangEnv) -> None:
    proc = env.run(PROGRAM)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    near = [w for w in result["warnings"] if "[tilelang.host_codegens]" in w[1]]
    assert len(near) == 1, result["warnings"]  # at import, and not again at first use
    category, message, filename, lineno = near[0]
    assert category == "NearMissPluginWarning" and f"{DIST!r}" in message
    assert "did you mean [tilelang.host_codegen]" in message
    assert Path(filename).name.startswith("run_") and lineno == IMPORT_LINE, near[0]
    assert result["at_import"] >= 1

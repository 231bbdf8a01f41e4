"""Warnings filters never decide what runs (the TileLang client, a real TileLang 0.1.15). An
unchanged TileLang program, with the stamp plugin and a distribution whose entry points are in
a near miss of our groups pip-installed, is routed under ``python -W error`` (and
``-W error::UserWarning``, and a filter set in code) exactly as without a filter, with every
control problem activation at ``import tilelang`` can warn about set at once: the start-up
hook's (``TILELANG_HOSTCG_AUTO_INSTALL`` not understood) and the activation's (unknown
variables, a name that names nothing, a malformed item), and where activation fails. Each
warning is shown once on stderr, as without the filter."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tilelang_hostcg.testing import write_distribution

from .plugin_factory import build_source_wheels
from .test_warnings_filters import CONTROLS, NEAR_MISS
from .tilelang_env import KERNELS, TileLangEnv, TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]

STAMPS = ("tilelang_hostcg_stamp_codegen", "tilelang_hostcg_stamp_hook")
PROGRAM = "import json, sys, warnings; FILTER\nCLAIM\n" + KERNELS + """
source = host_source(elementwise())
print(json.dumps({"stamped": [s in source for s in STAMPS],
                  "installed": sys.modules["tilelang_hostcg.tilelang"].is_installed()}))
""".replace("STAMPS", repr(STAMPS))


@pytest.fixture(scope="module", params=params("0.1.15"))
def env(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[TileLangEnv]:
    env = tilelang_envs[request.param].env
    root = tmp_path_factory.mktemp("tilelang-filters")
    source = write_distribution(root / "src", "hcgw-typo", requires=["tilelang-hostcg>=0.1,<1"],
                                entry_points={"tilelang.host_codegens": {"c": "hcgw_typo:CODEGEN"}},
                                files={"hcgw_typo.py": "CODEGEN = None\n"})
    (wheel,) = build_source_wheels(root / "wheels", [source])
    env.pip("install", "-q", "--no-deps", "--no-index", str(wheel),
            str(tilelang_envs.wheels["tilelang-hostcg-stamp"]))
    try:
        yield env
    finally:
        env.pip("uninstall", "-q", "-y", "hcgw-typo", "tilelang-hostcg-stamp")


# Code that claims TileLang's default name before importing TileLang: activation fails.
CLAIM = ("import tilelang_hostcg as hc; "
         "hc.register_host_codegen('c', hc.HostCodegen('tilelang-c', lambda m, t: m))")


def run(env: TileLangEnv, options: list[str], in_code: bool = False, claim: bool = False,
        ) -> tuple[Any, str]:
    controls = {k: v for variables, _ in CONTROLS.values() for k, v in variables.items()}
    script = env.path / "scripts" / "filters_program.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(PROGRAM.replace("FILTER", "warnings.simplefilter('error')" if in_code else "pass")
                      .replace("CLAIM", CLAIM if claim else "pass"))
    proc = subprocess.run([env.python, *options, str(script)], capture_output=True, text=True,
                          env=env.environ(controls), cwd=env.path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_warnings_filter_never_changes_routing_tilelang(env: TileLangEnv) -> None:
    plain, plain_err = run(env, [])
    assert plain == {"stamped": [True, True], "installed": True}
    for options, in_code in ((["-W", "error"], False), (["-W", "error::UserWarning"], False), ([], True)):
        strict, strict_err = run(env, options, in_code)
        assert strict == plain, (options, in_code, strict_err)
        assert strict_err == plain_err, (options, in_code)
        for needle in [NEAR_MISS, *(needle for _, needle in CONTROLS.values())]:
            assert strict_err.count(needle) == 1, (needle, strict_err)


def test_a_failed_activation_is_shown_not_raised_under_warnings_as_errors_tilelang(env: TileLangEnv) -> None:
    plain, plain_err = run(env, [], claim=True)
    strict, strict_err = run(env, ["-W", "error"], claim=True)
    assert plain == strict == {"stamped": [False, False], "installed": False}
    assert strict_err == plain_err
    assert strict_err.count("did not activate its TileLang integration") == 1, strict_err

"""Builds that do not take the route, with real TileLang wheels: an older build's files installed over
stock 0.1.15 (its lowering calls neither point; 0.1.15's leftover ``tilelang/backend/module.py``
still has them), and another package that replaces our TileLang functions after ``install()``. The
first build shows it, naming the point, and ``check`` names who holds the point. The edited
releases (a dead branch, a same-named helper, a renamed point kept as an alias, a legacy flag, a
point that gains ``**options``) are cases of ``tests/test_tilelang_open_world.py``."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .tilelang_env import KERNELS, TileLangEnv, TileLangEnvs, base_env, relabel

pytestmark = [pytest.mark.slow, pytest.mark.tilelang, pytest.mark.xdist_group("tilelang-0.1.15")]

STAMPS = ("tilelang_hostcg_stamp_codegen", "tilelang_hostcg_stamp_hook")
POINTS = ("tilelang.backend.module.BackendModule.get_host_codegen",
          "tilelang.backend.module.BackendModule.preprocess_host_codegen")
PROGRAM = KERNELS + """
import json
import tilelang_hostcg.tilelang as integration  # KERNELS imported TileLang: activation alone
before = integration.is_installed()  # before a build: what can be known
source = host_source(elementwise())
print(json.dumps({"stamps": [s in source for s in STAMPS], "before": before, "source": source,
                  "installed": integration.is_installed(), "by_build": integration.CLIENT.live().by_build}))
""".replace("STAMPS", repr(STAMPS))


def _site(path: Path) -> Path:
    return next((path / "lib").glob("python*/site-packages"))


def _run(env: TileLangEnv, extra: dict[str, str] | None = None) -> dict:
    """:data:`PROGRAM`'s document, with the lines of tilelang-hostcg's warnings it printed on stderr."""
    proc = env.run(PROGRAM, env=extra)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["warnings"] = [line for line in proc.stderr.splitlines() if "Warning: tilelang-hostcg" in line]
    return out


@pytest.fixture(scope="module")
def over_stock(tilelang_envs: TileLangEnvs) -> Iterator[TileLangEnv]:
    """Stock 0.1.15 with the project and the stamp plugin, and over it a vendor's build of 0.1.12's
    files, ``tilelang-vendor``, as pip installs it: its files written over the same ``tilelang/``
    folder (0.1.15's files it does not ship are left there), the ``apache-tvm-ffi`` it requires in
    place of 0.1.15's, and its metadata beside stock's (hard links: no file of a base is written)."""
    base = tilelang_envs["0.1.15"].env
    env = relabel(base, base.path.parent / "vendor-over-stock", "tilelang", "0.1.15")
    older = TileLangEnv(base_env("0.1.12"), "0.1.12", build=False)  # read only: relabel writes in its copy
    vendor = relabel(older, base.path.parent / "vendor-files", "tilelang-vendor", "0.1.12")
    site, files = _site(env.path), _site(vendor.path)
    for ffi in [*site.glob("apache_tvm_ffi-*.dist-info"), site / "tvm_ffi"]:
        shutil.rmtree(ffi)
    for item in ["tilelang", "tvm_ffi", *(p.name for p in files.glob("apache_tvm_ffi-*.dist-info")),
                 "tilelang_vendor-0.1.12.dist-info"]:
        subprocess.run(["cp", "-rl", "--remove-destination", str(files / item), str(site)], check=True)
    shutil.rmtree(vendor.path)
    env.pip("install", "-q", "--no-deps", str(tilelang_envs.wheels["tilelang-hostcg-stamp"]))
    yield env
    shutil.rmtree(env.path, ignore_errors=True)


def test_an_older_builds_files_over_stock_are_noticed_at_the_first_build(over_stock: TileLangEnv) -> None:
    """0.1.15's leftover ``BackendModule`` has every point, so ``install()`` patches it; 0.1.12's
    lowering never calls it. Before a build, what can be known (installed); the first build shows the
    host code is stock: one warning naming both points, and ``is_installed()`` is false."""
    out, stock = _run(over_stock), _run(over_stock, {"TILELANG_HOSTCG_AUTO_INSTALL": "0"})
    assert out["stamps"] == [False, False] and out["source"] == stock["source"]  # stock host code
    assert out["before"] and not out["installed"] and out["by_build"], out
    noticed = [line for line in out["warnings"] if "build completed without calling" in line]
    assert len(noticed) == 1 and all(point in noticed[0] for point in POINTS), out["warnings"]
    assert "tilelang_hostcg.tilelang.is_installed() is false" in noticed[0]
    checked = over_stock.cli("check", "--json")
    client = json.loads(checked.stdout)["client"]
    assert client["routed"] is False and client["probe"]["called"] is False, client
    assert POINTS[0] in client["problem"] and "no longer reaches it" in client["problem"]


RIVAL = '''
"""Another package: replaces TileLang's get_host_codegen once more, calling TileLang's own."""
import inspect

from tilelang.backend.module import BackendModule

_own = inspect.unwrap(BackendModule.__dict__["get_host_codegen"])


def get_host_codegen(self, target_host):
    return _own(self, target_host)


BackendModule.get_host_codegen = get_host_codegen
'''

CHECK_AFTER_RIVAL = """
import contextlib, io, json
import tilelang  # activation installs the integration
import later_rival  # then another package replaces our function
from tilelang_hostcg.cli._probe_process import probed_client
from tilelang_hostcg.clients._probe import probe
# check's client document, its probe build run in this process, where the rival is (check runs it in a
# process of its own, which imports only what a program of the environment imports)
client, _ = probed_client(probe)
print(json.dumps(client))
"""


def test_check_names_a_later_rival_that_replaced_our_tilelang_function(tilelang_envs: TileLangEnvs) -> None:
    base = tilelang_envs["0.1.15"].env
    env = relabel(base, base.path.parent / "later-rival", "tilelang", "0.1.15")
    try:
        env.pip("install", "-q", "--no-deps", str(tilelang_envs.wheels["tilelang-hostcg-stamp"]))
        (env.path / "scripts").mkdir(exist_ok=True)
        rival = env.path / "scripts" / "later_rival.py"
        rival.write_text(RIVAL)
        client = env.run_json(CHECK_AFTER_RIVAL)
        assert client["routed"] is False and client["probe"]["called"] is False, client
        assert client["problem"].startswith("the probe build did not call the route: plugins are not used")
        assert f"{POINTS[0]}: 'later_rival' ({rival}) holds it and does not call it" in client["problem"], client
    finally:
        shutil.rmtree(env.path, ignore_errors=True)

"""Rule: discovery sees what ``importlib.metadata`` sees.

Each test writes real ``*.dist-info``/``*.egg-info`` folders (or pip-installs real
distributions), runs a fresh interpreter with them on ``sys.path``, and compares,
in that same process, the entry points of our groups that discovery gives
(``tilelang_hostcg.discovery._planning.discover``, discovery's interface below the public API:
these are tests of that layer) with those of ``importlib.metadata.entry_points()``; it
also checks what is reported as installed twice, and what ``check --strict`` says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment, write_distribution

from .conftest import Environments

CODEGEN_GROUP = "tilelang.host_codegen"

# argv: the sys.path entries to put first (in order, duplicates kept). Prints what
# importlib.metadata and our scan see of our groups, and the reported duplicates.
COMPARE = """
import importlib.metadata, json, sys, warnings
sys.path[0:0] = sys.argv[1:]
GROUPS = ("tilelang.host_codegen", "tilelang.host_codegen_hooks")
theirs = sorted([ep.group, ep.name, ep.value] for group in GROUPS
                for ep in importlib.metadata.entry_points(group=group))
from tilelang_hostcg.discovery._planning import Controls, discover
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    index = discover(Controls())
ours = sorted([ep.group, ep.name, ep.value] for ep in index.entry_points)
print(json.dumps({"theirs": theirs, "ours": ours,
                  "versions": sorted({ep.distribution + "=" + ep.version
                                      for ep in index.entry_points}),
                  "duplicates": [[n, list(l)] for n, l in index.duplicates],
                  "warnings": [str(w.message) for w in caught]}))
"""


def dist_info(site: Path, name: str, version: str, entry_points: Mapping[str, str] | None,
              folder_name: str | None = None) -> Path:
    """Write ``site/<name>-<version>.dist-info`` with METADATA and entry points."""
    folder = site / (folder_name or f"{name.replace('-', '_')}-{version}.dist-info")
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if entry_points is not None:
        lines = [f"[{CODEGEN_GROUP}]", *(f"{k} = {v}" for k, v in entry_points.items())]
        (folder / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return folder


def compare(entries: Sequence[str], cwd: Path, python: str = sys.executable,
            env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run :data:`COMPARE` with ``entries`` first on ``sys.path``; checks they agree."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    environ.update(env or {})
    proc = subprocess.run([python, "-c", COMPARE, *entries], capture_output=True, text=True,
                          cwd=cwd, env=environ, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["ours"] == result["theirs"], result
    return result


def _ours(result: dict[str, Any], kind: str) -> list[list[str]]:
    return [ep for ep in result["ours"] if ep[1] == kind]


def test_first_copy_wins_even_when_it_advertises_nothing(tmp_path: Path) -> None:
    new, old = tmp_path / "new", tmp_path / "old"
    dist_info(new, "shadow-probe", "2.0", None)  # the upgrade dropped the plugin
    dist_info(old, "shadow-probe", "1.0", {"llvm": "shadow_probe_stale:CG"})
    result = compare([str(new), str(old)], tmp_path)
    assert _ours(result, "llvm") == [[CODEGEN_GROUP, "llvm", "tilelang_hostcg.builtin:"
                                      "LLVM_HOST_CODEGEN"]]
    # Reported, never used: the stale copy is the one that advertises our group.
    assert result["duplicates"] == [["shadow-probe", [str(new / "shadow_probe-2.0.dist-info"),
                                                      str(old / "shadow_probe-1.0.dist-info")]]]


def test_first_copy_wins_by_normalized_folder_name(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    dist_info(first, "Norm.Probe", "2.0", {"normkind": "norm_new"}, "Norm.Probe-2.0.dist-info")
    dist_info(second, "norm-probe", "1.0", {"normkind": "norm_old", "oldkind": "norm_old"})
    result = compare([str(first), str(second)], tmp_path)
    assert [ep[1:] for ep in result["ours"] if ep[1] in ("normkind", "oldkind")] == [
        ["normkind", "norm_new"]]
    assert result["versions"].count("Norm.Probe=2.0") == 1
    assert [d[0] for d in result["duplicates"]] == ["norm-probe"]


@pytest.mark.parametrize("spelling", ["twice", "symlink", "relative", "trailing-slash"])
def test_one_folder_on_the_path_twice_is_one_location(tmp_path: Path, spelling: str) -> None:
    site = tmp_path / "site"
    dist_info(site, "twice-probe", "1.0", {"twicekind": "twice_probe"})
    other = {"twice": str(site), "symlink": str(tmp_path / "link"),
             "relative": "site", "trailing-slash": str(site) + os.sep}[spelling]
    if spelling == "symlink":
        (tmp_path / "link").symlink_to(site, target_is_directory=True)
    result = compare([str(site), other], tmp_path)
    assert _ours(result, "twicekind") == [[CODEGEN_GROUP, "twicekind", "twice_probe"]]
    assert result["duplicates"] == []


def test_python_m_from_a_folder_also_on_pythonpath(tmp_path: Path) -> None:
    """``python -m`` puts the working directory first; PYTHONPATH names it again."""
    site = tmp_path / "site"
    dist_info(site, "cwd-probe", "1.0", {"cwdkind": "cwd_probe"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    env.update(PYTHONPATH=str(site))
    proc = subprocess.run([sys.executable, "-m", "tilelang_hostcg", "check", "--strict", "--json"],
                          capture_output=True, text=True, cwd=site, env=env, timeout=300)
    doc = json.loads(proc.stdout)
    codes = [p["code"] for p in doc["problems"]]
    assert "duplicate-distribution" not in codes, doc["problems"]
    assert not any("installed 2 times" in p["message"] for p in doc["problems"])


def test_a_real_second_copy_is_reported_with_advice_that_fixes_it(tmp_path: Path) -> None:
    first, stale = tmp_path / "first", tmp_path / "stale"
    dist_info(first, "stale-probe", "2.0", {"stalekind": "stale_new"})
    old = dist_info(stale, "stale-probe", "1.0", {"stalekind": "stale_old"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    env.update(PYTHONPATH=os.pathsep.join([str(first), str(stale)]))

    def check() -> tuple[int, list[dict[str, Any]]]:
        proc = subprocess.run([sys.executable, "-m", "tilelang_hostcg", "check", "--strict",
                               "--json", "--require", "llvm"], capture_output=True, text=True,
                              cwd=tmp_path, env=env, timeout=300)
        return proc.returncode, [p for p in json.loads(proc.stdout)["problems"]
                                 if p["code"] == "duplicate-distribution"]

    code, dups = check()
    assert code == 1 and len(dups) == 1, dups
    message = dups[0]["message"]
    assert str(old) in message and "2 times" in message
    # Following the advice (remove the stale metadata folder) fixes it.
    assert "remove" in message.lower() and str(old) in message
    import shutil

    shutil.rmtree(old)
    code, dups = check()
    assert dups == []


# ------------------------------------------------------------------ editable installs
@pytest.fixture(scope="module")
def env(environments: Environments) -> PluginEnvironment:
    return environments.new("editable")


def _src_layout(root: Path, name: str, kind: str) -> Path:
    module = name.replace("-", "_")
    project = write_distribution(root, name, "1.0",
                                 entry_points={CODEGEN_GROUP: {kind: f"{module}:CG"}})
    (project / "src" / module).mkdir(parents=True)
    (project / "src" / module / "__init__.py").write_text("CG = None\n")
    text = (project / "pyproject.toml").read_text()
    (project / "pyproject.toml").write_text(
        text.replace('packages = []', f'packages = ["{module}"]\npackage-dir = {{"" = "src"}}'))
    return project


@pytest.mark.slow
def test_editable_src_layout_with_current_setuptools_is_one_distribution(
        env: PluginEnvironment, tmp_path: Path) -> None:
    project = _src_layout(tmp_path, "hostcg-ed-src", "edsrckind")
    # A regular install first leaves src/*.egg-info, which the editable install's
    # path entry then puts on sys.path next to the installed *.dist-info.
    env.install(project)
    env.pip("install", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-e",
            str(project))
    assert list((project / "src").glob("*.egg-info")), "setuptools left no egg-info"
    try:
        result = compare([], tmp_path, python=env.python, env=env.environ())
        assert _ours(result, "edsrckind") == [[CODEGEN_GROUP, "edsrckind", "hostcg_ed_src:CG"]]
        assert result["duplicates"] == []
        # Also when the source folder comes first (a script run from it).
        result = compare([str(project / "src")], tmp_path, python=env.python,
                         env=env.environ())
        assert result["duplicates"] == []
        proc = env.command("check", "--strict", "--json", cwd=tmp_path)
        problems = json.loads(proc.stdout)["problems"]
        assert not [p for p in problems if p["code"] == "duplicate-distribution"], problems
    finally:
        env.uninstall("hostcg-ed-src")


@pytest.mark.slow
def test_legacy_develop_egg_link_is_one_distribution(env: PluginEnvironment,
                                                      tmp_path: Path) -> None:
    """What ``setup.py develop`` (pip's legacy editable mode) leaves: the project folder
    with its ``*.egg-info`` on ``sys.path`` through ``easy-install.pth``, and an
    ``.egg-link`` naming it; run from the project folder, it is on the path twice."""
    project = tmp_path / "legacy-project"
    info = project / "hostcg_legacy.egg-info"
    info.mkdir(parents=True)
    (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: hostcg-legacy\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{CODEGEN_GROUP}]\nlegacykind = hostcg_legacy\n")
    (project / "hostcg_legacy.py").write_text("")
    (env.site_packages / "hostcg-legacy.egg-link").write_text(f"{project}\n.")
    pth = env.site_packages / "easy-install.pth"
    pth.write_text(f"{project}\n")
    try:
        for cwd, first in ((tmp_path, []), (project, [""]), (project, [str(project)])):
            result = compare(first, cwd, python=env.python, env=env.environ())
            assert _ours(result, "legacykind") == [[CODEGEN_GROUP, "legacykind",
                                                    "hostcg_legacy"]]
            assert result["duplicates"] == []
    finally:
        pth.unlink()
        (env.site_packages / "hostcg-legacy.egg-link").unlink()

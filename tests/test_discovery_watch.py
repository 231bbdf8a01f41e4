"""Discovery sees the installed metadata as it is now, and reports what cannot take effect.

Real metadata folders written into a folder put on ``sys.path`` (``PYTHONPATH``), and
fresh processes: metadata rewritten in place and seen by ``refresh()``, entry points in
a near miss of our groups, a plugin without a requirement on the core, unknown, removed
and malformed variables; the removed ``cache`` command; nothing written under the
user's cache folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg import Controls, PluginWarning

PROBE = """
import json, sys, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tilelang_hostcg
    registry = tilelang_hostcg.default_registry()
    def ours():
        return sorted([[s.origin.distribution, s.kind, s.state, s.reason, s.origin.entry_point]
                       for s in registry.sources()], key=str)
    sources = ours()
    if len(sys.argv) > 1:  # rewrite a file, then refresh() in the same process
        with open(sys.argv[1], "w", encoding="utf-8") as fh:
            fh.write(sys.argv[2])
        registry.refresh()
    after = ours()
print(json.dumps({
    "entry_points": [s for s in sources if s[0] != "tilelang-hostcg"],
    "after": [s for s in after if s[0] != "tilelang-hostcg"],
    "sources": [s[:4] for s in sources],
    "warnings": [str(w.message) for w in caught],
}))
"""


class Site:
    """A folder of hand-written metadata on ``PYTHONPATH``, with its own cache folder
    (which must stay empty)."""

    def __init__(self, root: Path) -> None:
        self.path = root / "site"
        self.path.mkdir()
        self.cwd = root / "cwd"
        self.cwd.mkdir()
        self.xdg = root / "xdg"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
        env.update(PYTHONPATH=str(self.path), XDG_CACHE_HOME=str(self.xdg), **extra)
        return env

    def egg_info(self, name: str, version: str, entry_points: str = "",
                 requires: tuple[str, ...] = ()) -> Path:
        """A develop install's ``name.egg-info`` folder (no version in its name)."""
        folder = self.path / f"{name}.egg-info"
        folder.mkdir(exist_ok=True)
        _rewrite(folder / "PKG-INFO", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        if entry_points:
            _rewrite(folder / "entry_points.txt", entry_points)
        if requires:
            _rewrite(folder / "requires.txt", "\n".join(requires) + "\n")
        return folder

    def dist_info(self, name: str, version: str, entry_points: str,
                  requires: tuple[str, ...] = ()) -> Path:
        folder = self.path / f"{name.replace('-', '_')}-{version}.dist-info"
        folder.mkdir()
        lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
        lines += [f"Requires-Dist: {line}" for line in requires]
        (folder / "METADATA").write_text("\n".join(lines) + "\n")
        (folder / "entry_points.txt").write_text(entry_points)
        return folder

    def probe(self, *rewrite: str, **extra: str) -> dict[str, Any]:
        proc = subprocess.run([sys.executable, "-c", PROBE, *rewrite], capture_output=True,
                              text=True, env=self.env(**extra), cwd=self.cwd)
        assert proc.returncode == 0, proc.stderr
        result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
        assert not self.xdg.exists(), "something was written under XDG_CACHE_HOME"
        return result

    def run(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tilelang_hostcg", *args],
                              capture_output=True, text=True, env=self.env(**extra), cwd=self.cwd)

    def cli(self, *args: str, expect: int, **extra: str) -> dict[str, Any]:
        proc = self.run(*args, "--json", **extra)
        assert proc.returncode == expect, proc.stdout + proc.stderr
        doc: dict[str, Any] = json.loads(proc.stdout)
        return doc


def _rewrite(path: Path, text: str) -> None:
    """Rewrite ``path`` in place, as setuptools' ``egg_info`` does (same inode)."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


@pytest.fixture
def site(tmp_path: Path) -> Site:
    return Site(tmp_path)


PLUGIN_EPS = "[tilelang.host_codegen]\nhcgw_kind = hcgw_plugin:CODEGEN\n"


def test_a_develop_install_upgraded_in_place_is_seen_by_refresh(site: Site) -> None:
    tilelang = site.egg_info("tilelang", "0.1.15")
    (tilelang / "top_level.txt").write_text("tilelang\n")  # and the package beside it, as develop leaves them
    (site.path / "tilelang").mkdir()
    (site.path / "tilelang" / "__init__.py").write_text("")
    site.dist_info("hcgw-plugin", "1.0", PLUGIN_EPS, ("tilelang-hostcg", "tilelang<0.1.16"))
    result = site.probe(str(tilelang / "PKG-INFO"),  # python setup.py develop, upgraded
                        "Metadata-Version: 2.1\nName: tilelang\nVersion: 0.1.16\n")
    assert [s[2] for s in result["entry_points"]] == ["lazy"]
    (after,) = result["after"]
    assert after[2] == "incompatible" and "'tilelang<0.1.16'" in after[3] and "0.1.16" in after[3]


def test_entry_points_gaining_our_group_in_place_are_seen_by_refresh(site: Site) -> None:
    egg = site.egg_info("hcgw-late", "1.0", "[console_scripts]\nhcgw = hcgw_late:main\n",
                        requires=("tilelang-hostcg",))
    result = site.probe(str(egg / "entry_points.txt"),
                        "[console_scripts]\nhcgw = hcgw_late:main\n\n"
                        "[tilelang.host_codegen]\nhcgw_late = hcgw_late:CODEGEN\n")
    assert result["entry_points"] == []
    assert result["after"] == [["hcgw-late", "hcgw_late", "lazy", None,
                                "hcgw_late = hcgw_late:CODEGEN"]]


NEAR_MISSES = ("tilelang.host_codegens", "tilelang.hostcodegen", "tilelang.host_codegen_hook",
               "TileLang.host_codegen")


@pytest.fixture(scope="module")
def near_miss_sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Site]:
    """A site per near-miss group, each with a plugin declaring its entry point there."""
    sites = {}
    for group in NEAR_MISSES:
        site = Site(tmp_path_factory.mktemp("near-miss"))
        site.dist_info("hcgw-typo", "1.0", f"[{group}]\nllvm = hcgw_typo:CODEGEN\n",
                       ("tilelang-hostcg",))
        sites[group] = site
    return sites


@pytest.mark.parametrize("group", NEAR_MISSES)
def test_near_miss_group_warns_at_first_use(near_miss_sites: dict[str, Site],
                                            group: str) -> None:
    result = near_miss_sites[group].probe()
    assert result["entry_points"] == []
    near = [w for w in result["warnings"] if f"[{group}]" in w]
    assert len(near) == 1, result["warnings"]
    assert "'hcgw-typo'" in near[0] and "did you mean [tilelang.host_codegen" in near[0]


def test_a_near_miss_warning_points_at_the_users_line(near_miss_sites: dict[str, Site]) -> None:
    site = near_miss_sites[NEAR_MISSES[0]]
    proc = subprocess.run([sys.executable, "-W", "always", "-c",
                           "import tilelang_hostcg\n\ntilelang_hostcg.default_registry().sources()"],
                          capture_output=True, text=True, env=site.env(), cwd=site.cwd)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("<string>:3: NearMissPluginWarning: distribution 'hcgw-typo'"), proc.stderr


def test_unrelated_groups_are_not_near_misses(site: Site) -> None:
    site.dist_info("hcgw-other", "1.0", "[tilelang.kernels]\na = b\n[console_scripts]\nc = d\n")
    assert site.probe()["warnings"] == []


def test_check_reports_declarations_and_controls_and_strict_fails(site: Site) -> None:
    (site.path / "hcgw_nodep.py").write_text(
        "from tilelang_hostcg import HostCodegenHook\n"
        "HOOK = HostCodegenHook('nodep', lambda mod, target_host, target: mod)\n")
    site.dist_info("hcgw-nodep", "1.0", "[tilelang.host_codegen_hooks]\ncuda = hcgw_nodep:HOOK\n")
    site.dist_info("hcgw-typo", "1.0", "[tilelang.host_codegens]\nllvm = x:Y\n",
                   ("tilelang-hostcg>=0.1",))
    controls = {"TILELANG_HOSTCG_DISABLED": "hcgw-nodep", "TILELANG_HOSTCG_CACHE": "0",
                "TILELANG_HOSTCG_AUTO_INSTALL": "0", "TILELANG_HOSTCG_TEST_ENVS": "/nowhere"}
    doc = site.cli("check", expect=0, **controls)
    found = {(p["code"], p["distribution"]): p for p in doc["problems"]}
    # Activation turned off by the user's own switch is a note (`client`), never a failure.
    assert {p["severity"] for p in doc["problems"] if p["code"] != "client"} == {"warning"}
    assert [p["severity"] for p in doc["problems"] if p["code"] == "client"] == ["info"]
    nodep = found[("declaration", "hcgw-nodep")]["message"]
    assert "declares no requirement on tilelang-hostcg" in nodep
    assert "[tilelang.host_codegens]" in found[("declaration", "hcgw-typo")]["message"]
    control = {p["message"].partition(" ")[0]: p["message"] for p in doc["problems"]
               if p["code"] == "control"}
    assert sorted(control) == ["'TILELANG_HOSTCG_CACHE'", "'TILELANG_HOSTCG_DISABLED'"]
    assert "is not a tilelang-hostcg control" in control["'TILELANG_HOSTCG_CACHE'"]
    assert "did you mean 'TILELANG_HOSTCG_DISABLE'?" in control["'TILELANG_HOSTCG_DISABLED'"]
    assert len(doc["problems"]) == 5, doc["problems"]  # AUTO_INSTALL: the client note; TEST_ENVS: nothing
    strict = site.cli("check", "--strict", expect=1, **controls)
    assert {p["code"] for p in strict["problems"]} == {"declaration", "control", "client"}


def test_unknown_variables_warn_with_the_nearest_name() -> None:
    with pytest.warns(PluginWarning) as caught:
        controls = Controls.from_environ({"TILELANG_HOSTCG_PREFERS": "llvm=x",
                                          "TILELANG_HOSTCG_TEST_ANYTHING": "1",
                                          "TILELANG_HOSTCG_AUTO_INSTALL": "0"})
    assert [p.variable for p in controls.problems] == ["TILELANG_HOSTCG_PREFERS"]
    assert "did you mean 'TILELANG_HOSTCG_PREFER'?" in controls.problems[0].message
    assert [str(w.message) for w in caught] == [controls.problems[0].message]


@pytest.mark.parametrize("value", ["tilelang-hostcg:llvm", "tilelang_hostcg", "Tilelang-HostCG:c"])
def test_disable_naming_the_core_takes_effect(site: Site, value: str) -> None:
    sources = site.probe(TILELANG_HOSTCG_DISABLE=value)["sources"]
    core = {kind: (state, reason) for dist, kind, state, reason in sources
            if dist == "tilelang-hostcg"}
    disabled = {k for k, (state, _) in core.items() if state == "disabled"}
    expected = {"llvm"} if value.endswith(":llvm") else {"c"} if value.endswith(":c") \
        else {"llvm", "c"}
    assert disabled == expected
    assert all("disabled by TILELANG_HOSTCG_DISABLE=" in core[k][1] for k in disabled)
    assert site.probe(TILELANG_HOSTCG_DISABLE=value)["warnings"] == []


def test_autoload_off_and_only_never_skip_the_core(site: Site) -> None:
    for extra in ({"TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD": "1"},
                  {"TILELANG_HOSTCG_ONLY": "nothing-installed"}):
        sources = site.probe(**extra)["sources"]
        assert {(k, s) for d, k, s, _ in sources if d == "tilelang-hostcg"} == {
            ("c", "lazy"), ("llvm", "lazy")}


def test_a_malformed_auto_install_fails_strict_shown_as_bytes(site: Site) -> None:
    value = os.fsdecode(b"o\xffn")  # not UTF-8, as a shell may pass it
    doc = site.cli("check", "--strict", expect=1, TILELANG_HOSTCG_AUTO_INSTALL=value)
    (problem,) = [p for p in doc["problems"] if p["code"] == "control"]
    assert problem["message"].startswith("TILELANG_HOSTCG_AUTO_INSTALL='o\\xffn' is not "
                                         "understood"), problem
    assert site.cli("check", "--strict", expect=0, TILELANG_HOSTCG_AUTO_INSTALL="off")


def test_first_use_writes_nothing_under_the_cache_folder(site: Site) -> None:
    site.dist_info("hcgw-plugin", "1.0", PLUGIN_EPS, ("tilelang-hostcg",))
    assert [s[2] for s in site.probe()["entry_points"]] == ["lazy"]  # probe() checks XDG
    assert site.run("list").returncode == 0 and site.run("check").returncode in (0, 1)
    assert not site.xdg.exists()


def test_control_problems_are_warned_at_the_users_line() -> None:
    with pytest.warns(PluginWarning) as caught:
        Controls.from_environ({"TILELANG_HOSTCG_CACHE": "1"})
    assert [Path(w.filename).name for w in caught] == [Path(__file__).name]

"""Discovery sees every metadata its answers depend on, and reports what cannot take effect.

Real metadata folders written into a folder put on ``sys.path`` (``PYTHONPATH``), and
fresh processes with their own cache folder: TileLang's develop install rewritten in
place, an ``entry_points.txt`` gaining our group in place while the cache is warm,
entry points in a near miss of our groups, a plugin without a requirement on the
core, unknown variables and values; and ``cache clear`` beside links and special files.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg import Controls, PluginWarning
from tilelang_hostcg.cli import main

from .plugin_factory import wait_out_racy_window

PROBE = """
import json, sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tilelang_hostcg
    from tilelang_hostcg import __version__
    from tilelang_hostcg.discovery import cache as _cache
    sources = [[s.origin.distribution, s.kind, s.state, s.reason]
               for s in tilelang_hostcg.default_registry().sources()]
from tilelang_hostcg.discovery.scan import scan_environment
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    index = _cache.load_index(__version__)
    same = index == scan_environment(__version__)
print(json.dumps({
    "entry_points": sorted([ep.distribution, ep.group, ep.name, ep.value, ep.incompatible]
                           for ep in index.entry_points if ep.distribution != "tilelang-hostcg"),
    "sources": sorted(sources, key=str), "same": same,
    "status": _cache.cache_info()["status"],
    "warnings": [str(w.message) for w in caught],
}))
"""


class Site:
    """A folder of hand-written metadata on ``PYTHONPATH``, with its own cache folder."""

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

    def settle(self) -> None:
        """Sleep until everything under the site is older than the racy window."""
        wait_out_racy_window([self.path, self.cwd, *self.path.rglob("*")])

    def probe(self, **extra: str) -> dict[str, Any]:
        proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                              env=self.env(**extra), cwd=self.cwd)
        assert proc.returncode == 0, proc.stderr
        result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
        assert result["same"], "the index differs from a fresh scan"
        return result

    def warm(self) -> dict[str, Any]:
        self.settle()
        self.probe()
        result = self.probe()
        assert result["status"] == "fresh", result
        return result

    def cli(self, *args: str, expect: int, **extra: str) -> dict[str, Any]:
        proc = subprocess.run([sys.executable, "-m", "tilelang_hostcg", *args, "--json"],
                              capture_output=True, text=True, env=self.env(**extra), cwd=self.cwd)
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


def test_tilelang_develop_install_rewritten_in_place_is_seen_while_warm(site: Site) -> None:
    tilelang = site.egg_info("tilelang", "0.1.15")
    site.dist_info("hcgw-plugin", "1.0", PLUGIN_EPS, ("tilelang-hostcg", "tilelang<0.1.16"))
    before = site.warm()
    assert [ep[4] for ep in before["entry_points"]] == [None]
    inode = (tilelang / "PKG-INFO").stat().st_ino
    folder_sig = (tilelang.stat().st_mtime_ns, site.path.stat().st_mtime_ns)
    site.egg_info("tilelang", "0.1.16")  # python setup.py develop, upgraded in place
    assert (tilelang / "PKG-INFO").stat().st_ino == inode
    assert (tilelang.stat().st_mtime_ns, site.path.stat().st_mtime_ns) == folder_sig
    after = site.probe()  # same == a fresh scan, asserted by probe()
    reason = after["entry_points"][0][4]
    assert reason is not None and "'tilelang<0.1.16'" in reason and "0.1.16" in reason
    assert ["hcgw-plugin", "hcgw_kind", "incompatible", reason] in after["sources"]


def test_entry_points_gaining_our_group_in_place_are_seen_while_warm(site: Site) -> None:
    egg = site.egg_info("hcgw-late", "1.0", "[console_scripts]\nhcgw = hcgw_late:main\n",
                        requires=("tilelang-hostcg",))
    before = site.warm()
    assert before["entry_points"] == []
    folder_sig = (egg.stat().st_mtime_ns, site.path.stat().st_mtime_ns)
    _rewrite(egg / "entry_points.txt", "[console_scripts]\nhcgw = hcgw_late:main\n\n"
             "[tilelang.host_codegen]\nhcgw_late = hcgw_late:CODEGEN\n")
    assert (egg.stat().st_mtime_ns, site.path.stat().st_mtime_ns) == folder_sig
    after = site.probe()
    assert after["entry_points"] == [["hcgw-late", "tilelang.host_codegen", "hcgw_late",
                                      "hcgw_late:CODEGEN", None]]


NEAR_MISSES = ("tilelang.host_codegens", "tilelang.hostcodegen", "tilelang.host_codegen_hook",
               "TileLang.host_codegen")


@pytest.fixture(scope="module")
def near_miss_sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Site]:
    """A site per near-miss group, each with a plugin declaring its entry point there,
    all written at once: one wait for the racy window serves every case."""
    sites = {}
    for group in NEAR_MISSES:
        site = Site(tmp_path_factory.mktemp("near-miss"))
        site.dist_info("hcgw-typo", "1.0", f"[{group}]\nllvm = hcgw_typo:CODEGEN\n",
                       ("tilelang-hostcg",))
        sites[group] = site
    return sites


@pytest.mark.parametrize("group", NEAR_MISSES)
def test_near_miss_group_warns_at_first_use_cold_and_warm(near_miss_sites: dict[str, Site],
                                                          group: str) -> None:
    site = near_miss_sites[group]
    cold = site.probe()  # no cache yet
    site.settle()
    site.probe()
    warm = site.probe()
    assert warm["status"] == "fresh"
    for result in (cold, warm):
        assert result["entry_points"] == []
        near = [w for w in result["warnings"] if f"[{group}]" in w]
        assert len(near) == 1, result["warnings"]
        assert "'hcgw-typo'" in near[0] and "did you mean [tilelang.host_codegen" in near[0]


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
    controls = {"TILELANG_HOSTCG_DISABLED": "hcgw-nodep", "TILELANG_HOSTCG_CACHE": "nope",
                "TILELANG_HOSTCG_AUTO_INSTALL": "0", "TILELANG_HOSTCG_TEST_ENVS": "/nowhere"}
    doc = site.cli("check", expect=0, **controls)
    found = {(p["code"], p["distribution"]): p for p in doc["problems"]}
    assert {p["severity"] for p in doc["problems"]} == {"warning"}
    nodep = found[("declaration", "hcgw-nodep")]["message"]
    assert "declares no requirement on tilelang-hostcg" in nodep
    assert "[tilelang.host_codegens]" in found[("declaration", "hcgw-typo")]["message"]
    control = {p["message"].partition(" ")[0]: p["message"] for p in doc["problems"]
               if p["code"] == "control"}
    assert sorted(control) == ["'TILELANG_HOSTCG_DISABLED'", "TILELANG_HOSTCG_CACHE='nope'"]
    assert "0 (or false, no, off)" in control["TILELANG_HOSTCG_CACHE='nope'"]
    assert "did you mean 'TILELANG_HOSTCG_DISABLE'?" in control["'TILELANG_HOSTCG_DISABLED'"]
    assert len(doc["problems"]) == 4, doc["problems"]  # AUTO_INSTALL, TEST_ENVS: nothing
    strict = site.cli("check", "--strict", expect=1, **controls)
    assert {p["code"] for p in strict["problems"]} == {"declaration", "control"}


def test_unknown_variables_warn_with_the_nearest_name() -> None:
    with pytest.warns(PluginWarning) as caught:
        controls = Controls.from_environ({"TILELANG_HOSTCG_PREFERS": "llvm=x",
                                          "TILELANG_HOSTCG_TEST_ANYTHING": "1",
                                          "TILELANG_HOSTCG_AUTO_INSTALL": "0",
                                          "TILELANG_HOSTCG_CACHE": "off"})
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


# ---------------------------------------------------------------------- cache clear
@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / "xdg").mkdir()
    return tmp_path / "xdg" / "tilelang-hostcg"


def test_clear_refuses_a_linked_cache_folder_with_exit_2(
        cache_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    victim = elsewhere / "index-0000000000000000.bin"
    victim.write_bytes(b"not ours to delete")
    cache_home.symlink_to(elsewhere)
    assert main(["cache", "clear"]) == 2
    err = capsys.readouterr().err
    assert "symbolic link" in err and "is not cleared" in err and "never follows it" in err
    assert victim.read_bytes() == b"not ours to delete" and cache_home.is_symlink()
    assert main(["cache", "clear", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]


def test_clear_removes_links_themselves_and_leaves_special_files(
        cache_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache_home.mkdir(mode=0o700)
    regular = cache_home / "index-0000000000000001.bin"
    regular.write_bytes(b"x")
    target = tmp_path / "target.bin"
    target.write_bytes(b"kept")
    link = cache_home / "index-0000000000000002.bin"
    link.symlink_to(target)
    fifo = cache_home / "index-0000000000000003.bin"
    os.mkfifo(fifo)
    device = cache_home / "index-0000000000000004.bin"
    os.mknod(device, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    other = cache_home / "notes.txt"
    other.write_text("not a cache file")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["cache", "clear", "--json"]) == 0
    removed = json.loads(capsys.readouterr().out)["removed"]
    assert sorted(removed) == [str(regular), str(link)]
    assert target.read_bytes() == b"kept" and not os.path.lexists(link)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and stat.S_ISCHR(os.lstat(device).st_mode)
    assert other.exists()
    texts = sorted(str(w.message) for w in caught)
    assert len(texts) == 2 and all("not a regular file; it is left in place" in t for t in texts)

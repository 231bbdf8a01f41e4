"""The discovery cache: never an answer different from a fresh scan.

Real ``pip install`` / ``uninstall`` / upgrade / reinstall of a plugin distribution
in a throwaway environment, each done right after a warm (cache-hit) run; broken
cache files; the off switch; and the imports of the warm path. Every process runs
from a folder holding no distribution metadata, so only the environment counts.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.discovery import cache as _cache
from tilelang_hostcg.discovery import cachefile as _cachefile
from tilelang_hostcg.discovery.scan import scan_environment
from tilelang_hostcg.testing import PluginEnvironment, write_distribution

from .conftest import Environments
from .plugin_factory import build_source_wheels, wait_out_racy_window

pytestmark = pytest.mark.slow

DIST = "hostcg-cache-probe"
CODEGEN_GROUP = "tilelang.host_codegen"
HEAVY = ("importlib.metadata", "importlib_metadata", "packaging")

# Prints one JSON document: what the cache gave, whether it was a hit (no metadata
# library imported), which modules load_index imported, the probe distribution's
# sources as the default registry sees them, and whether the index equals a scan.
PROBE = f"""
import sys
HEAVY = {HEAVY!r}
import tilelang_hostcg
from tilelang_hostcg import _registry
from tilelang_hostcg.discovery import cache as _cache
from tilelang_hostcg.discovery import cachefile as _cachefile
from tilelang_hostcg import __version__

before = set(sys.modules)
index = _cache.load_index(__version__)
added = sorted(set(sys.modules) - before)
sources = tilelang_hostcg.default_registry().sources()
heavy = sorted(m for m in HEAVY if m in sys.modules)
probe = sorted([s.group, s.kind, s.value, s.origin.version, s.state]
               for s in sources if s.origin.distribution == sys.argv[1])
from tilelang_hostcg.discovery.scan import scan_environment
same = index == scan_environment(__version__)
import json
print(json.dumps({{"heavy": heavy, "added": added, "probe": probe, "same": same,
                  "info": _cache.cache_info()}}))
"""


class CacheEnv:
    """A plugin environment with the probe distribution in a known state."""

    def __init__(self, root: Path, env: PluginEnvironment) -> None:
        self.env = env
        self.sources = root / "src"
        self.cwd = root / "cwd"
        self.cwd.mkdir()
        self.installed: tuple[str, tuple[tuple[str, str], ...], tuple[str, ...]] | None = None
        self.wheels: dict[tuple[str, tuple[tuple[str, str], ...], tuple[str, ...]], Path] = {}

    # -------------------------------------------------------------- processes
    def probe(self, extra: Mapping[str, str] | None = None) -> dict[str, Any]:
        proc = self.env.python_run(PROBE, DIST, env=extra, cwd=self.cwd)
        assert proc.returncode == 0, f"probe failed:\n{proc.stdout}\n{proc.stderr}"
        result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
        assert result["same"], "the index differs from a fresh scan"
        return result

    def warm(self) -> dict[str, Any]:
        """Wait until the environment is settled, fill the cache, then check a hit."""
        self.settle()
        self.probe()
        result = self.probe()
        assert result["info"]["status"] == "fresh", result["info"]
        assert result["heavy"] == [] and result["added"] == [], result
        return result

    def settle(self) -> None:
        """Sleep until every file the cache keys on is older than the racy window
        (modification and change times)."""
        paths: list[Path] = []
        for folder in (self.env.site_packages, self.cwd):
            paths.append(folder)
            for child in folder.iterdir():
                paths.append(child)
                if child.is_dir() and child.name.endswith(".dist-info"):
                    paths.extend(child.iterdir())
        wait_out_racy_window(paths)

    # -------------------------------------------------------------- the probe distribution
    def write(self, version: str, kinds: Mapping[str, str], requires: tuple[str, ...] = (),
              tag: str = "") -> Path:
        files = {f"hostcg_cache_probe{tag}/__init__.py": "CALLED = []\n"}
        return write_distribution(self.sources / f"{version}{tag}", DIST, version,
                                  entry_points={CODEGEN_GROUP: dict(kinds)}, files=files,
                                  requires=requires)

    def ensure(self, version: str | None, kinds: Mapping[str, str] | None = None,
               requires: tuple[str, ...] = ()) -> None:
        """Install this version of the probe distribution (``None``: uninstall it)."""
        wanted = None if version is None else (version, tuple(sorted((kinds or {}).items())),
                                               requires)
        if wanted == self.installed:
            return
        if version is None:
            self.env.uninstall(DIST)
        else:
            assert wanted is not None
            if wanted not in self.wheels:  # each state's wheel is built once
                (self.wheels[wanted],) = build_source_wheels(
                    self.sources / f"wheels-{len(self.wheels)}",
                    [self.write(version, kinds or {}, requires)])
            self.env.pip("install", "-q", "--force-reinstall", "--no-deps", "--no-index",
                         str(self.wheels[wanted]))
        self.installed = wanted


@pytest.fixture(scope="module")
def cenv(tmp_path_factory: pytest.TempPathFactory, environments: Environments) -> CacheEnv:
    return CacheEnv(tmp_path_factory.mktemp("hostcg-cache"), environments.new("cache"))


def _seen(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(kind, value, version) for _group, kind, value, version, _state in result["probe"]]


# ------------------------------------------------------------------ pip changes
def test_install_right_after_a_warm_run_is_seen(cenv: CacheEnv) -> None:
    cenv.ensure(None)
    assert cenv.warm()["probe"] == []
    cenv.ensure("1.0", {"cacheprobe": "hostcg_cache_probe"})
    result = cenv.probe()
    assert _seen(result) == [("cacheprobe", "hostcg_cache_probe", "1.0")]
    assert "importlib.metadata" in result["heavy"]  # a fresh scan, not the old index


def test_upgrade_right_after_a_warm_run_is_seen(cenv: CacheEnv) -> None:
    cenv.ensure("1.0", {"cacheprobe": "hostcg_cache_probe"})
    assert _seen(cenv.warm()) == [("cacheprobe", "hostcg_cache_probe", "1.0")]
    cenv.ensure("2.0", {"cacheprobe": "hostcg_cache_probe:CALLED", "cacheprobe2": "x.y"})
    assert _seen(cenv.probe()) == [("cacheprobe", "hostcg_cache_probe:CALLED", "2.0"),
                                   ("cacheprobe2", "x.y", "2.0")]


def test_reinstall_with_changed_entry_points_is_seen(cenv: CacheEnv) -> None:
    cenv.ensure("2.0", {"cacheprobe": "hostcg_cache_probe:CALLED", "cacheprobe2": "x.y"})
    assert len(cenv.warm()["probe"]) == 2
    # Same name and version, other entry points and a requirement nothing satisfies.
    cenv.ensure("2.0", {"cacheprobe3": "hostcg_cache_probe"}, ("tilelang-hostcg>=99",))
    result = cenv.probe()
    assert [(row[1], row[4]) for row in result["probe"]] == [("cacheprobe3", "incompatible")]


def test_uninstall_right_after_a_warm_run_is_seen(cenv: CacheEnv) -> None:
    cenv.ensure("1.0", {"cacheprobe": "hostcg_cache_probe"})
    assert len(cenv.warm()["probe"]) == 1
    cenv.ensure(None)
    assert cenv.probe()["probe"] == []


def test_refresh_in_a_running_process_sees_a_new_install(cenv: CacheEnv) -> None:
    cenv.ensure(None)
    cenv.warm()
    source = cenv.write("3.0", {"cacheprobe": "hostcg_cache_probe"})
    code = f"""
        import json, subprocess, sys
        import tilelang_hostcg

        def kinds():
            return sorted(s.kind for s in tilelang_hostcg.default_registry().sources()
                          if s.origin.distribution == {DIST!r})

        before = kinds()
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                        "--no-build-isolation", "--no-index", {str(source)!r}], check=True)
        tilelang_hostcg.refresh()
        print(json.dumps([before, kinds()]))
    """
    proc = cenv.env.python_run(code, cwd=cenv.cwd)
    cenv.installed = ("3.0", (("cacheprobe", "hostcg_cache_probe"),), ())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [[], ["cacheprobe"]]


# ------------------------------------------------------------------ broken cache files
def _flip_last_byte(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 0xFF])


_FOREIGN = """
import sys
from tilelang_hostcg.discovery import cache as _cache
from tilelang_hostcg.discovery import cachefile as _cachefile
from tilelang_hostcg import __version__
path = _cache.cache_file()
records, status = _cache._read(path, _cachefile.ident(__version__))
assert status == "ok", status
ident = list(_cachefile.ident(__version__))
ident[1] = "0.0.0-other"
with open(path, "wb") as fh:
    fh.write(_cachefile.dump(tuple(ident), records))
"""

BROKEN: dict[str, Any] = {
    "garbage": lambda data: b"not a cache file at all",
    "empty": lambda data: b"",
    "truncated": lambda data: data[: len(data) // 2],
    "bad checksum": _flip_last_byte,
    "other format": lambda data: data[:8] + (99).to_bytes(2, "little") + data[10:],
    "other version": None,  # rewritten by _FOREIGN in the environment
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_cache_file_is_ignored_and_rewritten(cenv: CacheEnv, case: str) -> None:
    cenv.ensure("1.0", {"cacheprobe": "hostcg_cache_probe"})
    expected = _seen(cenv.warm())
    path = Path(cenv.probe()["info"]["path"])
    if BROKEN[case] is None:
        proc = cenv.env.python_run(_FOREIGN, cwd=cenv.cwd)
        assert proc.returncode == 0, proc.stderr
    else:
        path.write_bytes(BROKEN[case](path.read_bytes()))
    result = cenv.probe()
    assert _seen(result) == expected
    assert "importlib.metadata" in result["heavy"]  # scanned, did not trust the file
    assert result["info"]["status"] == "fresh"  # and wrote a good one back


def test_cache_path_taken_by_a_folder_still_answers(cenv: CacheEnv) -> None:
    cenv.ensure("1.0", {"cacheprobe": "hostcg_cache_probe"})
    expected = _seen(cenv.warm())
    path = Path(cenv.probe()["info"]["path"])
    path.unlink()
    path.mkdir()
    try:
        for _ in range(2):
            result = cenv.probe()
            assert _seen(result) == expected
            assert result["info"]["status"] == "unreadable"
    finally:
        path.rmdir()


def test_unwritable_cache_folder_is_no_cache(cenv: CacheEnv, tmp_path: Path) -> None:
    cenv.ensure("1.0", {"cacheprobe": "hostcg_cache_probe"})
    blocker = tmp_path / "a-file"
    blocker.write_text("the cache folder cannot be made under a file\n")
    extra = {"XDG_CACHE_HOME": str(blocker)}
    for _ in range(2):
        result = cenv.probe(extra)
        assert _seen(result) == [("cacheprobe", "hostcg_cache_probe", "1.0")]
        assert "importlib.metadata" in result["heavy"]
        assert result["info"]["exists"] is False


# ------------------------------------------------------------------ the off switch
_LIE = """
from tilelang_hostcg.discovery import cache as _cache
from tilelang_hostcg.discovery import cachefile as _cachefile
from tilelang_hostcg.discovery import DiscoveryIndex
from tilelang_hostcg import __version__
path = _cache.cache_file()
ident = _cachefile.ident(__version__)
records, status = _cache._read(path, ident)
assert status == "ok", status
lie = [(*record[:3], _cachefile._encode_index(DiscoveryIndex())) for record in records]
with open(path, "wb") as fh:
    fh.write(_cachefile.dump(ident, lie))
"""


def test_cache_off_neither_reads_nor_writes(cenv: CacheEnv) -> None:
    cenv.ensure("1.0", {"cacheprobe": "hostcg_cache_probe"})
    off = {_cache.ENV_CACHE: "0"}
    folder = cenv.env.cache_home / "tilelang-hostcg"
    cenv.settle()
    for child in folder.glob("*") if folder.exists() else ():
        child.unlink()
    result = cenv.probe(off)
    assert result["info"]["status"] == "disabled"
    assert not folder.exists() or not any(folder.iterdir()), "wrote with the cache off"
    # A well-formed file that lies: read with the cache on, ignored with it off.
    cenv.warm()
    proc = cenv.env.python_run(_LIE, cwd=cenv.cwd)
    assert proc.returncode == 0, proc.stderr
    path = Path(result["info"]["path"])
    lie = path.read_bytes()
    truthful = cenv.probe(off)
    assert _seen(truthful) == [("cacheprobe", "hostcg_cache_probe", "1.0")]
    assert path.read_bytes() == lie, "rewrote the file with the cache off"
    proc = cenv.env.python_run(PROBE, DIST, cwd=cenv.cwd)
    assert json.loads(proc.stdout.strip().splitlines()[-1])["same"] is False  # the lie is read
    path.unlink()


# ------------------------------------------------------------------ layout of the folder
def test_one_file_per_environment_across_scripts_and_layouts(cenv: CacheEnv,
                                                             tmp_path: Path) -> None:
    cenv.ensure("1.0", {"cacheprobe": "hostcg_cache_probe"})
    cenv.warm()
    # Another working directory (another script folder): same record, still a hit.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = cenv.env.python_run(PROBE, DIST, cwd=elsewhere)
    moved = json.loads(proc.stdout.strip().splitlines()[-1])
    assert moved["heavy"] == [] and moved["info"]["records"] == 1
    # Another sys.path layout (an extra folder of metadata): a second record, same file.
    extra_site = tmp_path / "site"
    info = extra_site / "hostcg_cache_extra-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hostcg-cache-extra\n"
                                   "Version: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{CODEGEN_GROUP}]\nextrakind = extra_mod\n")
    # Change times cannot be set back (a copy made with cp -p is as new as any), so wait
    # until the new files are older than the racy window.
    time.sleep(_cache.RACY_WINDOW_NS / 1e9 + 0.1)
    layered = {"PYTHONPATH": str(extra_site)}
    cenv.probe(layered)
    result = cenv.probe(layered)
    assert result["heavy"] == [] and result["info"]["records"] == 2
    assert cenv.probe()["heavy"] == []  # the first layout's record is still there
    files = sorted(p.name for p in (cenv.env.cache_home / "tilelang-hostcg").iterdir())
    assert len(files) == 1 and files[0].startswith("index-"), files


# ------------------------------------------------------------------ in-process units
def test_fresh_signatures_are_not_written(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "demo-1.0.dist-info").mkdir(parents=True)
    snapshot = _cachefile.Snapshot([str(site)])
    index = scan_environment("0.1.0", snapshot.path)
    mtime = site.stat().st_mtime_ns
    assert _cachefile.record_of(snapshot, index, mtime + _cache.RACY_WINDOW_NS // 2) is None
    record = _cachefile.record_of(snapshot, index, mtime + 2 * _cache.RACY_WINDOW_NS)
    assert record is not None
    assert snapshot.match(record) == index
    (site / "other-1.0.dist-info").mkdir()  # a new sibling changes the folder's signature
    assert _cachefile.Snapshot([str(site)]).match(record) is None


def test_folders_without_metadata_match_by_listing(tmp_path: Path) -> None:
    quiet = tmp_path / "scripts"
    quiet.mkdir()
    site = tmp_path / "site"
    (site / "demo-1.0.dist-info").mkdir(parents=True)
    snapshot = _cachefile.Snapshot([str(quiet), str(site)])
    index = scan_environment("0.1.0", snapshot.path)
    record = _cachefile.record_of(snapshot, index, time.time_ns() + 10 * _cache.RACY_WINDOW_NS)
    assert record is not None and [m[0] for m in record[0]] == [str(site)]
    (quiet / "notes.txt").write_text("changes the folder, not the distributions\n")
    assert _cachefile.Snapshot([str(quiet), str(site)]).match(record) == index
    assert _cachefile.Snapshot([str(tmp_path / "other"), str(site)]).match(record) == index
    (quiet / "sneaky-1.0.dist-info").mkdir()
    assert _cachefile.Snapshot([str(quiet), str(site)]).match(record) is None


def test_clear_cache_and_info(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "tilelang-hostcg"
    info = _cache.cache_info()
    assert info["path"].startswith(str(folder)) and info["exists"] is False
    assert info["status"] in ("missing", "disabled")
    folder.mkdir()
    (folder / "index-0123456789abcdef.bin").write_bytes(b"junk")
    (folder / ".index-0123456789abcdef.bin.1.2.tmp").write_bytes(b"junk")
    (folder / "unrelated.txt").write_text("not ours\n")
    removed = _cache.clear_cache()
    assert sorted(Path(p).name for p in removed) == [".index-0123456789abcdef.bin.1.2.tmp",
                                                     "index-0123456789abcdef.bin"]
    assert [p.name for p in folder.iterdir()] == ["unrelated.txt"]
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # ignored, as XDG says
    assert _cache.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache",
                                              "tilelang-hostcg")

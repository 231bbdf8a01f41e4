"""Rules: the cache is a hint, never an authority; nothing it writes is half-written.

Fresh interpreters over a folder of real ``*.dist-info`` folders on ``PYTHONPATH``,
with their own cache folder: special files and links at the cache path, a folder
others can write, forged records, changes that keep modification times, a change
made during a scan, and a write that fails half-way.
"""

from __future__ import annotations

import json
import os
import resource
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.discovery import cache as _cache
from tilelang_hostcg.discovery import cachefile as _cachefile
from tilelang_hostcg.discovery.scan import scan_environment

from .plugin_factory import wait_out_racy_window
from .test_cache import _LIE  # a cache file whose records say nothing is installed

CODEGEN_GROUP = "tilelang.host_codegen"
MARKER = "HOSTCG_SAFETY_MARKER"

PLUGIN = """
import os
import tilelang_hostcg as hc
with open(os.environ["HOSTCG_SAFETY_MARKER"], "a") as fh:
    fh.write("import:" + __name__ + "\\n")
CG = hc.HostCodegen(__name__, lambda mod, target: mod)
"""

# Prints what the default registry sees, whether the cache was hit (no metadata
# library imported), the cache's own account, and whether the index equals a scan.
PROBE = """
import json, sys, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tilelang_hostcg as hc
    registry = hc.default_registry()
    registry.sources()
    hit = not any(m in sys.modules for m in ("importlib_metadata", "importlib.metadata"))
    if "--load" in sys.argv:
        registry.load_all()
    sources = sorted([s.kind, s.value, s.state, s.origin.version] for s in registry.sources()
                     if s.origin.distribution != "tilelang-hostcg")
    from tilelang_hostcg.discovery import cache as _cache
    from tilelang_hostcg.discovery import cachefile as _cachefile
    from tilelang_hostcg.discovery.scan import scan_environment
    from tilelang_hostcg import __version__
    same = _cache.load_index(__version__) == scan_environment(__version__)
    info = _cache.cache_info()
print(json.dumps({"sources": sources, "hit": hit, "same": same, "info": info,
                  "warnings": [str(w.message) for w in caught]}))
"""


class Site:
    """A folder of distributions on ``PYTHONPATH`` and a private cache folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.site = root / "site"
        self.site.mkdir()
        self.cwd = root / "cwd"
        self.cwd.mkdir()
        self.xdg = root / "xdg"
        self.marker = root / "markers.txt"

    def plugin(self, name: str, kinds: dict[str, str], version: str = "1.0",
               requires: tuple[str, ...] = ()) -> Path:
        module = name.replace("-", "_")
        (self.site / f"{module}.py").write_text(PLUGIN)
        info = self.site / f"{module}-{version}.dist-info"
        info.mkdir()
        lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}",
                 *(f"Requires-Dist: {r}" for r in requires)]
        (info / "METADATA").write_text("\n".join(lines) + "\n")
        eps = [f"[{CODEGEN_GROUP}]", *(f"{k} = {v}" for k, v in kinds.items())]
        (info / "entry_points.txt").write_text("\n".join(eps) + "\n")
        return info

    def environ(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
        env.update(PYTHONPATH=str(self.site), XDG_CACHE_HOME=str(self.xdg),
                   PYTHONDONTWRITEBYTECODE="1")
        env[MARKER] = str(self.marker)
        return env

    def run(self, *argv: str, code: str = PROBE, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                              env=self.environ(), cwd=self.cwd, timeout=60, **kwargs)

    def probe(self, *argv: str, **kwargs: Any) -> dict[str, Any]:
        proc = self.run(*argv, **kwargs)
        assert proc.returncode == 0, proc.stderr
        result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
        assert result["same"], "the index differs from a fresh scan"
        return result

    def command(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tilelang_hostcg", *argv],
                              capture_output=True, text=True, env=self.environ(), cwd=self.cwd,
                              timeout=60)

    def settle(self) -> None:
        """Wait until everything written is older than the cache's racy window."""
        wait_out_racy_window([self.site, self.cwd, *self.site.rglob("*")])

    def warm(self) -> dict[str, Any]:
        self.settle()
        self.probe()
        result = self.probe()
        assert result["hit"] and result["info"]["status"] == "fresh", result
        return result

    def cache_path(self) -> Path:
        return Path(self.probe()["info"]["path"])

    def markers(self) -> list[str]:
        return self.marker.read_text().split() if self.marker.exists() else []


class Sites:
    """Hands each test a site of its own, written two tests ahead of its use: by then it
    is mostly older than the cache's racy window, so that ``warm()`` waits less for it."""

    AHEAD = 2

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made = 0
        self.ready: list[Site] = []

    def _make(self) -> Site:
        folder = self.root / f"site-{self.made}"
        self.made += 1
        folder.mkdir()
        s = Site(folder)
        s.plugin("safe-plugin", {"safekind": "safe_plugin:CG"})
        (s.site / "evil_module.py").write_text(PLUGIN)  # advertised by no distribution
        return s

    def take(self) -> Site:
        while len(self.ready) <= self.AHEAD:
            self.ready.append(self._make())
        return self.ready.pop(0)


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Sites:
    return Sites(tmp_path_factory.mktemp("cache-safety"))


@pytest.fixture
def site(sites: Sites) -> Site:
    """A folder with one plugin distribution and a module no distribution advertises."""
    return sites.take()


# ------------------------------------------------------------------ special files
def test_a_fifo_at_the_cache_path_blocks_nobody(site: Site) -> None:
    path = site.cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    os.mkfifo(path)
    result = site.probe()  # a timeout here is the bug
    assert result["sources"] == [["safekind", "safe_plugin:CG", "lazy", "1.0"]]
    assert result["info"]["status"] == "unreadable" and not result["hit"]
    proc = site.command("cache", "info", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["cache"]["status"] == "unreadable"
    assert stat.S_ISFIFO(os.lstat(path).st_mode)


def test_a_link_at_the_cache_path_is_not_followed(site: Site) -> None:
    site.warm()
    path = site.cache_path()
    elsewhere = site.root / "elsewhere.bin"
    path.rename(elsewhere)
    path.symlink_to(elsewhere)
    kept = elsewhere.read_bytes()
    proc = site.command("cache", "info", "--json")
    assert json.loads(proc.stdout)["cache"]["status"] == "unreadable"
    result = site.probe()
    assert not result["hit"], result  # a scan, then a regular file in place of the link
    assert not path.is_symlink() and result["info"]["status"] == "fresh"
    assert elsewhere.read_bytes() == kept


# ------------------------------------------------------------------ the folder


def test_a_folder_others_can_write_is_not_used(site: Site) -> None:
    site.warm()
    path = site.cache_path()
    folder = path.parent
    folder.chmod(0o777)
    # A well-formed record that lies (no plugin at all): never read from there.
    proc = site.run(code=_LIE)
    assert proc.returncode == 0, proc.stderr
    before = path.read_bytes()
    result = site.probe()
    assert result["sources"] == [["safekind", "safe_plugin:CG", "lazy", "1.0"]]
    assert not result["hit"] and result["info"]["status"] == "untrusted"
    assert "mode 777" in result["info"]["untrusted"]
    warned = [w for w in result["warnings"] if "cache folder" in w]
    assert len(warned) == 1 and "chmod 700" in warned[0] and str(folder) in warned[0], warned
    assert path.read_bytes() == before, "wrote into a folder others can write"
    folder.chmod(0o700)  # private again (and the lie removed): used again
    path.unlink()
    site.probe()
    result = site.probe()
    assert result["hit"] and result["info"]["status"] == "fresh"


def test_a_folder_of_another_user_is_not_used(site: Site) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can give a folder to another user")
    site.warm()
    folder = site.cache_path().parent
    os.chown(folder, 65534, 65534)
    result = site.probe()
    assert not result["hit"] and result["info"]["status"] == "untrusted"
    assert "owned by user id 65534" in result["info"]["untrusted"]


# ------------------------------------------------------------------ forged records
_FORGE = """
import sys
from tilelang_hostcg.discovery import cache as _cache
from tilelang_hostcg.discovery import cachefile as _cachefile
from tilelang_hostcg.discovery import AdvertisedEntryPoint, DiscoveryIndex
from tilelang_hostcg import __version__
path = _cache.cache_file()
ident = _cachefile.ident(__version__)
records, status = _cache._read(path, ident)
assert status == "ok", status
how = sys.argv[1]
forged = []
for meta, quiet, files, payload in records:
    index = _cachefile._decode_index(payload)
    real = [ep for ep in index.entry_points if ep.distribution == "safe-plugin"][0]
    if how == "added-kind":
        eps = (*index.entry_points, AdvertisedEntryPoint(
            real.group, "evilkind", "evil_module:CG", real.distribution, real.version,
            location=real.location))
    elif how == "changed-value":
        eps = tuple(AdvertisedEntryPoint(ep.group, ep.name, "evil_module:CG", ep.distribution,
                                         ep.version, location=ep.location)
                    if ep is real else ep for ep in index.entry_points)
    elif how == "made-up-folder":
        eps = (*index.entry_points, AdvertisedEntryPoint(
            real.group, "evilkind", "evil_module:CG", "evil", "1.0",
            location=real.location.replace("safe_plugin-1.0", "evil-1.0")))
    else:  # another distribution's name on the real folder (to dodge the controls)
        eps = tuple(AdvertisedEntryPoint(ep.group, ep.name, ep.value, "tilelang-hostcg",
                                         ep.version, location=ep.location)
                    if ep is real else ep for ep in index.entry_points)
    forged.append((meta, quiet, files, _cachefile._encode_index(DiscoveryIndex(
        eps, index.duplicates, index.installed, index.problems, index.watched))))
with open(path, "wb") as fh:
    fh.write(_cachefile.dump(ident, forged))
"""


@pytest.mark.parametrize("how", ["added-kind", "changed-value", "made-up-folder",
                                 "renamed-distribution"])
def test_a_forged_record_never_imports_an_unadvertised_module(site: Site, how: str) -> None:
    site.warm()
    proc = site.run(how, code=_FORGE)
    assert proc.returncode == 0, proc.stderr
    result = site.probe("--load")
    assert result["sources"] == [["safekind", "safe_plugin:CG", "loaded", "1.0"]], result
    assert not result["hit"]  # the record did not hold: a scan
    assert "import:evil_module" not in site.markers()
    assert "import:safe_plugin" in site.markers()


# ------------------------------------------------------------------ changes the stat misses
def test_a_rewrite_keeping_size_and_modification_time_is_seen(site: Site) -> None:
    """``cp -p`` of a same-sized file over a plugin's entry points."""
    site.warm()
    path = site.site / "safe_plugin-1.0.dist-info" / "entry_points.txt"
    before = path.stat()
    text = path.read_text()
    source = site.root / "copy.txt"
    source.write_text(text.replace("safekind", "safekine"))
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    subprocess.run(["cp", "-p", str(source), str(path)], check=True)
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    result = site.probe()
    assert result["sources"] == [["safekine", "safe_plugin:CG", "lazy", "1.0"]]


def test_an_in_place_rewrite_of_the_tvm_metadata_is_seen(site: Site) -> None:
    """The verdicts depend on the installed apache-tvm: its METADATA is keyed too."""
    site.plugin("needs-tvm", {"tvmkind": "needs_tvm:CG"}, requires=("apache-tvm>=0.27",))
    tvm = site.site / "apache_tvm-0.27.0.dist-info"  # shadows the installed one
    tvm.mkdir()
    meta = tvm / "METADATA"
    meta.write_text("Metadata-Version: 2.1\nName: apache-tvm\nVersion: 0.27.0\n")
    states = {row[0]: row[2] for row in site.warm()["sources"]}
    assert states["tvmkind"] == "lazy"
    before = meta.stat()
    with open(meta, "r+") as fh:  # same inode, same size, time put back
        fh.write("Metadata-Version: 2.1\nName: apache-tvm\nVersion: 0.26.0\n")
    os.utime(meta, ns=(before.st_atime_ns, before.st_mtime_ns))
    states = {row[0]: row[2] for row in site.probe()["sources"]}
    assert states["tvmkind"] == "incompatible"


def test_a_change_during_a_scan_is_never_recorded(tmp_path: Path) -> None:
    """A ``cp -p`` that lands while the scan runs sets an old modification time but a
    new change time: a record of that scan is never written, or never matches."""
    site = tmp_path / "site"
    info = site / "during-1.0.dist-info"
    info.mkdir(parents=True)
    meta = info / "METADATA"
    meta.write_text("Metadata-Version: 2.1\nName: during\nVersion: 1.0\n")
    eps = info / "entry_points.txt"
    eps.write_text(f"[{CODEGEN_GROUP}]\nduring = during_a\n")
    old = time.time_ns() - 3600 * 10**9
    for path in (eps, meta, info, site):
        os.utime(path, ns=(old, old))
    time.sleep(_cache.RACY_WINDOW_NS / 1e9 + 0.1)  # change times too are now old

    def scan_then(change: Callable[[], None]) -> bool:
        started = time.time_ns()
        snapshot = _cachefile.Snapshot([str(site)])
        index = scan_environment("0.1.0", snapshot.path)
        change()
        record = _cachefile.record_of(snapshot, index, started)
        fresh = scan_environment("0.1.0", snapshot.path)
        later = None if record is None else _cachefile.Snapshot([str(site)]).match(record)
        assert later is None or later == fresh, "a record answering as the old scan"
        return record is not None

    def new_version() -> None:  # same size, time put back
        meta.write_text("Metadata-Version: 2.1\nName: during\nVersion: 2.0\n")
        os.utime(meta, ns=(old, old))

    def new_entry_points() -> None:
        eps.write_text(f"[{CODEGEN_GROUP}]\nduring = during_b\n")
        os.utime(eps, ns=(old, old))

    assert not scan_then(new_version)
    scan_then(new_entry_points)
    time.sleep(_cache.RACY_WINDOW_NS / 1e9 + 0.1)
    assert scan_then(lambda: None)  # with nothing changed, the scan is recorded


# ------------------------------------------------------------------ failed writes
def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))


def test_a_failed_write_leaves_the_old_file_and_says_so(site: Site) -> None:
    site.warm()
    path = site.cache_path()
    old = path.read_bytes()
    site.plugin("many-plugin", {f"many_{i}": "many_plugin:CG" for i in range(100)})
    site.settle()
    proc = site.run(preexec_fn=_limit_file_size)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(result["sources"]) == 101  # the answer is a fresh scan
    warned = [w for w in result["warnings"] if "could not be written" in w]
    assert len(warned) == 1 and str(path) in warned[0] and "unchanged" in warned[0], result
    assert path.read_bytes() == old
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    result = site.probe()  # without the limit: written
    assert len(result["sources"]) == 101 and path.read_bytes() != old


def test_cache_is_keyed_on_the_modules_that_compute_verdicts() -> None:
    # The requirement verdicts stored in the index come from _requirements: a change to
    # it (an upgrade of this package in place) must invalidate the index like _scan.
    names = sorted(os.path.basename(f) for f in _cachefile._code_files())
    assert names == ["cache.py", "cachefile.py", "controls.py", "planning.py", "records.py",
                     "requirements.py", "scan.py"]
    assert all(os.path.isfile(f) for f in _cachefile._code_files())

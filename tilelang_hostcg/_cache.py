"""The discovery index between processes: one small, self-checking file per environment.

A warm :func:`load_index` stats each ``sys.path`` entry once, reads one file and
rebuilds the index: its cost depends on the length of ``sys.path`` and on the number
of plugin distributions, never on the number of installed distributions, and it
imports neither ``importlib.metadata`` nor ``packaging``. When anything the index
depends on may have changed, it scans (:func:`~._scan.scan_environment`) and
rewrites the file.

What the index depends on, and so what the file is keyed on:

- the interpreter (``sys.executable``, ``sys.prefix``, ``sys.version``, the
  implementation), our own version, the cache format and the shape of the records;
- every ``sys.path`` entry that holds distribution metadata (a child named
  ``*.dist-info`` or ``*.egg-info``), in order, with its ``os.stat`` signature:
  modification and change times in nanoseconds, inode, device, size and mode.
  Installing, upgrading, reinstalling or removing a distribution creates or removes
  a metadata folder in its ``sys.path`` entry, which changes that entry's signature;
- entries that held no metadata are remembered with their signature and need no
  exact match: one whose signature changed is listed again (script folders and the
  working directory change all the time, and their contents do not matter as long
  as they hold no metadata);
- the metadata files of the few distributions that advertise our groups (constant
  in the number of installed distributions), which catches metadata rewritten in
  place, and the source files of the discovery code itself.

A change made in the same clock tick as the stat would leave the signature unchanged
("racily clean", as git calls it), so a scan whose keyed signatures are less than
:data:`RACY_WINDOW_NS` old is not written: the next process scans again.

The file lives under ``$XDG_CACHE_HOME/tilelang-hostcg/`` (default
``~/.cache/tilelang-hostcg/``), one per interpreter (a hash of ``sys.executable`` and
``sys.prefix``), holding the records of up to :data:`MAX_RECORDS` ``sys.path`` layouts.
It is written to a temporary file and renamed into place. It is never trusted
blindly: a bad magic, length or checksum, another format, version or interpreter,
or a record that does not match is ignored and the file rewritten; any ``OSError``
means "no cache". ``TILELANG_HOSTCG_CACHE=0`` turns off both reading and writing.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
import sys
import time
import warnings

from ._discovery import (
    AdvertisedEntryPoint,
    DiscoveryIndex,
    normalize_name,
    parse_entry_points,
    read_entry_points_text,
)
from ._errors import PluginWarning
from ._fileio import read_regular_file, write_atomic

TYPE_CHECKING = False  # typing costs import time on the warm path; checkers read True
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, TypeAlias

    Sig: TypeAlias = tuple[int, int, int, int, int, int]
    # A record: (metadata entries, quiet entries, files, index payload), all marshal-able.
    #   metadata entries: ((entry, absolute path, sig), ...) in sys.path order
    #   quiet entries:    {absolute path: sig or None} for entries proven to hold no metadata
    #   files:            ((absolute path, sig or None), ...)
    Record: TypeAlias = tuple[tuple[tuple[str, str, Sig], ...], dict[str, Sig | None],
                              tuple[tuple[str, Sig | None], ...], tuple[Any, ...]]

__all__ = [
    "ENV_CACHE",
    "MAX_RECORDS",
    "RACY_WINDOW_NS",
    "cache_dir",
    "cache_enabled",
    "cache_file",
    "cache_info",
    "clear_cache",
    "load_index",
]

ENV_CACHE = "TILELANG_HOSTCG_CACHE"
"""Set to ``0`` (or ``false``, ``no``, ``off``) to neither read nor write the cache."""

FORMAT = 2
"""Bump when the layout of the file or of its records changes."""

MAGIC = b"TLHCGIDX"
RACY_WINDOW_NS = 2_000_000_000
"""Signatures younger than this at scan time are not trusted (coarse file-system clocks)."""

MAX_RECORDS = 8
"""``sys.path`` layouts remembered per interpreter (e.g. with and without a source tree)."""

STALE_FILE_AGE_S = 30 * 24 * 3600
"""Other interpreters' files untouched for this long are removed when a file is written."""

FILE_LIMIT = 64 * 1024 * 1024
"""A cache file larger than this is not read."""

_PRIME = (1 << 61) - 1  # checksum modulus (a Mersenne prime): no hashing module to import
_HEADER = len(MAGIC) + 2 + 8 + 8
_METADATA_SUFFIXES = (".dist-info", ".egg-info")
# entry_points.txt is not stat'ed: its entry points of our groups are read again and
# compared on every use of a record (_revalidate), which a stat could only approximate.
_DIST_FILES = ("METADATA", "PKG-INFO", "requires.txt")
_SCHEMA = (AdvertisedEntryPoint.__slots__, DiscoveryIndex.__slots__)
# Finders whose distributions come from sys.path entries; any other finder providing
# find_distributions() could report distributions the key cannot see, so it turns
# the cache off for that process.
_PATH_FINDERS = frozenset({
    ("_frozen_importlib_external", "PathFinder"),
    ("importlib._bootstrap_external", "PathFinder"),
    ("importlib.machinery", "PathFinder"),
    ("importlib_metadata", "MetadataPathFinder"),
    ("importlib.metadata", "MetadataPathFinder"),
})


# ----------------------------------------------------------------------- locations
def cache_enabled() -> bool:
    """Whether the cache may be read and written (``TILELANG_HOSTCG_CACHE`` is not ``0``)."""
    return os.environ.get(ENV_CACHE, "").strip().lower() not in {"0", "false", "no", "off"}


def cache_dir() -> str | None:
    """The cache folder: ``$XDG_CACHE_HOME/tilelang-hostcg`` (a relative value is ignored,
    as the XDG specification says), else ``~/.cache/tilelang-hostcg``; ``None`` when no
    home folder is known."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "tilelang-hostcg")


def cache_file() -> str | None:
    """This interpreter's cache file (whether it exists or not); ``None`` without a folder."""
    folder = cache_dir()
    if folder is None:
        return None
    text = f"{sys.executable}\0{sys.prefix}".encode("utf-8", "surrogateescape")
    return os.path.join(folder, f"index-{_checksum(text):016x}.bin")


def _checksum(data: bytes) -> int:
    """The bytes read as one little-endian number, modulo a 61-bit prime."""
    return int.from_bytes(data, "little") % _PRIME


# ----------------------------------------------------------------------- signatures
def _sig(path: str) -> Sig | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_size, st.st_mode)


def _racy(sig: Sig | None, started_ns: int) -> bool:
    # The change time too: ``cp -p`` and ``rsync -a`` set a modification time in the
    # past, but nobody can set the change time, so a change made during a scan is
    # always younger than the scan.
    return sig is not None and max(sig[0], sig[1]) > started_ns - RACY_WINDOW_NS


def _ident(core_version: str) -> tuple[Any, ...]:
    impl = sys.implementation
    return (FORMAT, core_version, sys.executable, sys.prefix, sys.version, impl.name,
            impl.cache_tag, sys.platform, _SCHEMA)


def _code_files() -> list[str]:
    """The modules that compute the index, requirement verdicts included (``_scan`` and
    ``_requirements`` by their paths: they are not imported)."""
    from . import _discovery

    scan = os.path.join(os.path.dirname(__file__), "_scan.py")
    requirements = os.path.join(os.path.dirname(__file__), "_requirements.py")
    return [os.path.abspath(f) for f in (_discovery.__file__, scan, requirements, __file__) if f]


def _foreign_finder() -> str | None:
    """A ``sys.meta_path`` finder that reports distributions from outside ``sys.path``."""
    for finder in sys.meta_path:
        if getattr(finder, "find_distributions", None) is None:
            continue
        cls = finder if isinstance(finder, type) else type(finder)
        if (cls.__module__, cls.__qualname__) not in _PATH_FINDERS:
            return f"{cls.__module__}.{cls.__qualname__}"
    return None


class _Snapshot:
    """The state of ``sys.path`` at one moment: each entry with its stat signature."""

    __slots__ = ("entries", "path", "quiet_cache")

    def __init__(self, path: Sequence[str]) -> None:
        self.path = list(path)
        entries = []
        for entry in self.path:
            absolute = entry if os.path.isabs(entry) else os.path.abspath(entry)
            entries.append((entry, absolute, _sig(absolute)))
        self.entries: list[tuple[str, str, Sig | None]] = entries
        self.quiet_cache: dict[str, bool] = {}

    def quiet(self, absolute: str, sig: Sig | None) -> bool:
        """Whether the entry provably holds no distribution metadata (listed once)."""
        known = self.quiet_cache.get(absolute)
        if known is None:
            known = self.quiet_cache[absolute] = _holds_no_metadata(absolute, sig)
        return known

    def match(self, record: Record) -> DiscoveryIndex | None:
        """The record's index when it describes this state exactly, else ``None``."""
        meta, quiet, files, payload = record
        remaining = [item for item in self.entries
                     if item[1] not in quiet or quiet[item[1]] != item[2]]
        if tuple(remaining) != meta:
            known = set(meta)
            remaining = [item for item in remaining
                         if item in known or not self.quiet(item[1], item[2])]
            if tuple(remaining) != meta:
                return None
        for path, sig in files:
            if _sig(path) != sig:
                return None
        index = _decode_index(payload)
        if not _revalidate(index, {item[1] for item in meta}):
            return None
        return index

    def record(self, index: DiscoveryIndex, started_ns: int) -> Record | None:
        """A record of this state and its scan, or ``None`` when a signature is too fresh
        to be trusted (or the scan found a distribution in a folder listed as empty)."""
        homes = {os.path.dirname(os.path.abspath(loc)) for loc in _locations(index)}
        homes.update(os.path.abspath(loc) for loc in _locations(index))  # *.egg entries
        meta: list[tuple[str, str, Sig]] = []
        quiet: dict[str, Sig | None] = {}
        for entry, absolute, sig in self.entries:
            if absolute not in homes and self.quiet(absolute, sig):
                if not _racy(sig, started_ns):
                    quiet[absolute] = sig
                continue
            if sig is None or _racy(sig, started_ns):
                return None
            meta.append((entry, absolute, sig))
        files = []
        for loc in sorted(_locations(index)):
            base = os.path.abspath(loc)
            files.append((base, _sig(base)))
            files.extend((os.path.join(base, n), _sig(os.path.join(base, n)))
                         for n in _DIST_FILES)
        files.extend((f, _sig(f)) for f in _code_files())
        if any(_racy(sig, started_ns) for _, sig in files):
            return None
        return (tuple(meta), quiet, tuple(files), _encode_index(index))


def _holds_no_metadata(absolute: str, sig: Sig | None) -> bool:
    if sig is None:
        return True  # a missing entry contributes nothing
    if not stat.S_ISDIR(sig[5]) or absolute.lower().endswith(".egg"):
        return False  # zip files and eggs: keyed exactly
    try:
        with os.scandir(absolute) as children:
            for child in children:
                if child.name.lower().endswith(_METADATA_SUFFIXES):
                    return False
    except OSError:
        return False
    return True


def _locations(index: DiscoveryIndex) -> set[str]:
    found = {ep.location for ep in index.entry_points if ep.location}
    for _name, locations in index.duplicates:
        found.update(loc for loc in locations if loc)
    found.update(loc for loc in index.watched if loc)
    return found


def _revalidate(index: DiscoveryIndex, meta_entries: set[str]) -> bool:
    """Whether every entry point of ``index`` is advertised, right now, by the metadata
    folder it names: a folder directly inside a ``sys.path`` entry of the record, whose
    name is the distribution's, and whose ``entry_points.txt`` lists exactly these
    entry points of our groups, in this order. A record that says anything else (a
    forged or stale file) is a miss, so the cache can never make a process import a
    module that no installed distribution advertises."""
    by_location: dict[str, list[tuple[str, str, str]]] = {}
    names: dict[str, str] = {}
    for ep in index.entry_points:
        by_location.setdefault(ep.location, []).append((ep.group, ep.name, ep.value))
        names.setdefault(ep.location, ep.distribution)
    for location, eps in by_location.items():
        absolute = os.path.abspath(location)
        base = os.path.basename(absolute)
        stem, ext = os.path.splitext(base)
        if os.path.dirname(absolute) not in meta_entries and absolute not in meta_entries:
            return False
        if ext in (".dist-info", ".egg-info") and normalize_name(stem.partition("-")[0]) != \
                normalize_name(names[location]):
            return False
        text = read_entry_points_text(location)
        if text is None or parse_entry_points(text, location) != eps:
            return False
    return True


def _encode_index(index: DiscoveryIndex) -> tuple[Any, ...]:
    eps = tuple(tuple(getattr(ep, name) for name in _SCHEMA[0]) for ep in index.entry_points)
    return (eps, index.duplicates, index.installed, index.problems, index.watched)


def _decode_index(payload: tuple[Any, ...]) -> DiscoveryIndex:
    """The index of a record; ``TypeError`` when a field has the wrong type."""
    eps, duplicates, installed, problems, watched = payload
    entries = []
    for fields in eps:
        group, name, value, dist, version, requires, incompatible, location = fields
        if type(requires) is not tuple or {type(group), type(name), type(value), type(dist),
                                           type(version), type(location),
                                           *map(type, requires)} != {str} or (
                incompatible is not None and type(incompatible) is not str):
            raise TypeError("malformed entry point record")
        entries.append(AdvertisedEntryPoint(*fields))
    if {str, *map(type, problems), *map(type, watched)} != {str}:
        raise TypeError("malformed record")
    return DiscoveryIndex(tuple(entries), tuple(duplicates), tuple(installed), tuple(problems),
                          tuple(watched))


# ----------------------------------------------------------------------- file format
def _dump(ident: tuple[Any, ...], records: list[Record]) -> bytes:
    payload = marshal.dumps((ident, records))
    return (MAGIC + FORMAT.to_bytes(2, "little") + len(payload).to_bytes(8, "little")
            + _checksum(payload).to_bytes(8, "little") + payload)


def _read(path: str, ident: tuple[Any, ...]) -> tuple[list[Record], str]:
    """The records of the file at ``path`` and a status: ``ok``, ``missing``,
    ``unreadable``, ``corrupt`` or ``foreign``."""
    try:
        # Never through a link, never blocking (a FIFO at the path), regular files only.
        data = read_regular_file(path, limit=FILE_LIMIT, follow_links=False)
    except FileNotFoundError:
        return [], "missing"
    except OSError:
        return [], "unreadable"
    if len(data) < _HEADER or not data.startswith(MAGIC):
        return [], "corrupt"
    start = len(MAGIC)
    if int.from_bytes(data[start:start + 2], "little") != FORMAT:
        return [], "foreign"
    length = int.from_bytes(data[start + 2:start + 10], "little")
    payload = data[_HEADER:]
    if length != len(payload) or _checksum(payload) != int.from_bytes(
            data[start + 10:_HEADER], "little"):
        return [], "corrupt"
    try:
        stored_ident, records = marshal.loads(payload)
    except Exception:  # marshal raises several types on bad input
        return [], "corrupt"
    if stored_ident != ident:
        return [], "foreign"
    if not isinstance(records, list):
        return [], "corrupt"
    return records, "ok"


def _write(path: str, ident: tuple[Any, ...], record: Record, old: list[Record]) -> bool:
    """Write ``record`` first, then the old records of other ``sys.path`` layouts;
    atomically. Returns whether the file was written."""
    layout = tuple(item[:2] for item in record[0])
    records = [record]
    for other in old:
        try:
            if tuple(item[:2] for item in other[0]) != layout:
                records.append(other)
        except (TypeError, IndexError):
            continue
    data = _dump(ident, records[:MAX_RECORDS])
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError as exc:
        _warn_once("write", f"the discovery cache folder {folder!r} cannot be created "
                   f"({exc.strerror or exc}); every process scans the installed distributions. "
                   f"Make it creatable, set XDG_CACHE_HOME, or set {ENV_CACHE}=0")
        return False
    problem = _untrusted(folder)
    if problem is not None:
        _warn_untrusted(folder, problem)
        return False
    try:
        # The file is fsynced before its rename (never half-written); the folder is not:
        # a rename lost in a crash leaves the old file (checked like any other) or none,
        # and the next process scans. That saves 3-10 ms of a cold first use.
        write_atomic(path, data, mode=0o600, sync_folder=False)
    except OSError as exc:
        _warn_once("write", f"the discovery cache file {path!r} could not be written "
                   f"({exc.strerror or exc}); the old file, if any, is unchanged, and this "
                   f"process used a fresh scan. Free some space or fix the folder's permissions, "
                   f"or set {ENV_CACHE}=0")
        return False
    _prune(folder, keep=path)
    return True


_WARNED: set[str] = set()


def _warn_once(topic: str, message: str) -> None:
    if topic not in _WARNED:
        _WARNED.add(topic)
        warnings.warn(message, PluginWarning, stacklevel=4)


def _untrusted(folder: str) -> str | None:
    """Why the cache folder must not be used, or ``None`` when only this user can write
    it: a folder owned by this user, not writable by group or others (as pip and ssh
    check their folders)."""
    try:
        info = os.stat(folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"it cannot be examined ({exc.strerror or exc})"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    if uid is not None and info.st_uid != uid:
        return f"it is owned by user id {info.st_uid}, not by this user ({uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"group or others can write it (mode {stat.S_IMODE(info.st_mode):03o})"
    return None


def _warn_untrusted(folder: str, problem: str) -> None:
    _warn_once("untrusted", f"the discovery cache folder {folder!r} is not used: {problem}. "
               f"Make it private to you (chown to yourself, chmod 700), remove it, or set "
               f"{ENV_CACHE}=0; meanwhile every process scans the installed distributions")


def _prune(folder: str, keep: str) -> None:
    """Remove other interpreters' files unused for a month and temp files left a day."""
    now = time.time()
    try:
        with os.scandir(folder) as children:
            for child in children:
                name = child.name
                if child.path == keep or not _is_ours(name):
                    continue
                limit = 24 * 3600 if name.endswith(".tmp") else STALE_FILE_AGE_S
                try:
                    if now - child.stat().st_mtime > limit:
                        os.unlink(child.path)
                except OSError:
                    continue
    except OSError:
        return


def _is_ours(name: str) -> bool:
    return (name.startswith("index-") and name.endswith(".bin")) or (
        name.startswith(".index-") and name.endswith(".tmp"))


# ----------------------------------------------------------------------- public
def load_index(core_version: str) -> DiscoveryIndex:
    """The entry-point index of the running environment: from the cache when it matches
    the environment exactly, else from a fresh scan (then written to the cache).

    The result always equals ``scan_environment(core_version)``, and the warnings
    about distributions whose metadata cannot be used are given either way. The cache
    is used only from a folder that only this user can write (else one warning and
    a scan); a write that fails leaves the old file and warns once.
    """
    path = cache_file() if cache_enabled() else None
    if path is None or _foreign_finder() is not None:
        return _given(scan_environment(core_version, warn=False))
    problem = _untrusted(os.path.dirname(path))
    if problem is not None:
        _warn_untrusted(os.path.dirname(path), problem)
        return _given(scan_environment(core_version, warn=False))
    started = time.time_ns()
    snapshot = _Snapshot(sys.path)
    if not all(isinstance(entry, str) for entry in snapshot.path):
        return _given(scan_environment(core_version, warn=False))
    ident = _ident(core_version)
    records, _status = _read(path, ident)
    for record in records:
        try:
            index = snapshot.match(record)
        except Exception:  # a malformed record is a miss, never an error
            index = None
        if index is not None:
            return _given(index)
    for _entry, absolute, sig in snapshot.entries:  # list folders before scanning them
        snapshot.quiet(absolute, sig)
    index = scan_environment(core_version, snapshot.path, warn=False)
    index.warn(stacklevel=2)  # the caller of load_index
    fresh = snapshot.record(index, started)
    if fresh is not None:
        _write(path, ident, fresh, records)
    return index


def scan_environment(core_version: str, path: Sequence[str] | None = None, *,
                     warn: bool = True) -> DiscoveryIndex:
    """:func:`._scan.scan_environment`, importing its module only when a process scans."""
    from ._scan import scan_environment as scan

    return scan(core_version, path, warn=warn)


def _given(index: DiscoveryIndex) -> DiscoveryIndex:
    index.warn(stacklevel=3)  # the caller of load_index
    return index


def cache_info() -> dict[str, Any]:
    """What the cache holds for this interpreter, without scanning.

    Keys: ``enabled``, ``path`` (``None`` without a cache folder), ``exists``, ``size``
    (bytes), ``status`` (``fresh``: a record matches this environment; else
    ``stale``, ``missing``, ``unreadable`` (also: not a regular file, or a link),
    ``corrupt``, ``foreign``, ``untrusted`` (the folder is not private to this user; then
    ``untrusted`` says why and the file is not read), ``disabled`` or ``unavailable``),
    ``valid`` (``status == "fresh"``), ``records`` (``sys.path``
    layouts held), ``entries`` (entry points in the matching record), ``key`` (what
    the file is keyed on) and ``other_files`` (other interpreters' files in the folder).
    """
    from ._version import __version__

    path = cache_file()
    enabled = cache_enabled()
    snapshot = _Snapshot(sys.path)
    meta_entries = [entry for entry, absolute, sig in snapshot.entries
                    if not snapshot.quiet(absolute, sig)]
    info: dict[str, Any] = {
        "enabled": enabled,
        "path": path,
        "exists": False,
        "size": 0,
        "status": "disabled" if not enabled else "unavailable",
        "valid": False,
        "records": 0,
        "entries": 0,
        "key": {
            "format": FORMAT,
            "tilelang_hostcg": __version__,
            "executable": sys.executable,
            "prefix": sys.prefix,
            "python": sys.version.split()[0],
            "implementation": sys.implementation.name,
            "sys_path_entries": len(snapshot.path),
            "metadata_entries": meta_entries,
        },
        "other_files": 0,
    }
    if path is None:
        return info
    folder = os.path.dirname(path)
    with contextlib.suppress(OSError):
        info["other_files"] = sum(1 for name in os.listdir(folder)
                                  if _is_ours(name) and os.path.join(folder, name) != path)
    try:
        info["size"] = os.lstat(path).st_size
        info["exists"] = True
    except OSError:
        pass
    problem = _untrusted(folder)
    if problem is not None:
        info["untrusted"] = problem
        if enabled:
            info["status"] = "untrusted"
        return info
    records, status = _read(path, _ident(__version__))
    info["records"] = len(records)
    if status == "ok":
        status = "stale"
        for record in records:
            try:
                index = snapshot.match(record)
            except Exception:
                index = None
            if index is not None:
                status = "fresh"
                info["entries"] = len(index.entry_points)
                break
    if enabled:
        info["status"] = status
        info["valid"] = status == "fresh"
    return info


def clear_cache() -> list[str]:
    """Remove every cache file in the cache folder (all interpreters); returns the
    paths removed. Works even when the cache is disabled."""
    folder = cache_dir()
    if folder is None:
        return []
    removed = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    for name in names:
        if not _is_ours(name):
            continue
        target = os.path.join(folder, name)
        try:
            os.unlink(target)
        except OSError:
            continue
        removed.append(target)
    with contextlib.suppress(OSError):
        os.rmdir(folder)
    return removed

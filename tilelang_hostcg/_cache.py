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
from ._fileio import read_regular_file

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

    def first_match(self, records: Sequence[Record]) -> DiscoveryIndex | None:
        """The index of the first of ``records`` that describes this state exactly, else
        ``None`` (a malformed record is a miss, never an error)."""
        for record in records:
            try:
                index = self.match(record)
            except Exception:
                continue
            if index is not None:
                return index
        return None

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


_WARNED: set[str] = set()


def _warn_once(topic: str, message: str) -> None:
    if topic not in _WARNED:
        from ._errors import PluginWarning  # here: the errors are off the first-use path

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
    index = snapshot.first_match(records)
    if index is not None:
        return _given(index)
    for _entry, absolute, sig in snapshot.entries:  # list folders before scanning them
        snapshot.quiet(absolute, sig)
    index = scan_environment(core_version, snapshot.path, warn=False)
    index.warn(stacklevel=2)  # the caller of load_index
    from ._cache_write import record_of, write  # here: a warm process never writes

    fresh = record_of(snapshot, index, started)
    if fresh is not None:
        write(path, ident, fresh, records)
    return index


def scan_environment(core_version: str, path: Sequence[str] | None = None, *,
                     warn: bool = True) -> DiscoveryIndex:
    """:func:`._scan.scan_environment`, importing its module only when a process scans."""
    from ._scan import scan_environment as scan

    return scan(core_version, path, warn=warn)


def _given(index: DiscoveryIndex) -> DiscoveryIndex:
    index.warn(stacklevel=3)  # the caller of load_index
    return index

"""The discovery cache's file format: its records, how they are keyed, read and written.

A file holds, after a header (magic, format, payload length, checksum), the marshalled
pair ``(ident, records)``: ``ident`` says which interpreter, version and record shape
wrote it; each record describes one ``sys.path`` layout and the index a scan found
there. What a record is keyed on:

- every ``sys.path`` entry that holds distribution metadata (a child named
  ``*.dist-info`` or ``*.egg-info``), in order, with its ``os.stat`` signature:
  modification and change times in nanoseconds, inode, device, size and mode.
  Installing, upgrading, reinstalling or removing a distribution creates or removes
  a metadata folder in its ``sys.path`` entry, which changes that entry's signature;
- entries that held no metadata are remembered with their signature and need no
  exact match: one whose signature changed is listed again (script folders and the
  working directory change all the time, and their contents do not matter as long
  as they hold no metadata);
- the metadata files of the distributions the answers depend on: those advertising
  our groups, the core, the TVM providers (``apache-tvm`` and ``tilelang``, whatever
  their install form) and the skipped ones; the ``entry_points.txt`` of every
  ``*.egg-info`` folder (setuptools rewrites those in place, in the same folder, so
  no folder signature changes); and the source files of the discovery code itself.
  The entry points a record returns are also read again and compared on every use
  (:meth:`Snapshot.match`). A ``*.dist-info`` folder is written whole by installers,
  so its change shows in its ``sys.path`` entry.

A change made in the same clock tick as the stat would leave the signature unchanged
("racily clean", as git calls it), so a record whose signatures are less than
:data:`RACY_WINDOW_NS` old is not made: the next process scans again.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
from typing import TYPE_CHECKING, Any, TypeAlias

from .records import (
    AdvertisedEntryPoint,
    DiscoveryIndex,
    normalize_name,
    parse_entry_points,
    read_entry_points_text,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = [
    "FORMAT",
    "MAX_RECORDS",
    "RACY_WINDOW_NS",
    "Snapshot",
    "dump",
    "file_name",
    "ident",
    "is_cache_file",
    "merge",
    "read",
    "record_of",
]

Sig: TypeAlias = "tuple[int, int, int, int, int, int]"
# A record: (metadata entries, quiet entries, files, index payload), all marshal-able.
#   metadata entries: ((entry, absolute path, sig), ...) in sys.path order
#   quiet entries:    {absolute path: sig or None} for entries proven to hold no metadata
#   files:            ((absolute path, sig or None), ...)
CacheRecord: TypeAlias = ("tuple[tuple[tuple[str, str, Sig], ...], dict[str, Sig | None], "
                          "tuple[tuple[str, Sig | None], ...], tuple[Any, ...]]")

FORMAT = 3
"""Bump when the layout of the file or of its records changes."""

MAGIC = b"TLHCGIDX"
RACY_WINDOW_NS = 2_000_000_000
"""Signatures younger than this at scan time are not trusted (coarse file-system clocks)."""

MAX_RECORDS = 8
"""``sys.path`` layouts remembered per interpreter (e.g. with and without a source tree)."""

FILE_LIMIT = 64 * 1024 * 1024
"""A cache file larger than this is not read."""

_PRIME = (1 << 61) - 1  # checksum modulus (a Mersenne prime): no hashing module to import
_HEADER = len(MAGIC) + 2 + 8 + 8
_METADATA_SUFFIXES = (".dist-info", ".egg-info")
# entry_points.txt of the plugins is not stat'ed: its entry points of our groups are read
# again and compared on every use of a record, which a stat could only approximate.
_DIST_FILES = ("METADATA", "PKG-INFO", "requires.txt")
_SCHEMA = (AdvertisedEntryPoint.__slots__, DiscoveryIndex.__slots__)
# The modules whose code decides what a scan finds (their sources key every record).
_CODE_MODULES = ("records", "controls", "planning", "scan", "requirements",
                 "cachefile", "cache")


def checksum(data: bytes) -> int:
    """The bytes read as one little-endian number, modulo a 61-bit prime."""
    return int.from_bytes(data, "little") % _PRIME


def file_name(executable: str, prefix: str) -> str:
    """The name of the cache file of the interpreter ``executable`` with ``prefix``."""
    text = f"{executable}\0{prefix}".encode("utf-8", "surrogateescape")
    return f"index-{checksum(text):016x}.bin"


def is_cache_file(name: str) -> bool:
    """Whether a file name in the cache folder is one of ours (a cache or temp file)."""
    return (name.startswith("index-") and name.endswith(".bin")) or (
        name.startswith(".index-") and name.endswith(".tmp"))


def ident(core_version: str) -> tuple[Any, ...]:
    """What a file is keyed on as a whole: format, version, interpreter, record shape."""
    impl = sys.implementation
    return (FORMAT, core_version, sys.executable, sys.prefix, sys.version, impl.name,
            impl.cache_tag, sys.platform, _SCHEMA)


def sig(path: str) -> Sig | None:
    """The ``os.stat`` signature of ``path`` (``None`` when it cannot be stat'ed)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_size, st.st_mode)


def _racy(signature: Sig | None, started_ns: int) -> bool:
    # The change time too: ``cp -p`` and ``rsync -a`` set a modification time in the
    # past, but nobody can set the change time, so a change made during a scan is
    # always younger than the scan.
    return signature is not None and max(signature[0], signature[1]) > started_ns - RACY_WINDOW_NS


class Snapshot:
    """The state of ``sys.path`` at one moment: each entry with its stat signature."""

    __slots__ = ("entries", "path", "quiet_cache")

    def __init__(self, path: Sequence[str]) -> None:
        self.path = list(path)
        entries = []
        for entry in self.path:
            absolute = entry if os.path.isabs(entry) else os.path.abspath(entry)
            entries.append((entry, absolute, sig(absolute)))
        self.entries: list[tuple[str, str, Sig | None]] = entries
        self.quiet_cache: dict[str, bool] = {}

    def quiet(self, absolute: str, signature: Sig | None) -> bool:
        """Whether the entry provably holds no distribution metadata (listed once)."""
        known = self.quiet_cache.get(absolute)
        if known is None:
            known = self.quiet_cache[absolute] = _holds_no_metadata(absolute, signature)
        return known

    def first_match(self, records: Sequence[CacheRecord]) -> DiscoveryIndex | None:
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

    def match(self, record: CacheRecord) -> DiscoveryIndex | None:
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
        for path, signature in files:
            if sig(path) != signature:
                return None
        index = _decode_index(payload)
        if not _revalidate(index, {item[1] for item in meta}):
            return None
        return index

    def record_of(self, index: DiscoveryIndex, started_ns: int) -> CacheRecord | None:
        """A record of this state and its scan, or ``None`` when a signature is too
        fresh to be trusted (or the scan found a distribution in a folder listed as
        empty)."""
        homes = {os.path.dirname(os.path.abspath(loc)) for loc in _locations(index)}
        homes.update(os.path.abspath(loc) for loc in _locations(index))  # *.egg entries
        meta: list[tuple[str, str, Sig]] = []
        quiet: dict[str, Sig | None] = {}
        for entry, absolute, signature in self.entries:
            if absolute not in homes and self.quiet(absolute, signature):
                if not _racy(signature, started_ns):
                    quiet[absolute] = signature
                continue
            if signature is None or _racy(signature, started_ns):
                return None
            meta.append((entry, absolute, signature))
        paths = []
        for loc in sorted(_locations(index)):
            base = os.path.abspath(loc)
            paths.append(base)
            paths.extend(os.path.join(base, n) for n in _DIST_FILES)
        paths.extend(_egg_info_entry_points(absolute for _e, absolute, _s in meta))
        paths.extend(_code_files())
        files = [(path, sig(path)) for path in dict.fromkeys(paths)]
        if any(_racy(signature, started_ns) for _, signature in files):
            return None
        return (tuple(meta), quiet, tuple(files), _encode_index(index))


def record_of(snapshot: Snapshot, index: DiscoveryIndex, started_ns: int) -> CacheRecord | None:
    """:meth:`Snapshot.record_of`."""
    return snapshot.record_of(index, started_ns)


def _holds_no_metadata(absolute: str, signature: Sig | None) -> bool:
    if signature is None:
        return True  # a missing entry contributes nothing
    if not stat.S_ISDIR(signature[5]) or absolute.lower().endswith(".egg"):
        return False  # zip files and eggs: keyed exactly
    try:
        with os.scandir(absolute) as children:
            for child in children:
                if child.name.lower().endswith(_METADATA_SUFFIXES):
                    return False
    except OSError:
        return False
    return True


def _egg_info_entry_points(entries: Iterable[str]) -> list[str]:
    """The ``entry_points.txt`` paths (existing or not) of every ``*.egg-info`` folder
    in ``entries``: setuptools rewrites them in place."""
    found: list[str] = []
    for entry in entries:
        try:
            with os.scandir(entry) as children:
                found.extend(os.path.join(child.path, "entry_points.txt") for child in children
                             if child.name.lower().endswith(".egg-info")
                             and child.is_dir(follow_symlinks=False))
        except OSError:
            continue
    return sorted(found)


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


def _locations(index: DiscoveryIndex) -> set[str]:
    found = {ep.location for ep in index.entry_points if ep.location}
    for _name, locations in index.duplicates:
        found.update(loc for loc in locations if loc)
    found.update(loc for loc in index.watched if loc)
    found.update(loc for _dist, loc, _group, _ours in index.near_misses if loc)
    return found


def _code_files() -> list[str]:
    """The source files of the modules that compute, read and write the index."""
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.join(here, f"{name}.py") for name in _CODE_MODULES]


def _encode_index(index: DiscoveryIndex) -> tuple[Any, ...]:
    eps = tuple(tuple(getattr(ep, name) for name in _SCHEMA[0]) for ep in index.entry_points)
    return (eps, index.duplicates, index.installed, index.problems, index.watched,
            index.near_misses)


def _decode_index(payload: tuple[Any, ...]) -> DiscoveryIndex:
    """The index of a record; ``TypeError`` when a field has the wrong type."""
    eps, duplicates, installed, problems, watched, near_misses = payload
    entries = []
    for fields in eps:
        group, name, value, dist, version, requires, incompatible, location = fields
        if type(requires) is not tuple or {type(group), type(name), type(value), type(dist),
                                           type(version), type(location),
                                           *map(type, requires)} != {str} or (
                incompatible is not None and type(incompatible) is not str):
            raise TypeError("malformed entry point record")
        entries.append(AdvertisedEntryPoint(*fields))
    if {str, *map(type, problems), *map(type, watched)} != {str} or any(
            type(near) is not tuple or {*map(type, near)} != {str} for near in near_misses):
        raise TypeError("malformed record")
    return DiscoveryIndex(tuple(entries), tuple(duplicates), tuple(installed), tuple(problems),
                          tuple(watched), tuple(near_misses))


def read(data: bytes, expected: tuple[Any, ...]) -> tuple[list[CacheRecord], str]:
    """The records in the bytes of a file and a status: ``ok``, ``corrupt`` or
    ``foreign`` (another format, version or interpreter than ``expected``)."""
    if len(data) < _HEADER or not data.startswith(MAGIC):
        return [], "corrupt"
    start = len(MAGIC)
    if int.from_bytes(data[start:start + 2], "little") != FORMAT:
        return [], "foreign"
    length = int.from_bytes(data[start + 2:start + 10], "little")
    payload = data[_HEADER:]
    if length != len(payload) or checksum(payload) != int.from_bytes(
            data[start + 10:_HEADER], "little"):
        return [], "corrupt"
    try:
        stored_ident, records = marshal.loads(payload)
    except Exception:  # marshal raises several types on bad input
        return [], "corrupt"
    if stored_ident != expected:
        return [], "foreign"
    if not isinstance(records, list):
        return [], "corrupt"
    return records, "ok"


def dump(file_ident: tuple[Any, ...], records: list[CacheRecord]) -> bytes:
    """The bytes of a file holding ``records``."""
    payload = marshal.dumps((file_ident, records))
    return (MAGIC + FORMAT.to_bytes(2, "little") + len(payload).to_bytes(8, "little")
            + checksum(payload).to_bytes(8, "little") + payload)


def merge(record: CacheRecord, old: Sequence[CacheRecord]) -> list[CacheRecord]:
    """``record`` first, then the old records of other ``sys.path`` layouts (at most
    :data:`MAX_RECORDS` in all)."""
    layout = tuple(item[:2] for item in record[0])
    records = [record]
    for other in old:
        try:
            if tuple(item[:2] for item in other[0]) != layout:
                records.append(other)
        except (TypeError, IndexError):
            continue
    return records[:MAX_RECORDS]

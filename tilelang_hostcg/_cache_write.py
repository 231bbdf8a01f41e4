"""Writing and looking after the discovery cache file (see :mod:`._cache`).

A process writes the file only after a scan, and the CLI inspects or clears it; a
warm process needs none of this, so it lives apart from the reading path.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
import time

from ._cache import (
    _DIST_FILES,
    _SCHEMA,
    ENV_CACHE,
    FORMAT,
    MAGIC,
    MAX_RECORDS,
    STALE_FILE_AGE_S,
    _checksum,
    _ident,
    _racy,
    _read,
    _sig,
    _Snapshot,
    _untrusted,
    _warn_once,
    _warn_untrusted,
    cache_dir,
    cache_enabled,
    cache_file,
)
from ._discovery import DiscoveryIndex
from ._fileio import write_atomic

TYPE_CHECKING = False  # typing costs import time; type checkers treat this name as True
if TYPE_CHECKING:
    from typing import Any

    from ._cache import Record, Sig

__all__ = ["cache_info", "clear_cache", "record_of", "write"]


def _code_files() -> list[str]:
    """The modules that compute, read and write the index, requirement verdicts included
    (``_scan`` and ``_requirements`` by their paths: they are not imported)."""
    from . import _cache, _discovery

    scan = os.path.join(os.path.dirname(__file__), "_scan.py")
    requirements = os.path.join(os.path.dirname(__file__), "_requirements.py")
    return [os.path.abspath(f) for f in (_discovery.__file__, scan, requirements, _cache.__file__,
                                         __file__) if f]


def record_of(snapshot: _Snapshot, index: DiscoveryIndex, started_ns: int) -> Record | None:
    """A record of ``snapshot`` and its scan, or ``None`` when a signature is too fresh
    to be trusted (or the scan found a distribution in a folder listed as empty)."""
    homes = {os.path.dirname(os.path.abspath(loc)) for loc in _locations(index)}
    homes.update(os.path.abspath(loc) for loc in _locations(index))  # *.egg entries
    meta: list[tuple[str, str, Sig]] = []
    quiet: dict[str, Sig | None] = {}
    for entry, absolute, sig in snapshot.entries:
        if absolute not in homes and snapshot.quiet(absolute, sig):
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


def _locations(index: DiscoveryIndex) -> set[str]:
    found = {ep.location for ep in index.entry_points if ep.location}
    for _name, locations in index.duplicates:
        found.update(loc for loc in locations if loc)
    found.update(loc for loc in index.watched if loc)
    return found


def _encode_index(index: DiscoveryIndex) -> tuple[Any, ...]:
    eps = tuple(tuple(getattr(ep, name) for name in _SCHEMA[0]) for ep in index.entry_points)
    return (eps, index.duplicates, index.installed, index.problems, index.watched)


def _dump(ident: tuple[Any, ...], records: list[Record]) -> bytes:
    payload = marshal.dumps((ident, records))
    return (MAGIC + FORMAT.to_bytes(2, "little") + len(payload).to_bytes(8, "little")
            + _checksum(payload).to_bytes(8, "little") + payload)


def write(path: str, ident: tuple[Any, ...], record: Record, old: list[Record]) -> bool:
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
    from . import __version__

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
        index = snapshot.first_match(records)
        status = "stale" if index is None else "fresh"
        if index is not None:
            info["entries"] = len(index.entry_points)
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

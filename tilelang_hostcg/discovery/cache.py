"""The discovery index between processes: where the cache lives, when it is trusted,
and the three things done with it: :func:`load_index`, :func:`cache_info`,
:func:`clear_cache`.

A warm :func:`load_index` stats each ``sys.path`` entry once, reads one file and
rebuilds the index: its cost depends on the length of ``sys.path`` and on the number
of plugin distributions, never on the number of installed distributions, and it
imports neither ``importlib.metadata`` nor ``packaging``. When anything the index
depends on may have changed, it scans (:func:`._scan.scan_environment`) and
rewrites the file. The file's format and what a record is keyed on are in
:mod:`._cachefile`.

The file lives under ``$XDG_CACHE_HOME/tilelang-hostcg/`` (default
``~/.cache/tilelang-hostcg/``), one per interpreter, holding the records of up to
:data:`~._cachefile.MAX_RECORDS` ``sys.path`` layouts. It is written to a temporary
file and renamed into place. It is never trusted blindly: it is read only from a
folder that only this user can write, never through a link or a FIFO; a bad magic,
length or checksum, another format, version or interpreter, or a record that does not
match is ignored and the file rewritten; any ``OSError`` means "no cache".
``TILELANG_HOSTCG_CACHE=0`` turns off both reading and writing.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time
import warnings
from typing import TYPE_CHECKING, Any

from .. import __version__
from .._errors import PluginWarning
from .._fileio import read_regular_file, write_atomic
from . import cachefile as _cachefile
from .cachefile import Snapshot
from .controls import ENV_CACHE, cache_setting

if TYPE_CHECKING:
    from .cachefile import CacheRecord
    from .records import DiscoveryIndex

__all__ = [
    "ENV_CACHE",
    "RACY_WINDOW_NS",
    "CacheFolderError",
    "cache_dir",
    "cache_enabled",
    "cache_file",
    "cache_info",
    "clear_cache",
    "load_index",
]

RACY_WINDOW_NS = _cachefile.RACY_WINDOW_NS

STALE_FILE_AGE_S = 30 * 24 * 3600
"""Other interpreters' files untouched for this long are removed when a file is written."""

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


class CacheFolderError(OSError):
    """The cache folder cannot be cleared safely (a link, or not private to this user);
    the message says why and what to do. ``exit_code``: the command line's status."""

    exit_code = 2


# ----------------------------------------------------------------------- locations
def cache_enabled() -> bool:
    """Whether the cache may be read and written (``TILELANG_HOSTCG_CACHE`` is not ``0``)."""
    return cache_setting(os.environ.get(ENV_CACHE))[0]


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
    return os.path.join(folder, _cachefile.file_name(sys.executable, sys.prefix))


def _foreign_finder() -> str | None:
    """A ``sys.meta_path`` finder that reports distributions from outside ``sys.path``."""
    for finder in sys.meta_path:
        if getattr(finder, "find_distributions", None) is None:
            continue
        cls = finder if isinstance(finder, type) else type(finder)
        if (cls.__module__, cls.__qualname__) not in _PATH_FINDERS:
            return f"{cls.__module__}.{cls.__qualname__}"
    return None


# ----------------------------------------------------------------------- trust
_WARNED: set[str] = set()


def _warn_once(topic: str, message: str) -> None:
    if topic not in _WARNED:
        _WARNED.add(topic)
        warnings.warn(message, PluginWarning, stacklevel=4)


def _untrusted(folder: str) -> str | None:
    """Why the cache folder must not be used, or ``None`` when only this user can write
    it: a folder (not a link to one) owned by this user, not writable by group or
    others (as pip and ssh check their folders)."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"it cannot be examined ({exc.strerror or exc})"
    if stat.S_ISLNK(info.st_mode):
        return f"it is a symbolic link (to {_link_target(folder)!r})"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    if uid is not None and info.st_uid != uid:
        return f"it is owned by user id {info.st_uid}, not by this user ({uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"group or others can write it (mode {stat.S_IMODE(info.st_mode):03o})"
    return None


def _link_target(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def _warn_untrusted(folder: str, problem: str) -> None:
    _warn_once("untrusted", f"the discovery cache folder {folder!r} is not used: {problem}. "
               f"Make it a private folder of yours (chown to yourself, chmod 700), remove it, "
               f"or set {ENV_CACHE}=0; meanwhile every process scans the installed "
               f"distributions")


def _read(path: str, expected: tuple[Any, ...]) -> tuple[list[CacheRecord], str]:
    """The records of the file at ``path`` and a status: ``ok``, ``missing``,
    ``unreadable``, ``corrupt`` or ``foreign``."""
    try:
        # Never through a link, never blocking (a FIFO at the path), regular files only.
        data = read_regular_file(path, limit=_cachefile.FILE_LIMIT, follow_links=False)
    except FileNotFoundError:
        return [], "missing"
    except OSError:
        return [], "unreadable"
    return _cachefile.read(data, expected)


# ----------------------------------------------------------------------- load
def load_index(core_version: str) -> DiscoveryIndex:
    """The entry-point index of the running environment: from the cache when it matches
    the environment exactly, else from a fresh scan (then written to the cache).

    The result always equals ``scan_environment(core_version)``, and the warnings
    about distributions whose metadata cannot be used (and about near-miss groups) are
    given either way. The cache is used only from a folder that only this user can
    write (else one warning and a scan); a write that fails leaves the old file and
    warns once.
    """
    path = cache_file() if cache_enabled() else None
    if path is None or _foreign_finder() is not None:
        return _given(_scan(core_version, None))
    problem = _untrusted(os.path.dirname(path))
    if problem is not None:
        _warn_untrusted(os.path.dirname(path), problem)
        return _given(_scan(core_version, None))
    started = time.time_ns()
    snapshot = Snapshot(sys.path)
    if not all(isinstance(entry, str) for entry in snapshot.path):
        return _given(_scan(core_version, None))
    ident = _cachefile.ident(core_version)
    records, _status = _read(path, ident)
    index = snapshot.first_match(records)
    if index is not None:
        return _given(index)
    for _entry, absolute, signature in snapshot.entries:  # list folders before scanning
        snapshot.quiet(absolute, signature)
    index = _scan(core_version, snapshot.path)
    index.warn(stacklevel=2)  # the caller of load_index
    fresh = snapshot.record_of(index, started)
    if fresh is not None:
        _write(path, ident, _cachefile.merge(fresh, records))
    return index


def _scan(core_version: str, path: list[str] | None) -> DiscoveryIndex:
    # Imported here: measured at several ms with what it imports, and a process whose
    # cache is warm never scans.
    from .scan import scan_environment

    return scan_environment(core_version, path, warn=False)


def _given(index: DiscoveryIndex) -> DiscoveryIndex:
    index.warn(stacklevel=3)  # the caller of load_index
    return index


def _write(path: str, ident: tuple[Any, ...], records: list[CacheRecord]) -> bool:
    """Write ``records`` atomically; returns whether the file was written."""
    data = _cachefile.dump(ident, records)
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
                if child.path == keep or not _cachefile.is_cache_file(name):
                    continue
                limit = 24 * 3600 if name.endswith(".tmp") else STALE_FILE_AGE_S
                try:
                    info = child.stat(follow_symlinks=False)
                    if stat.S_ISREG(info.st_mode) and now - info.st_mtime > limit:
                        os.unlink(child.path)
                except OSError:
                    continue
    except OSError:
        return


# ----------------------------------------------------------------------- info, clear
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
    path = cache_file()
    enabled = cache_enabled()
    snapshot = Snapshot(sys.path)
    meta_entries = [entry for entry, absolute, signature in snapshot.entries
                    if not snapshot.quiet(absolute, signature)]
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
            "format": _cachefile.FORMAT,
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
    problem = _untrusted(folder)
    if problem is not None:
        info["untrusted"] = problem
        if enabled:
            info["status"] = "untrusted"
        return info
    with contextlib.suppress(OSError):
        info["other_files"] = sum(1 for name in os.listdir(folder)
                                  if _cachefile.is_cache_file(name)
                                  and os.path.join(folder, name) != path)
    try:
        info["size"] = os.lstat(path).st_size
        info["exists"] = True
    except OSError:
        pass
    records, status = _read(path, _cachefile.ident(__version__))
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
    paths removed. Works even when the cache is disabled.

    Only names inside the folder are removed, never what they point to: a symbolic
    link named like a cache file is removed as a link, and anything that is not a
    regular file or a link (a FIFO, a device, a folder) is left in place with a
    :class:`PluginWarning`. Raises :class:`CacheFolderError` when the folder itself is
    a link or is not private to this user (the reader refuses it too).
    """
    folder = cache_dir()
    if folder is None:
        return []
    problem = _untrusted(folder)
    if problem is not None:
        raise CacheFolderError(
            f"the discovery cache folder {folder!r} is not cleared: {problem}, and the cache "
            "never follows it. Remove it yourself if it is yours, or set XDG_CACHE_HOME to "
            "a private folder")
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                     | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise CacheFolderError(f"the discovery cache folder {folder!r} cannot be opened "
                               f"({exc.strerror or exc}); it is not cleared") from exc
    removed = []
    try:
        for name in sorted(os.listdir(fd)):
            if not _cachefile.is_cache_file(name):
                continue
            target = os.path.join(folder, name)
            try:
                mode = os.lstat(name, dir_fd=fd).st_mode
                if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                    warnings.warn(f"{target!r} is not a regular file; it is left in place. "
                                  "Remove it yourself if it is not needed", PluginWarning,
                                  stacklevel=2)
                    continue
                os.unlink(name, dir_fd=fd)  # a link is removed itself, never followed
            except OSError:
                continue
            removed.append(target)
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(folder)
    return removed

"""The scan of the installed distributions: what ``importlib.metadata`` sees of our groups.

:func:`scan_environment` is the only function that reads installed metadata (through
the standard library's ``importlib.metadata``, the library whose view the contract
mirrors and which a process that has imported TVM has imported already, and
``packaging`` for the requirement checks). It is imported only by a process that
scans: one with a warm discovery cache never imports this module.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

from .._errors import PluginWarning
from .._names import CORE_DISTRIBUTION, TVM_PROVIDERS
from .records import (
    AdvertisedEntryPoint,
    DiscoveryIndex,
    UnusableMetadata,
    describe,
    groups_in,
    near_miss_group,
    normalize_name,
    parse_entry_points,
    read_metadata_bytes,
)
from .requirements import check_requirements, relevant_requires

__all__ = ["installed_versions", "scan_environment"]


def _metadata_fields(dist: Any, problems: list[str] | None = None,
                     ) -> tuple[str | None, str | None, list[str]]:
    """``Name``, ``Version`` and ``Requires-Dist`` of an installed distribution.

    The metadata file (``METADATA``, else ``PKG-INFO``, else an ``*.egg-info`` file
    itself, as ``importlib.metadata`` looks for it) is read with
    :func:`._fileio.read_regular_file`: never through a FIFO, never a folder, never
    over :data:`METADATA_LIMIT`, and it must be UTF-8. Plain headers are read line by
    line, giving what ``importlib.metadata`` gives without importing the ``email``
    package (about 14 ms of a cold scan); anything unusual (folded or odd header lines,
    no ``Name`` or ``Version``) goes through ``importlib.metadata``.

    A file that cannot be used gives ``(None, None, [])`` and one message naming it,
    appended to ``problems`` (or warned as a :class:`PluginWarning` when ``problems``
    is ``None``).
    """
    folder = _local_folder(dist)
    try:
        if folder is None:  # a zip file or another finder's distribution
            return dist.name, dist.version, list(dist.requires or ())
        text = None
        if os.path.isdir(folder):
            for name in ("METADATA", "PKG-INFO"):
                text = _read_metadata_file(folder, name)
                if text:
                    break
        else:  # an old-style ``name.egg-info`` file is its own metadata
            text = _read_metadata_file(os.path.dirname(folder), os.path.basename(folder))
        if not text:
            raise UnusableMetadata(f"{describe(folder)} has no METADATA or PKG-INFO file")
        fields = _plain_headers(text)
        # importlib.metadata falls back to requires.txt when there is no Requires-Dist.
        if fields is not None and (fields[2] or _read_metadata_file(folder, "requires.txt")
                                   is None):
            return fields
        name, version = dist.name, dist.version
        return name, version, list(dist.requires or ())
    except UnusableMetadata as exc:
        message = str(exc)
    except (OSError, ValueError, LookupError, TypeError) as exc:  # the email parser's or a race's
        message = f"{describe(folder or '?')}: cannot read its metadata ({exc})"
    message += ("; the distribution is ignored. Reinstall it (pip install --force-reinstall "
                "NAME) or remove the folder")
    if problems is None:
        warnings.warn(message, PluginWarning, stacklevel=2)
    else:
        problems.append(message)
    return None, None, []


def _local_folder(dist: Any) -> str | None:
    """The distribution's metadata folder (or egg-info file) on the local file system."""
    path = getattr(dist, "_path", None)
    if path is None or type(path).__module__.startswith("zipfile"):
        return None
    text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    return text if isinstance(text, str) else None


def _read_metadata_file(folder: str, name: str) -> str | None:
    """The text of ``folder/name``: ``None`` when there is no such file (as
    ``importlib.metadata`` treats it); raises :class:`UnusableMetadata` for anything
    that is not a readable regular UTF-8 file within :data:`METADATA_LIMIT`."""
    data = read_metadata_bytes(folder, name)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnusableMetadata(
            f"{describe(folder)}: {name} is not UTF-8 ({_guess_encoding(data)}; {exc.reason} "
            f"at byte {exc.start})") from None


def _guess_encoding(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data[:64]:
        return "it looks like UTF-16"
    return "perhaps Latin-1 or another legacy encoding"


def _plain_headers(text: str) -> tuple[str, str, list[str]] | None:
    name = version = None
    requires: list[str] = []
    key = ""
    for line in text.split("\n"):
        line = line[:-1] if line.endswith("\r") else line
        if not line:
            break  # end of the headers
        if line[0] in " \t":  # a folded line continues the previous header
            if key in ("name", "version", "requires-dist"):
                return None
            continue
        key, sep, value = line.partition(":")
        if not sep or not key or "\r" in line or not all(
                "!" <= ch <= "~" for ch in key) or line.startswith("From "):
            return None  # let the email parser judge it
        key, value = key.lower(), value.lstrip(" \t")
        if key == "name":
            name = value if name is None else name
        elif key == "version":
            version = value if version is None else version
        elif key == "requires-dist":
            requires.append(value)
    if not name or not version:
        return None
    return name, version, requires


def scan_environment(core_version: str, path: Sequence[str] | None = None, *,
                     warn: bool = True) -> DiscoveryIndex:
    """Read our entry-point groups from every distribution on ``path`` (default ``sys.path``).

    This is the only function that reads installed metadata, and it sees what
    ``importlib.metadata.entry_points()`` sees: distributions in ``sys.path`` order,
    the first copy of each normalized name wins (judged for every distribution, not
    only the ones advertising our groups), and later copies are never used; those of
    distributions advertising our groups are reported in ``duplicates``.

    Every ``entry_points.txt`` is read once, as bytes, through
    :func:`._fileio.read_regular_file`; only distributions advertising our groups
    have their ``METADATA`` parsed. Metadata that cannot be used (not UTF-8, not a
    regular file, a dangling link, unreadable, too large, a line without ``=``)
    skips that distribution alone, with a :class:`PluginWarning` naming it (when
    ``warn``) and a message in ``problems``.
    """
    from importlib.metadata import distributions  # measured: about 10 ms, only a scan needs it

    problems: list[str] = []
    try:
        installed = installed_versions(core_version)
    except (OSError, ValueError) as exc:  # metadata of the core or of TVM that cannot be read
        problems.append(f"the installed versions of {CORE_DISTRIBUTION} and of TVM "
                        f"cannot be read ({exc}); requirements on them are judged as not met")
        installed = {CORE_DISTRIBUTION: core_version, **dict.fromkeys(TVM_PROVIDERS)}
    first: dict[str, _Copy] = {}
    later: dict[str, list[_Copy]] = {}
    plugins: list[tuple[_Copy, list[tuple[str, str, str]]]] = []
    watched: list[str] = []
    near: list[tuple[str, str, str, str]] = []
    for dist in (distributions() if path is None else distributions(path=list(path))):
        copy = _Copy(dist)
        key = copy.key(problems)
        if key is None:
            continue
        if key in first:
            later.setdefault(key, []).append(copy)
            continue
        first[key] = copy
        if key in _WATCHED_KEYS:
            watched.append(copy.location)
        eps = copy.our_entry_points(problems)
        near.extend((normalize_name(copy.name or key), copy.location, group, ours)
                    for group, ours in copy.near)
        if eps is None:
            watched.append(copy.location)
        elif eps:
            plugins.append((copy, eps))
    found: list[AdvertisedEntryPoint] = []
    for copy, eps in plugins:
        name, version, requires_dist = _metadata_fields(copy.dist, problems)
        if not name:
            watched.append(copy.location)
            continue
        requires = relevant_requires(requires_dist)
        verdict = (None if normalize_name(name) == CORE_DISTRIBUTION
                   else check_requirements(name, requires, installed))
        found.extend(AdvertisedEntryPoint(group, kind, value, name, version or "?", requires,
                                          verdict, copy.location) for group, kind, value in eps)
    duplicates = _duplicates(first, later, problems)
    index = DiscoveryIndex(tuple(found), duplicates, tuple(sorted(installed.items())),
                           tuple(problems), tuple(dict.fromkeys(w for w in watched if w)),
                           tuple(near))
    if warn:
        index.warn(stacklevel=2)
    return index


# The distributions whose metadata every verdict depends on, whatever their install form.
_WATCHED_KEYS = frozenset(normalize_name(name).replace("-", "_")
                          for name in (CORE_DISTRIBUTION, *TVM_PROVIDERS))
_GROUP_MARK = b"tilelang.host_codegen"
# The mark in UTF-16 (LE, BE), spelled out: the codecs are not imported for it.
_GROUP_MARK_UTF16 = (bytes(b for c in _GROUP_MARK for b in (c, 0)),
                     bytes(b for c in _GROUP_MARK for b in (0, c)))


def _near_misses(data: bytes) -> list[tuple[str, str]]:
    """``(group, ours)`` for each group header of ``entry_points.txt`` that is a near
    miss of one of our groups."""
    text = data.decode("utf-8", "replace")
    found = []
    for group in dict.fromkeys(groups_in(text)):
        ours = near_miss_group(group)
        if ours is not None:
            found.append((group, ours))
    return found


def installed_versions(core_version: str) -> dict[str, str | None]:
    """Installed versions of the distributions plugins may require (the core and the
    TVM providers); ``None`` for one that is not installed."""
    from importlib.metadata import PackageNotFoundError, distribution

    found: dict[str, str | None] = {}
    for name in (CORE_DISTRIBUTION, *TVM_PROVIDERS):
        try:
            found[name] = _metadata_fields(distribution(name))[1]
        except PackageNotFoundError:
            found[name] = None
    if found[CORE_DISTRIBUTION] is None:  # running from a source tree
        found[CORE_DISTRIBUTION] = core_version
    return found


class _Copy:
    """One distribution folder found on the path, read lazily and safely."""

    __slots__ = ("dist", "local", "location", "name", "near", "text")

    def __init__(self, dist: Any) -> None:
        self.dist = dist
        folder = _local_folder(dist)
        self.local = folder is not None  # a folder of the local file system (not a zip file)
        self.location = folder if folder is not None else str(getattr(dist, "_path", ""))
        self.name: str | None = None
        self.text: str | None = None
        self.near: list[tuple[str, str]] = []  # (group, ours) of near-miss groups

    def key(self, problems: list[str]) -> str | None:
        """The name ``importlib.metadata`` tells copies apart by: from the folder name
        where it has one (``name-1.0.dist-info``), else from ``Name`` in the metadata."""
        stem = os.path.basename(self.location)
        base, ext = os.path.splitext(stem)
        if ext in (".dist-info", ".egg-info") and base:
            self.name = base.partition("-")[0]
        else:
            self.name = _metadata_fields(self.dist, problems)[0]
            if not self.name:
                return None
        return normalize_name(self.name).replace("-", "_")

    def our_entry_points(self, problems: list[str]) -> list[tuple[str, str, str]] | None:
        """``(group, kind, value)`` of our groups, in file order, as ``importlib.metadata``
        parses them; ``None`` (with a message) when the file cannot be used."""
        try:
            data = self._entry_points_bytes()
            if data is not None and b"tilelang" in data.lower():
                self.near = _near_misses(data)
            if data is None or _GROUP_MARK not in data:
                if data is not None and any(m in data for m in _GROUP_MARK_UTF16):
                    raise UnusableMetadata(f"{describe(self.location)}: entry_points.txt is "
                                            "not UTF-8 (it looks like UTF-16)")
                return []
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise UnusableMetadata(
                    f"{describe(self.location)}: entry_points.txt is not UTF-8 "
                    f"({_guess_encoding(data)}; {exc.reason} at byte {exc.start})") from None
            return parse_entry_points(text, self.location)
        except UnusableMetadata as exc:
            problems.append(f"{exc}; the distribution's entry points are ignored. Reinstall it "
                            "(pip install --force-reinstall NAME) or remove the folder")
            return None

    def _entry_points_bytes(self) -> bytes | None:
        if not self.local:
            try:
                text = self.dist.read_text("entry_points.txt")
            except (OSError, ValueError) as exc:
                raise UnusableMetadata(f"{describe(self.location)}: entry_points.txt "
                                        f"cannot be read ({exc})") from exc
            return None if text is None else text.encode("utf-8", "surrogatepass")
        return read_metadata_bytes(self.location, "entry_points.txt")


def _duplicates(first: Mapping[str, _Copy], later: Mapping[str, list[_Copy]],
                problems: list[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Real second copies of the distributions that advertise our groups in any copy.

    Not copies: the same folder reached again (a ``sys.path`` entry listed twice, or
    two spellings of one folder, through a link or a relative path), and the
    ``*.egg-info`` an editable install leaves in its own source tree (the source tree
    is named by the ``direct_url.json`` of the installed copy).
    """
    out = []
    for key, copies in later.items():
        head = first[key]
        seen = {_real(head.location)}
        distinct: list[_Copy] = []
        for copy in copies:
            real = _real(copy.location)
            if real in seen:
                continue
            seen.add(real)
            distinct.append(copy)
        projects = [p for p in (_editable_project(c.location) for c in (head, *distinct)) if p]
        distinct = [c for c in distinct
                    if not _inside_any(c.location, projects)
                    and not (_inside_any(head.location, projects)
                             and _editable_project(c.location) is not None)]
        if not distinct:
            continue
        ours = [c for c in (head, *distinct) if c.our_entry_points([])]
        if not ours:
            continue
        name = normalize_name(head.name or key)
        out.append((name, (head.location, *(c.location for c in distinct))))
    return tuple(sorted(out))


def _real(location: str) -> str:
    try:
        return os.path.realpath(location)
    except (OSError, ValueError):
        return location


def _editable_project(location: str) -> str | None:
    """The source folder of an editable install (PEP 610 ``direct_url.json``), if any."""
    if not location.endswith(".dist-info"):
        return None
    try:
        data = read_metadata_bytes(location, "direct_url.json")
        if data is None:
            return None
        doc = json.loads(data.decode("utf-8"))
        if not (isinstance(doc, dict) and isinstance(doc.get("dir_info"), dict)
                and doc["dir_info"].get("editable") is True):
            return None
        url = urlsplit(str(doc.get("url", "")))
        if url.scheme != "file":
            return None
        return _real(unquote(url.path))
    except (UnusableMetadata, ValueError, OSError):
        return None


def _inside_any(location: str, folders: Sequence[str]) -> bool:
    real = _real(location)
    return any(real == f or real.startswith(f.rstrip(os.sep) + os.sep) for f in folders)

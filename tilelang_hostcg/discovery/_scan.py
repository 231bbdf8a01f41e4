"""The one scan of the installed distributions, through ``importlib.metadata``: it sees what
``entry_points()`` sees, parsing only the ``entry_points.txt`` that mention ``tilelang``. Metadata
that cannot be used skips that distribution alone, with one finding naming its metadata folder (worded
by :mod:`..diagnosis`)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..core import CORE_DISTRIBUTION, GROUPS, is_core, normalize_name
from ..environment import (
    FOLDER,
    editable_source,
    file_finding,
    file_kind,
    files_finding,
    folder_of,
    metadata_file_path,
    read_file,
    unreadable_finding,
    unusable_finding,
)
from ._records import AdvertisedEntryPoint, DiscoveryIndex

if TYPE_CHECKING:
    from importlib.metadata import Distribution, EntryPoint, PackageMetadata

    from ..diagnosis import Finding

def scan_environment(core_version: str, *, full: bool = True) -> DiscoveryIndex:
    """Our entry-point groups of every distribution on ``sys.path``, each problem warned. The first
    copy of each normalized name wins, as in ``importlib.metadata``; later copies of one advertising
    our groups are ``duplicates``. ``full=False`` is a look at what is advertised: no requirement
    verdicts (nor ``packaging``) and no warnings but the near-miss groups' (every scan's, once)."""
    from importlib.metadata import distributions
    problems: list[Finding] = []
    installed = installed_versions(core_version) if full else None
    copies_of: dict[str, list[Distribution]] = {}
    near: list[tuple[str, str, str, str]] = []
    found: list[AdvertisedEntryPoint] = []
    judged: set[str] = set()  # folders already looked at: each is named once at most
    for dist in distributions():
        here = folder_of(dist)
        if here in judged or not _mentions_tilelang(dist):
            continue
        judged.add(here)
        meta = _metadata(dist, problems)
        if meta is None:
            continue
        key = normalize_name(meta["Name"])
        if key in copies_of:
            continue
        copies = copies_of[key] = list(distributions(name=key))
        if not any(folder_of(c) == here for c in copies):
            copies[:] = [dist]  # not found by its name: its own only copy
        judged.update(map(folder_of, copies))  # a stale copy is one duplicate warning
        head = copies[0]
        elsewhere = folder_of(head) != here
        if elsewhere and not _mentions_tilelang(head):
            continue  # the used copy advertises nothing of ours; a later one does
        eps = _our_entry_points(head, key, problems, near)
        if eps and elsewhere:
            meta = _metadata(head, problems)
        if eps and meta is not None:
            found.extend(_advertised(head, meta, eps, installed, problems))
    index = DiscoveryIndex(tuple(found), _duplicates(copies_of), tuple(dict.fromkeys(problems)),
                           tuple(near))
    if index.problems and full:
        from ..diagnosis import warn  # only where metadata cannot be used
        for finding in index.problems:
            warn(finding)
    if index.near_misses:  # also from activation's look, at ``import tilelang``: once per process
        from ..diagnosis import warn  # only where a group is near one of ours
        for finding in index.near_miss_findings():
            warn(finding, once=True)
    return index


def _mentions_tilelang(dist: Distribution) -> bool:
    """Whether ``dist``'s ``entry_points.txt`` mentions ``tilelang`` (one that cannot be read
    does too: the copy that is used says what is wrong with it)."""
    kind = file_kind(dist, "entry_points.txt")
    if kind is not None:
        return kind != FOLDER  # a FIFO or a device is named where it is looked at; a folder is no file
    try:
        text = read_file(dist, "entry_points.txt")
    except Exception:  # not UTF-8, ...
        return True
    return "tilelang" in text.lower() if text is not None else _unreadable(dist, "entry_points.txt")


def _unreadable(dist: Distribution, filename: str, problems: list[Finding] | None = None) -> bool:
    """Whether ``filename`` of ``dist``'s metadata folder is there but this process may not read it
    (``read_text`` answers ``None`` as for a missing file: another user's, under ``umask 077``),
    the problem noted in ``problems``."""
    try:
        path = metadata_file_path(dist, filename)
        if path is None:
            return False
        denied = stat.S_ISREG(os.stat(path).st_mode) and not os.access(path, os.R_OK)
    except PermissionError:
        denied = True
    except (AttributeError, OSError, ValueError, TypeError):  # no such file, or no metadata folder on disk
        return False
    if denied and problems is not None:
        problems.append(unreadable_finding(dist, filename))
    return denied


def installed_versions(core_version: str) -> dict[str, str | None]:
    """Installed versions of the core (else ``core_version``: a source tree), of the TVM that ``import
    tvm`` gives (as ``apache-tvm``) and of the TileLang that ``import tilelang`` gives (under its
    distribution's name, whatever it is); ``None``: not importable."""
    from ..environment import installed_version, provider_versions  # a full scan's alone, as verdicts are
    return {**provider_versions(), CORE_DISTRIBUTION: installed_version(CORE_DISTRIBUTION) or core_version}


def _metadata(dist: Distribution, problems: list[Finding]) -> PackageMetadata | None:
    """``dist``'s metadata when it has a Name and a Version, else ``None`` (the problem noted)."""
    problem = files_finding(dist)
    if problem is not None:
        problems.append(problem)
        return None
    try:
        meta = dist.metadata
        if not meta["Name"] or not meta["Version"]:
            if _unreadable(dist, "METADATA", problems):
                return None
            raise ValueError("it has no Name or no Version")
    except Exception as exc:  # importlib's error, or no Name or Version
        problems.append(unusable_finding(dist, "METADATA", exc, ignored="distribution"))
        return None
    return meta


def _our_entry_points(dist: Distribution, key: str, problems: list[Finding],
                      near: list[tuple[str, str, str, str]]) -> list[EntryPoint]:
    """The entry points of our groups in ``dist``, in file order; near-miss groups go to ``near``."""
    problem = file_finding(dist, "entry_points.txt")
    if problem is not None:
        problems.append(problem)
        return []
    try:
        eps = list(dist.entry_points)
    except Exception as exc:  # not UTF-8, a line that is not ``name = value``, ...
        problems.append(unusable_finding(dist, "entry_points.txt", exc, ignored="entry points"))
        return []
    if not eps:
        _unreadable(dist, "entry_points.txt", problems)
    near_misses_possible = not is_core(key)  # this package's own groups (``tvm.backends``) are meant as they are
    for group in dict.fromkeys(ep.group for ep in eps if ep.group not in GROUPS and near_misses_possible):
        from ._near_miss import near_miss_group  # only for a group not ours
        ours = near_miss_group(group)
        if ours is not None:
            near.append((key, folder_of(dist), group, ours))
    return [ep for ep in eps if ep.group in GROUPS]


def _advertised(dist: Distribution, meta: PackageMetadata, eps: Iterable[EntryPoint],
                installed: dict[str, str | None] | None, problems: list[Finding],
                ) -> list[AdvertisedEntryPoint]:
    """The records of ``eps``, with the distribution's requirement verdict (none without ``installed``)."""
    name, version = meta["Name"], meta["Version"]
    requires: tuple[str, ...] = ()
    verdict = None
    if installed is not None:
        from ..environment import check_requirements, relevant_requires
        try:  # ``requires`` parses the metadata again; it is needed only for requires.txt
            requires = relevant_requires(meta.get_all("Requires-Dist") or dist.requires or (), installed)
        except Exception as exc:
            problems.append(unusable_finding(dist, "METADATA", exc, ignored="distribution"))
            return []
        if not is_core(name):
            verdict = check_requirements(name, requires, installed)
    return [AdvertisedEntryPoint(ep.group, ep.name, ep.value, name, version, requires, verdict,
                                 folder_of(dist)) for ep in eps]


def _duplicates(copies_of: dict[str, list[Distribution]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Real second copies of the distributions that advertise our groups in any copy: not the same
    folder reached again, nor the ``*.egg-info`` an editable install leaves in its source tree."""
    out = []
    for key, (head, *copies) in copies_of.items():
        unique: dict[str, Distribution] = {}
        for copy in (head, *copies):
            unique.setdefault(os.path.realpath(folder_of(copy)), copy)
        distinct = list(unique.values())[1:]
        if not distinct:  # one copy: no duplicate, whichever copy is editable
            continue
        projects = [p for p in map(editable_source, (head, *distinct)) if p]
        distinct = [c for c in distinct if not _inside_any(c, projects) and not (
            _inside_any(head, projects) and editable_source(c) is not None)]
        if distinct and any(map(_advertises, (head, *distinct))):
            out.append((key, tuple(map(folder_of, (head, *distinct)))))
    return tuple(sorted(out))


def _advertises(dist: Distribution) -> bool:
    try:
        text = read_file(dist, "entry_points.txt") or ""
    except Exception:  # judged where the copy is used; a later copy never is
        return False
    return any(f"[{group}]" in text for group in GROUPS)


def _inside_any(dist: Distribution, folders: Sequence[str]) -> bool:
    real = os.path.realpath(folder_of(dist))
    return any(real == f or real.startswith(f.rstrip(os.sep) + os.sep) for f in folders)

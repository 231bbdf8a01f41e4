"""Installed metadata and the controls -> planned sources: the one scan of the installed distributions
(no cache), what it finds (its records) and the plan of each entry point.

The scan goes through ``importlib.metadata``: it sees what ``entry_points()`` sees, parsing only the
``entry_points.txt`` that mention ``tilelang``. Metadata that cannot be used skips that distribution
alone, with one finding naming its metadata folder (worded by :mod:`..diagnosis`). The metadata's
readers (:mod:`..environment`, reached through its door) are imported only where a scan runs: with
autoload off, planning imports none of them."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import environment
from ..core import (
    CORE_DISTRIBUTION,
    CORE_ENTRY_POINTS,
    GROUPS,
    PlanState,
    SourceState,
    is_core,
    normalize_name,
)
from ._controls import Controls, warn_control_problems

if TYPE_CHECKING:
    from importlib.metadata import Distribution, EntryPoint, PackageMetadata

    from ..diagnosis import Finding

__all__ = ["AdvertisedEntryPoint", "DiscoveryIndex", "PlannedSource", "declaration_problems", "discover",
           "plan_sources", "planned_sources", "third_party_planned"]

@dataclass(frozen=True, slots=True)
class AdvertisedEntryPoint:
    """One installed entry point of our groups, its distribution's requirements and their verdict."""

    group: str
    name: str
    value: str
    distribution: str
    version: str
    requires: tuple[str, ...] = ()
    incompatible: str | None = None
    location: str = ""

    @property
    def spec(self) -> str:
        """The entry point as written in metadata: ``kind = value``."""
        return f"{self.name} = {self.value}"


@dataclass(frozen=True, slots=True)
class DiscoveryIndex:
    """What one scan found: entry points, duplicated distributions, metadata problems (findings, worded by
    :mod:`..diagnosis`), near misses."""

    entry_points: tuple[AdvertisedEntryPoint, ...] = ()
    duplicates: tuple[tuple[str, tuple[str, ...]], ...] = ()
    problems: tuple[Finding, ...] = ()
    near_misses: tuple[tuple[str, str, str, str], ...] = ()

    def near_miss_findings(self) -> list[Finding]:
        """One finding per entry of ``near_misses`` (worded by :mod:`..diagnosis`: what to fix)."""
        from ..core import NearMissPluginWarning
        from ..diagnosis import Finding  # only where a group is near one of ours
        return [Finding.of(NearMissPluginWarning, dist, distribution=dist, location=location, group=group, ours=ours)
                for dist, location, group, ours in self.near_misses]


@dataclass(frozen=True, slots=True)
class PlannedSource:
    """An entry point with the state discovery gives it (``reason``: why it is not ``lazy``)."""

    entry: AdvertisedEntryPoint
    state: PlanState
    reason: str | None = None



def plan_sources(entry_points: Iterable[AdvertisedEntryPoint], controls: Controls,
                 core_version: str) -> list[PlannedSource]:
    """Installed entry points as planned sources: the core's first, then the others in a fixed order."""
    entry_points = tuple(entry_points)
    warn_control_problems(controls.unknown_names(entry_points))
    core = [AdvertisedEntryPoint(group, name, value, CORE_DISTRIBUTION, core_version)
            for group, name, value in CORE_ENTRY_POINTS]
    third_party = sorted((ep for ep in entry_points if not is_core(ep.distribution)),
                         key=lambda ep: (normalize_name(ep.distribution), ep.group, ep.name, ep.value))
    return [_plan(ep, controls) for ep in (*core, *third_party)]


def _plan(ep: AdvertisedEntryPoint, controls: Controls) -> PlannedSource:
    """One entry point's plan: skipped by a control, incompatible, or lazy (loaded at first use)."""
    skipped = controls.skip_reason(ep.distribution, ep.name)
    if skipped is not None:
        return PlannedSource(ep, SourceState.DISABLED, skipped)
    if ep.incompatible is not None:
        return PlannedSource(ep, SourceState.INCOMPATIBLE, ep.incompatible)
    return PlannedSource(ep, SourceState.LAZY, None)


def declaration_problems(index: DiscoveryIndex) -> list[tuple[str, str]]:
    """``(distribution, message)`` for each declaration that cannot take effect or is unsafe."""
    from ..diagnosis import no_core_requirement_problem, words  # check's, never activation's
    found = [(str(finding["distribution"]), words(finding)) for finding in index.near_miss_findings()]
    seen: set[str] = set()
    for ep in index.entry_points:
        dist = normalize_name(ep.distribution)
        if is_core(dist) or dist in seen:
            continue
        seen.add(dist)
        if not _requires_core(ep.requires):
            found.append((ep.distribution, no_core_requirement_problem(ep.distribution, ep.version, ep.location)))
    return found


def _requires_core(requires: Iterable[str]) -> bool:
    """Whether requirement lines (``Requires-Dist``) require the core outside any extra."""
    from ..environment import applicable  # ``packaging``: a full scan's, never activation's
    for line in requires:
        req = applicable(line)
        if req is not None and is_core(req.name):
            return True
    return False


def discover(controls: Controls, *, full: bool = True) -> DiscoveryIndex:
    """One scan of the installed metadata (empty when autoload is off; ``full=False``: no verdicts)."""
    if not controls.autoload:
        return DiscoveryIndex()
    from .. import __version__
    return scan_environment(__version__, full=full)


def planned_sources(controls: Controls, *, full: bool = True) -> list[PlannedSource]:
    """What a discovering registry loads under ``controls`` (see :func:`discover` for ``full``)."""
    from .. import __version__
    return plan_sources(discover(controls, full=full).entry_points, controls, __version__)


def third_party_planned(controls: Controls) -> bool:
    """Whether a non-core distribution advertises entry points the controls do not all skip."""
    return any(not is_core(p.entry.distribution) and p.state != SourceState.DISABLED
               for p in planned_sources(controls, full=False))


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
        here = environment.folder_of(dist)
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
        if not any(environment.folder_of(c) == here for c in copies):
            copies[:] = [dist]  # not found by its name: its own only copy
        judged.update(map(environment.folder_of, copies))  # a stale copy is one duplicate warning
        head = copies[0]
        elsewhere = environment.folder_of(head) != here
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
    kind = environment.file_kind(dist, "entry_points.txt")
    if kind is not None:
        return kind != environment.FOLDER  # a FIFO or a device is named where it is looked at; a folder is no file
    try:
        text = environment.read_file(dist, "entry_points.txt")
    except Exception:  # not UTF-8, ...
        return True
    return "tilelang" in text.lower() if text is not None else _unreadable(dist, "entry_points.txt")


def _unreadable(dist: Distribution, filename: str, problems: list[Finding] | None = None) -> bool:
    """Whether ``filename`` of ``dist``'s metadata folder is there but this process may not read it
    (``read_text`` answers ``None`` as for a missing file: another user's, under ``umask 077``),
    the problem noted in ``problems``."""
    try:
        path = environment.metadata_file_path(dist, filename)
        if path is None:
            return False
        denied = stat.S_ISREG(os.stat(path).st_mode) and not os.access(path, os.R_OK)
    except PermissionError:
        denied = True
    except (AttributeError, OSError, ValueError, TypeError):  # no such file, or no metadata folder on disk
        return False
    if denied and problems is not None:
        problems.append(environment.unreadable_finding(dist, filename))
    return denied


def installed_versions(core_version: str) -> dict[str, str | None]:
    """Installed versions of the core (else ``core_version``: a source tree), of the TVM that ``import
    tvm`` gives (as ``apache-tvm``) and of the TileLang that ``import tilelang`` gives (under its
    distribution's name, whatever it is); ``None``: not importable."""
    from ..environment import installed_version, provider_versions  # a full scan's alone, as verdicts are
    return {**provider_versions(), CORE_DISTRIBUTION: installed_version(CORE_DISTRIBUTION) or core_version}


def _metadata(dist: Distribution, problems: list[Finding]) -> PackageMetadata | None:
    """``dist``'s metadata when it has a Name and a Version, else ``None`` (the problem noted)."""
    problem = environment.files_finding(dist)
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
        problems.append(environment.unusable_finding(dist, "METADATA", exc, ignored="distribution"))
        return None
    return meta


def _our_entry_points(dist: Distribution, key: str, problems: list[Finding],
                      near: list[tuple[str, str, str, str]]) -> list[EntryPoint]:
    """The entry points of our groups in ``dist``, in file order; near-miss groups go to ``near``."""
    problem = environment.file_finding(dist, "entry_points.txt")
    if problem is not None:
        problems.append(problem)
        return []
    try:
        eps = list(dist.entry_points)
    except Exception as exc:  # not UTF-8, a line that is not ``name = value``, ...
        problems.append(environment.unusable_finding(dist, "entry_points.txt", exc, ignored="entry points"))
        return []
    if not eps:
        _unreadable(dist, "entry_points.txt", problems)
    near_misses_possible = not is_core(key)  # this package's own groups (``tvm.backends``) are meant as they are
    for group in dict.fromkeys(ep.group for ep in eps if ep.group not in GROUPS and near_misses_possible):
        from ._near_miss import near_miss_group  # only for a group not ours
        ours = near_miss_group(group)
        if ours is not None:
            near.append((key, environment.folder_of(dist), group, ours))
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
            problems.append(environment.unusable_finding(dist, "METADATA", exc, ignored="distribution"))
            return []
        if not is_core(name):
            verdict = check_requirements(name, requires, installed)
    return [AdvertisedEntryPoint(ep.group, ep.name, ep.value, name, version, requires, verdict,
                                 environment.folder_of(dist)) for ep in eps]


def _duplicates(copies_of: dict[str, list[Distribution]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Real second copies of the distributions that advertise our groups in any copy: not the same
    folder reached again, nor the ``*.egg-info`` an editable install leaves in its source tree."""
    out = []
    for key, (head, *copies) in copies_of.items():
        unique: dict[str, Distribution] = {}
        for copy in (head, *copies):
            unique.setdefault(os.path.realpath(environment.folder_of(copy)), copy)
        distinct = list(unique.values())[1:]
        if not distinct:  # one copy: no duplicate, whichever copy is editable
            continue
        projects = [p for p in map(environment.editable_source, (head, *distinct)) if p]
        distinct = [c for c in distinct if not _inside_any(c, projects) and not (
            _inside_any(head, projects) and environment.editable_source(c) is not None)]
        if distinct and any(map(_advertises, (head, *distinct))):
            out.append((key, tuple(map(environment.folder_of, (head, *distinct)))))
    return tuple(sorted(out))


def _advertises(dist: Distribution) -> bool:
    try:
        text = environment.read_file(dist, "entry_points.txt") or ""
    except Exception:  # judged where the copy is used; a later copy never is
        return False
    return any(f"[{group}]" in text for group in GROUPS)


def _inside_any(dist: Distribution, folders: Sequence[str]) -> bool:
    real = os.path.realpath(environment.folder_of(dist))
    return any(real == f or real.startswith(f.rstrip(os.sep) + os.sep) for f in folders)

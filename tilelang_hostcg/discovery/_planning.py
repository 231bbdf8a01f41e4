"""Installed metadata and the controls -> planned sources (one scan, no cache)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import CORE_DISTRIBUTION, SourceState, is_core, normalize_name
from ._controls import Controls, warn_control_problems
from ._records import CORE_ENTRY_POINTS, AdvertisedEntryPoint, DiscoveryIndex, PlannedSource

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["declaration_problems", "discover", "plan_sources", "planned_sources", "third_party_planned"]


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
    from ._scan import scan_environment  # the metadata's readers: only where autoload is on
    return scan_environment(__version__, full=full)


def planned_sources(controls: Controls, *, full: bool = True) -> list[PlannedSource]:
    """What a discovering registry loads under ``controls`` (see :func:`discover` for ``full``)."""
    from .. import __version__
    return plan_sources(discover(controls, full=full).entry_points, controls, __version__)


def third_party_planned(controls: Controls) -> bool:
    """Whether a non-core distribution advertises entry points the controls do not all skip."""
    return any(not is_core(p.entry.distribution) and p.state != SourceState.DISABLED
               for p in planned_sources(controls, full=False))

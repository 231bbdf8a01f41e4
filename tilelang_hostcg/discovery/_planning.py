"""Discovery's interface: installed metadata and the ``TILELANG_HOSTCG_*`` controls -> planned
sources. It imports nothing of the registry; every discovery is one scan (no cache)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._names import CORE_DISTRIBUTION
from ._controls import ENV_PREFER, ControlProblem, Controls, warn_control_problems
from ._records import CORE_ENTRY_POINTS, AdvertisedEntryPoint, DiscoveryIndex, PlannedSource, normalize_name
from ._requirements import applicable

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["AdvertisedEntryPoint", "CORE_ENTRY_POINTS", "ControlProblem", "Controls", "DiscoveryIndex", "ENV_PREFER",
           "PlannedSource", "declaration_problems", "discover", "normalize_name", "plan_sources", "planned_sources",
           "third_party_planned"]


def plan_sources(entry_points: Iterable[AdvertisedEntryPoint], controls: Controls,
                 core_version: str) -> list[PlannedSource]:
    """Installed entry points as planned sources (warning of controls naming nothing installed):
    the core's own first, then the others by distribution, group, kind and value, so the load
    order never depends on ``sys.path``."""
    entry_points = tuple(entry_points)
    warn_control_problems(controls.unknown_names(entry_points))
    core = [AdvertisedEntryPoint(group, name, value, CORE_DISTRIBUTION, core_version)
            for group, name, value in CORE_ENTRY_POINTS]
    third_party = sorted((ep for ep in entry_points if normalize_name(ep.distribution) != CORE_DISTRIBUTION),
                         key=lambda ep: (normalize_name(ep.distribution), ep.group, ep.name, ep.value))
    planned = []
    for ep in (*core, *third_party):
        reason = controls.skip_reason(ep.distribution, ep.name)
        if reason is not None:
            planned.append(PlannedSource(ep, "disabled", reason))
        elif ep.incompatible is not None:
            planned.append(PlannedSource(ep, "incompatible", ep.incompatible))
        else:
            planned.append(PlannedSource(ep, "lazy"))
    return planned


def declaration_problems(index: DiscoveryIndex) -> list[tuple[str, str]]:
    """``(distribution, message)`` for each plugin declaration that cannot take effect or is
    unsafe: a near miss of our groups, no requirement on ``tilelang-hostcg``."""
    found = [(dist, message) for (dist, *_), message in zip(index.near_misses, index.near_miss_messages(), strict=True)]
    seen: set[str] = set()
    for ep in index.entry_points:
        dist = normalize_name(ep.distribution)
        if dist == CORE_DISTRIBUTION or dist in seen:
            continue
        seen.add(dist)
        if not any((req := applicable(line)) is not None and normalize_name(req.name) == CORE_DISTRIBUTION
                   for line in ep.requires):  # outside any extra
            found.append((ep.distribution, (
                f"plugin distribution {ep.distribution!r} {ep.version} ({ep.location!r}) "
                f"advertises tilelang-hostcg entry points but declares no requirement on "
                f"{CORE_DISTRIBUTION}, so nothing keeps an incompatible {CORE_DISTRIBUTION} "
                f"from being installed beside it. Add e.g. "
                f"'{CORE_DISTRIBUTION}>=0.1,<1' to its dependencies")))
    return found


def discover(controls: Controls, *, full: bool = True) -> DiscoveryIndex:
    """One scan of the installed metadata, its problems warned (an empty index when ``controls``
    turn autoload off). ``full=False``: what is advertised, without requirement verdicts."""
    from .. import __version__
    from ._scan import scan_environment

    return scan_environment(__version__, full=full) if controls.autoload else DiscoveryIndex()


def planned_sources(controls: Controls, *, full: bool = True) -> list[PlannedSource]:
    """What a discovering registry loads under ``controls`` (see :func:`discover` for ``full``)."""
    from .. import __version__

    return plan_sources(discover(controls, full=full).entry_points, controls, __version__)


def third_party_planned(controls: Controls) -> bool:
    """Whether a distribution other than the core advertises entry points of ours that
    ``controls`` do not all skip (an incompatible one counts): the one rule by which a client
    integration turns itself on. A look without requirement verdicts (``full=False``)."""
    return any(normalize_name(p.entry.distribution) != CORE_DISTRIBUTION and p.state != "disabled"
               for p in planned_sources(controls, full=False))

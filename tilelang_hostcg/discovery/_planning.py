"""Discovery: installed metadata and the ``TILELANG_HOSTCG_*`` controls -> planned sources.

It imports nothing of the registry; the names below are its interface, and planning (what
the registry loads) is here. :mod:`._records`, :mod:`._controls`, :mod:`._requirements` and
:mod:`._scan` (the one ``importlib.metadata`` scan) hold the rest. Every discovery is one
scan: there is no cache."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._names import CORE_DISTRIBUTION
from ._controls import ENV_PREFER, ControlProblem, Controls, warn_control_problems
from ._records import (
    CORE_ENTRY_POINTS,
    AdvertisedEntryPoint,
    DiscoveryIndex,
    PlannedSource,
    core_entry_points,
    normalize_name,
)
from ._requirements import applicable

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["AdvertisedEntryPoint", "CORE_DISTRIBUTION", "CORE_ENTRY_POINTS", "ControlProblem", "Controls",
           "DiscoveryIndex", "ENV_PREFER", "PlannedSource", "core_entry_points", "declaration_problems",
           "discover", "normalize_name", "plan_sources", "planned_sources", "third_party_planned"]


def plan_sources(entry_points: Iterable[AdvertisedEntryPoint], controls: Controls,
                 core_version: str) -> list[PlannedSource]:
    """Turn installed entry points into planned sources (pure but for the warnings about
    controls naming nothing installed). The core's own entry points always come first (only
    ``TILELANG_HOSTCG_DISABLE`` naming the core disables them); third-party ones follow sorted by
    distribution, group, kind and value, so the load order never depends on ``sys.path``."""
    entry_points = tuple(entry_points)
    warn_control_problems(controls.unknown_names(entry_points))
    third_party = sorted(
        (ep for ep in entry_points if normalize_name(ep.distribution) != CORE_DISTRIBUTION),
        key=lambda ep: (normalize_name(ep.distribution), ep.group, ep.name, ep.value))
    planned = []
    for ep in (*core_entry_points(core_version), *third_party):
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
    unsafe: entry points in a near miss of our groups, and no requirement on ``tilelang-hostcg``."""
    found = [(dist, message) for (dist, *_), message
             in zip(index.near_misses, index.near_miss_messages(), strict=True)]
    seen: set[str] = set()
    for ep in index.entry_points:
        dist = normalize_name(ep.distribution)
        if dist == CORE_DISTRIBUTION or dist in seen:
            continue
        seen.add(dist)
        if not any(_names_core(line) for line in ep.requires):
            found.append((ep.distribution, (
                f"plugin distribution {ep.distribution!r} {ep.version} ({ep.location!r}) "
                f"advertises tilelang-hostcg entry points but declares no requirement on "
                f"{CORE_DISTRIBUTION}, so nothing keeps an incompatible {CORE_DISTRIBUTION} "
                f"from being installed beside it. Add e.g. "
                f"'{CORE_DISTRIBUTION}>=0.1,<1' to its dependencies")))
    return found


def _names_core(line: str) -> bool:
    """Whether a Requires-Dist line is a requirement on the core outside any extra."""
    req = applicable(line)
    return req is not None and normalize_name(req.name) == CORE_DISTRIBUTION


def discover(controls: Controls, *, full: bool = True) -> DiscoveryIndex:
    """One scan of the installed metadata, its problems warned (no scan, an empty index,
    when ``controls`` turn autoload off). ``full=False``: what is advertised, without the
    requirement verdicts and the warnings but the near misses' (see
    :func:`.scan.scan_environment`)."""
    from .. import __version__
    from ._scan import scan_environment

    return scan_environment(__version__, full=full) if controls.autoload else DiscoveryIndex()


def planned_sources(controls: Controls, *, full: bool = True) -> list[PlannedSource]:
    """What a discovering registry loads under ``controls``: the installed entry points of
    our groups (none but the core's when autoload is off), planned (``full=False``: from
    :func:`discover`'s look without requirement verdicts)."""
    from .. import __version__

    return plan_sources(discover(controls, full=full).entry_points, controls, __version__)


def third_party_planned(controls: Controls) -> bool:
    """Whether a distribution other than the core advertises entry points of our groups that
    ``controls`` do not all skip (an incompatible one counts: resolution then says why it is
    not used), as resolution will plan them: the one rule by which a client integration turns
    itself on (TileLang's at ``import tilelang``, TVM's at ``import tvm``). A look at what is
    advertised (``full=False``): no requirement verdicts, no ``packaging.requirements``."""
    return any(normalize_name(p.entry.distribution) != CORE_DISTRIBUTION and p.state != "disabled"
               for p in planned_sources(controls, full=False))

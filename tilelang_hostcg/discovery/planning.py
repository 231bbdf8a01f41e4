"""Discovery's top layer (pure): installed entry points and controls -> planned sources
(:func:`plan_sources`), and the judgement of plugin declarations (:func:`declaration_problems`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._names import CORE_DISTRIBUTION
from .controls import Controls, warn_control_problems
from .records import AdvertisedEntryPoint, DiscoveryIndex, PlannedSource, core_entry_points
from .records import normalize_name as _normal
from .requirements import applicable

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["declaration_problems", "plan_sources"]


def plan_sources(entry_points: Iterable[AdvertisedEntryPoint], controls: Controls,
                 core_version: str) -> list[PlannedSource]:
    """Turn installed entry points into planned sources (pure but for the warnings about
    controls naming nothing installed). The core's own entry points always come first (only
    ``TILELANG_HOSTCG_DISABLE`` naming the core disables them); third-party ones follow sorted by
    distribution, group, kind and value, so the load order never depends on ``sys.path``."""
    entry_points = tuple(entry_points)
    warn_control_problems(controls.unknown_names(entry_points))
    third_party = sorted(
        (ep for ep in entry_points if _normal(ep.distribution) != CORE_DISTRIBUTION),
        key=lambda ep: (_normal(ep.distribution), ep.group, ep.name, ep.value))
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
        dist = _normal(ep.distribution)
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
    return req is not None and _normal(req.name) == CORE_DISTRIBUTION

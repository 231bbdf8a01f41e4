"""Discovery's top layer: installed entry points and controls -> planned sources (pure).

The layers below: :mod:`._metadata` (the records, names and safe metadata reads),
:mod:`._controls` (the ``TILELANG_HOSTCG_*`` variables), :mod:`._scan` (the one
metadata scan) and :mod:`._cache` (the index kept between processes). This module
plans what the registry loads and judges what plugin distributions declare; its
``__all__`` is discovery's interface for the rest of the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._names import CORE_DISTRIBUTION
from .._types import SourceState
from .controls import ENV_PREFER, ControlProblem, Controls, warn_control_problems
from .records import (
    CORE_ENTRY_POINTS,
    AdvertisedEntryPoint,
    DiscoveryIndex,
    core_entry_points,
    normalize_name,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "CORE_DISTRIBUTION",
    "CORE_ENTRY_POINTS",
    "ENV_PREFER",
    "AdvertisedEntryPoint",
    "ControlProblem",
    "Controls",
    "DiscoveryIndex",
    "PlannedSource",
    "core_entry_points",
    "declaration_problems",
    "normalize_name",
    "plan_sources",
]


@dataclass(frozen=True, slots=True)
class PlannedSource:
    """An entry point with the state discovery gives it: ``lazy``, ``disabled`` or
    ``incompatible`` (then ``reason`` says why)."""

    entry: AdvertisedEntryPoint
    state: SourceState
    reason: str | None = None


def plan_sources(entry_points: Iterable[AdvertisedEntryPoint], controls: Controls,
                 core_version: str) -> list[PlannedSource]:
    """Turn installed entry points into planned lazy sources (pure).

    The core's own entry points are always present (installed or not) and come
    first; ``TILELANG_HOSTCG_DISABLE`` naming the core (``tilelang-hostcg`` or
    ``tilelang-hostcg:kind``) disables them, nothing else does. Third-party ones follow
    sorted by distribution, group, kind and value, so the load order never depends
    on ``sys.path``.
    """
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
    """``(distribution, message)`` for each plugin declaration that cannot take effect
    or is unsafe: entry points in a group that is a near miss of ours, and a plugin
    distribution that declares no requirement on ``tilelang-hostcg`` (nothing then
    keeps an upgrade of the core from breaking it)."""
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
    """Whether a Requires-Dist line is an unconditional-on-extras requirement on the core."""
    head, _, marker = line.partition(";")
    for stop in "<>=!~[ (":
        head = head.split(stop, 1)[0]
    return normalize_name(head) == CORE_DISTRIBUTION and "extra" not in marker

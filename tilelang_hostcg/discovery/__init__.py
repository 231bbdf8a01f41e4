"""Discovery: installed metadata and the ``TILELANG_HOSTCG_*`` controls -> planned sources.

It imports nothing of the registry. :mod:`.records` holds the records, :mod:`.controls`
the controls, :mod:`.scan` the one metadata scan and :mod:`.planning` what the registry
loads; the names below are discovery's interface for the rest of the package.
"""

from __future__ import annotations

from .planning import (
    CORE_DISTRIBUTION,
    CORE_ENTRY_POINTS,
    ENV_PREFER,
    AdvertisedEntryPoint,
    ControlProblem,
    Controls,
    DiscoveryIndex,
    PlannedSource,
    core_entry_points,
    declaration_problems,
    normalize_name,
    plan_sources,
)

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
    "planned_sources",
]


def planned_sources(controls: Controls) -> list[PlannedSource]:
    """What a discovering registry loads under ``controls``: the installed entry points of
    our groups (none but the core's when autoload is off), planned."""
    from .. import __version__
    from . import cache

    entries = cache.load_index(__version__).entry_points if controls.autoload else ()
    return plan_sources(entries, controls, __version__)

"""Discovery: installed metadata and the ``TILELANG_HOSTCG_*`` controls -> planned sources.

It imports nothing of the registry; the names below are its interface. :mod:`.records`,
:mod:`.controls`, :mod:`.requirements`, :mod:`.scan` (the one ``importlib.metadata`` scan)
and :mod:`.planning` hold the rest. Every discovery is one scan: there is no cache."""

from __future__ import annotations

from .._names import CORE_DISTRIBUTION
from .controls import ENV_PREFER, ControlProblem, Controls
from .planning import declaration_problems, plan_sources
from .records import (
    CORE_ENTRY_POINTS,
    AdvertisedEntryPoint,
    DiscoveryIndex,
    PlannedSource,
    core_entry_points,
    normalize_name,
)

__all__ = ["CORE_DISTRIBUTION", "CORE_ENTRY_POINTS", "ENV_PREFER", "AdvertisedEntryPoint", "ControlProblem",
           "Controls", "DiscoveryIndex", "PlannedSource", "core_entry_points", "declaration_problems", "discover",
           "normalize_name", "plan_sources", "planned_sources"]


def discover(controls: Controls) -> DiscoveryIndex:
    """One scan of the installed metadata, its problems warned (no scan, an empty index,
    when ``controls`` turn autoload off)."""
    from .. import __version__
    from .scan import scan_environment

    return scan_environment(__version__) if controls.autoload else DiscoveryIndex()


def planned_sources(controls: Controls) -> list[PlannedSource]:
    """What a discovering registry loads under ``controls``: the installed entry points of
    our groups (none but the core's when autoload is off), planned."""
    from .. import __version__

    return plan_sources(discover(controls).entry_points, controls, __version__)

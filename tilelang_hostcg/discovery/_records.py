"""Discovery's records and the core's own entry points."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core import CODEGEN_GROUP, PlanState

if TYPE_CHECKING:
    from ..diagnosis import Finding

# The core's own entry points; pyproject.toml advertises exactly these (a test checks).
CORE_ENTRY_POINTS: tuple[tuple[str, str, str], ...] = (
    (CODEGEN_GROUP, "c", "tilelang_hostcg.builtin:C_HOST_CODEGEN"),
    (CODEGEN_GROUP, "llvm", "tilelang_hostcg.builtin:LLVM_HOST_CODEGEN"),
)

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

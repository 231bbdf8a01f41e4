"""The discovery index between processes (placeholder: always scans)."""

from __future__ import annotations

from ._discovery import DiscoveryIndex, scan_environment

__all__ = ["load_index"]


def load_index(core_version: str) -> DiscoveryIndex:
    """The entry-point index of the running environment."""
    return scan_environment(core_version)

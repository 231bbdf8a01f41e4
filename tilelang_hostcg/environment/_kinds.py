"""Target kind names: the aliases of one kind and its registry key. Imports nothing (read by the
controls at ``import tvm``, where parsing a target is not needed)."""

from __future__ import annotations

KIND_ALIASES = {"hip": "rocm"}  # one device: TileLang says hip, TVM 0.27 says rocm


def canonical_kind(kind: str) -> str:
    """The registry key of a kind name (``hip`` and ``rocm`` share one key)."""
    return KIND_ALIASES.get(kind, kind)


def kind_spellings(kind: str) -> tuple[str, ...]:
    """Every spelling of ``kind``, canonical first (``rocm`` -> ``("rocm", "hip")``)."""
    canon = canonical_kind(kind)
    return (canon, *sorted(k for k, v in KIND_ALIASES.items() if v == canon))

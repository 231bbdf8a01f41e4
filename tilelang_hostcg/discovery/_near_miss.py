"""The near-miss test of entry-point groups: a group one edit away from one of ours."""

from __future__ import annotations

from ..core import GROUPS


def _squeeze(group: str) -> str:
    return "".join(ch for ch in group.lower() if ch.isalnum())


_SQUEEZED = {_squeeze(group): group for group in GROUPS}


def near_miss_group(group: str) -> str | None:
    """Our group that ``group`` was probably meant to be (one edit away), else ``None``."""
    if group in GROUPS or "tilelang" not in group.lower():
        return None
    squeezed = _squeeze(group)
    for ours_squeezed, ours in _SQUEEZED.items():
        if _within_one_edit(squeezed, ours_squeezed):
            return ours
    return None


def _within_one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by at most one inserted, removed or replaced character."""
    if len(a) > len(b):
        a, b = b, a
    if len(b) - len(a) > 1:
        return False
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i + (len(a) == len(b)):] == b[i + 1:]

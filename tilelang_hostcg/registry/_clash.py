"""The advice for two plugins that register the same name for one kind: which one to rename."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import DuplicateRegistrationError
from ..environment import installed_at

if TYPE_CHECKING:
    from ._sources import SourceInfo


def _installed_at(distribution: str) -> float:
    """When ``distribution``'s metadata folder was written (its install); 0 where it cannot be read."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import distribution as find
    try:
        return installed_at(find(distribution))
    except (PackageNotFoundError, OSError, ValueError):
        return 0.0


def clash_advice(info: SourceInfo, skip: str) -> str | None:
    """What to do when ``info``'s plugin registers a name another distribution registered first,
    else ``None``: rename it in one of the two (the one installed last, most likely a copy that
    kept the names it was copied with), or skip one."""
    err, dist = info.error, info.origin.distribution
    other = getattr(getattr(err, "existing", None), "distribution", None)
    if not isinstance(err, DuplicateRegistrationError) or dist is None or other in (None, dist):
        return None
    newer, older = sorted((str(dist), str(other)), key=_installed_at, reverse=True)
    return (f"{dist!r} and {other!r} both register {err.name!r} for {err.kind!r}, and a name is "
            f"one registration per kind across all plugins: rename it in the one you are writing "
            f"({newer!r} was installed last; a copy of {older!r} keeps its names until they are "
            f"renamed, as the template's README lists them), then reinstall that one{skip}")

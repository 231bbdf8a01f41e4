"""Two plugins that register the same name for one kind: the facts of the clash (:mod:`..diagnosis` words
the advice: which one to rename)."""

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


def clash_facts(info: SourceInfo) -> dict[str, str | None]:
    """Where ``info``'s plugin registers a name another distribution registered first: the other one
    (``clash_other``), the name and kind, and which of the two was installed last (``clash_newer``,
    most likely a copy that kept the names it was copied with) and first; else all ``None``."""
    err, dist = info.error, info.origin.distribution
    other = getattr(getattr(err, "existing", None), "distribution", None)
    if not isinstance(err, DuplicateRegistrationError) or dist is None or other in (None, dist):
        return dict.fromkeys(("clash_other", "clash_name", "clash_kind", "clash_newer", "clash_older"))
    newer, older = sorted((str(dist), str(other)), key=_installed_at, reverse=True)
    return {"clash_other": str(other), "clash_name": err.name, "clash_kind": err.kind, "clash_newer": newer,
            "clash_older": older}

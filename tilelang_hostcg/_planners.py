"""The calls made before a registry decides a resolution, where a client's defaults join it (the TVM
integration's), so that an answer never depends on whether a build ran first. Cheap to import: the
integration imports it at ``import tvm``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import suppress
from typing import Any

Planner = Callable[[Any, str], None]  # (registry, kind)

PLANNERS: list[Planner] = []


def add_planner(planner: Planner, registry: Any = None) -> None:
    """Call ``planner`` before each resolution a registry decides; ``registry``'s remembered answers (or
    the default registry's, where it exists) are dropped, so that its next resolution asks ``planner``."""
    PLANNERS.append(planner)
    api = sys.modules.get(__name__.rpartition(".")[0] + "._api")
    for target in (registry,) if registry is not None else tuple(getattr(api, "_default", ())):
        with target._table.lock:
            target._table.invalidate()


def remove_planner(planner: Planner) -> None:
    """Stop calling ``planner`` (no-op where it is not called)."""
    with suppress(ValueError):
        PLANNERS.remove(planner)

"""Apache TVM integration: :func:`install` (also run at ``import tvm`` once a third-party plugin is
installed) replaces ``tvm.tirx.build.tir_to_runtime`` with :mod:`._route`, so every TIR build builds
its host module through the registry; TVM's own ``target.build.<kind>`` stay the defaults
(``apache-tvm-<kind>``). Importing this package is cheap: it runs at ``import tvm``."""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING

from .._routing import routing
from ._points import BUILD_MODULE, DEFAULT_PREFIX, FUNCTION, KINDS, UnsupportedTVMError, check
from ._route import State, make_route

if TYPE_CHECKING:
    from .._registry import Registry

__all__ = ["DEFAULT_PREFIX", "KINDS", "UnsupportedTVMError", "add_defaults", "install",
           "is_installed", "uninstall"]

_LOCK = threading.RLock()
_STATE: list[State] = []


def is_installed() -> bool:
    """Whether :func:`install` is in effect and TVM still calls the route (also inside another package's wrapper)."""
    return bool(routing("tvm", explain=False).routed)


def install(*, registry: Registry | None = None) -> None:
    """Route TVM's host modules through ``registry`` (default: the default registry). Idempotent.
    Raises :class:`UnsupportedTVMError`, changing nothing, for a TVM lacking an integration point or
    whose ``tir_to_runtime`` another package has replaced."""
    from .._tvm import import_tvm
    tvm = sys.modules.get("tvm") or import_tvm()  # importing TVM may activate: it installs first
    with _LOCK:
        if not _STATE:
            state = State(sys.modules[BUILD_MODULE], check(tvm), registry)
            setattr(state.module, FUNCTION, make_route(state))
            _STATE.append(state)


def uninstall() -> None:
    """Undo :func:`install`: TVM's original is put back and its defaults leave the registry (a route
    another package wrapped since hands every build to TVM's original). No-op when not installed."""
    with _LOCK:
        if not _STATE:
            return
        state = _STATE.pop()
        state.active = False
        if getattr(state.module, FUNCTION, None) is state.replacement:
            setattr(state.module, FUNCTION, state.original)
        state.close()


def add_defaults(registry: Registry) -> None:
    """Register TVM's own codegens in ``registry`` as :func:`install` does, without touching TVM."""
    from ._defaults import register_defaults
    register_defaults(registry, {})

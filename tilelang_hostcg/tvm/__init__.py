"""Apache TVM integration: every TIR build of apache-tvm builds its host module through the registry.

``import tvm`` calls :func:`install` through TVM's own ``tvm.backends`` entry point once a
third-party plugin is installed (:mod:`._activation`; ``TILELANG_HOSTCG_AUTO_INSTALL=0`` turns
that off); a program may call it too. It replaces ``tvm.tirx.build.tir_to_runtime``, through
which every TIR build passes (``tvm.compile``, ``tvm.tirx.build``, MetaSchedule, the
``tirx.build`` global function), with :mod:`._route`: each device target's hooks, then the host
target's codegen, build the host module; TVM builds device modules as before and its
``target.build.*`` functions are never overridden. Any apache-tvm that has the integration
points of :mod:`._points` is routed, whatever its version. TVM's own ``target.build.<kind>`` are
*defaults* (``apache-tvm-<kind>``), so with no plugin codegen the output is stock's. A build
nested in a plugin's codegen, or made where TileLang is imported, goes to TVM's original.
Importing this package is cheap (no TVM, no registry): it runs at ``import tvm``.
"""

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
    """Whether TVM's TIR builds go through the registry: :func:`install` is in effect (by a program
    or activation at ``import tvm``) and TVM still calls the route, also inside another package's
    wrapper (see :func:`tilelang_hostcg._routing.routing`)."""
    return bool(routing("tvm", explain=False).routed)


def install(*, registry: Registry | None = None) -> None:
    """Route the host modules of TVM's TIR builds through ``registry`` (default: the default
    registry, taken at the first build). Idempotent. Raises :class:`UnsupportedTVMError`,
    having changed nothing, for a TVM that lacks an integration point or where another package
    has already replaced ``tvm.tirx.build.tir_to_runtime`` (it is left alone)."""
    if _STATE:
        return
    tvm = sys.modules.get("tvm")
    if tvm is None:
        from .._tvm import import_tvm

        tvm = import_tvm()
    with _LOCK:
        if _STATE:
            return
        state = State(sys.modules[BUILD_MODULE], check(tvm), registry)
        setattr(state.module, FUNCTION, make_route(state))
        _STATE.append(state)


def uninstall() -> None:
    """Undo :func:`install`, also one made at ``import tvm``: TVM's original ``tir_to_runtime``
    is put back (the same object) and TVM's defaults leave the registry. Where another package
    has wrapped the route since, its wrapper stays and the route in it hands every build to
    TVM's original. No-op when not installed."""
    with _LOCK:
        if not _STATE:
            return
        state = _STATE.pop()
        state.active = False
        if getattr(state.module, FUNCTION, None) is state.replacement:
            setattr(state.module, FUNCTION, state.original)
        state.close()


def add_defaults(registry: Registry) -> None:
    """Register TVM's own codegens in ``registry`` as :func:`install` does at the first build,
    without touching TVM (the CLI's ``check`` and ``explain`` answer as routed TVM would)."""
    from ._defaults import register_defaults

    register_defaults(registry, {})

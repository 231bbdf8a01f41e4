"""Apache TVM integration: every TIR build of apache-tvm builds its host module through the registry.

It turns itself on: once a third-party plugin is installed beside apache-tvm, ``import tvm``
calls :func:`install` through TVM's own ``tvm.backends`` entry point (see
:mod:`tilelang_hostcg.tvm.activation`; ``TILELANG_HOSTCG_AUTO_INSTALL=0`` turns that off). A
program can also call it::

    import tilelang_hostcg.tvm

    tilelang_hostcg.tvm.install()

After :func:`install`, ``tvm.compile`` (TIR and Relax), ``tvm.tirx.build``, MetaSchedule's
builder and the ``tirx.build`` global function build the host module through
:func:`tilelang_hostcg.default_registry` (entry points of installed plugins included): the
registry's hooks for each device target run on the host module first, then the host target's
codegen builds it. Device modules are built by TVM exactly as before. The one function
replaced is ``tvm.tirx.build.tir_to_runtime``, through which every TIR build passes; TVM's
``target.build.*`` functions are never overridden. :func:`uninstall` puts TVM's very function
back. Any apache-tvm that has the integration points of :mod:`tilelang_hostcg.tvm.gate` is
routed, whatever its version.

TVM's own ``target.build.llvm``, ``target.build.c`` and ``target.build.cuda_host`` are
registered as *defaults* (named ``apache-tvm-<kind>``, distribution ``apache-tvm``), at the
first build: they serve only when no other codegen of the kind matches, so with no plugin
codegen the output is byte-identical to stock TVM's. A ``tvm.compile`` made inside a
plugin's codegen or hook (nested, in the same thread) is built by TVM's original function.
Where TileLang is imported, TileLang's integration is the one that applies
(:mod:`tilelang_hostcg.tilelang`): the route hands every build to TVM's original.

Importing this package is cheap (no TVM, no registry): it runs at ``import tvm``.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING

from .._routing import owner_of, reaches, routing
from .gate import BUILD_MODULE, DEFAULT_PREFIX, FUNCTION, KINDS, UnsupportedTVMError, check
from .route import State, make_route, route_in

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


def _live() -> str | bool | None:
    """``True`` while installed and TVM still calls the route, who replaced it where another
    package did, ``None`` when not installed (or TileLang is imported: the route hands every
    build to TVM's original there)."""
    if not _STATE or "tilelang" in sys.modules:
        return None
    current = getattr(_STATE[0].module, FUNCTION, None)
    return True if reaches(current, _STATE[0].replacement) else owner_of(current)


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
        original = check(tvm)
        state = route_in(original)  # ours, uninstalled while another package's wrapper held it
        if state is not None:
            state.registry, state.active = registry, True
        else:
            state = State(sys.modules[BUILD_MODULE], original, registry)
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
    from .defaults import register_defaults

    register_defaults(registry, {})

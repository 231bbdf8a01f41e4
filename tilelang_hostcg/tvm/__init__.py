"""Apache TVM integration: :func:`install` (also run at ``import tvm`` once a third-party plugin is
installed) replaces ``tvm.tirx.build.tir_to_runtime`` with :mod:`._route`, so every TIR build builds
its host module through the registry; TVM's own ``target.build.<kind>`` stay the defaults
(``apache-tvm-<kind>``). Importing this package is cheap: it runs at ``import tvm``."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from ..clients import Client, ClientState, Native, tilelang_takes_builds
from ..core import UnsupportedTVMError
from ._points import (
    BUILD_FUNCTION,
    BUILD_MODULE,
    BUILD_PACKAGE,
    DEFAULT_PREFIX,
    FUNCTION,
    KINDS,
    check,
    extension_point_names,
)

if TYPE_CHECKING:
    from ..registry import Registry
    from ._route import DefaultsJoiner

__all__ = ["DEFAULT_PREFIX", "KINDS", "UnsupportedTVMError", "add_defaults", "install",
           "is_installed", "uninstall"]


class TVMClient(Client):
    """Apache TVM as a client: one route, ``tvm.tirx.build.tir_to_runtime``."""

    name = "tvm"
    title = "TVM integration (tilelang_hostcg.tvm)"
    compiler = "TVM"
    native_modules = (BUILD_MODULE,)

    def __init__(self) -> None:
        super().__init__()
        self.joiner: DefaultsJoiner | None = None  # that of the install in effect

    def _prepare(self, registry: Registry | None) -> tuple[Any, Registry | None]:
        return _imported_tvm(), registry  # importing TVM may activate: it installs first

    def _enter(self, prepared: tuple[Any, Registry | None]) -> ClientState:
        # The route, its watch and TVM's defaults joining: imported only where a route goes in place.
        from ..clients import Route, watch_builds
        from ._route import DefaultsJoiner, State, handed_to_tvm, make_route

        tvm, registry = prepared
        original = check(tvm)
        module = sys.modules[BUILD_MODULE]
        state = State(None, requested=registry, module=module, original=original, lock=self.lock)
        route = make_route(state)
        state.routes.append(Route(module, FUNCTION, original, route))
        setattr(module, FUNCTION, route)
        watch_builds(state, sys.modules[BUILD_PACKAGE], BUILD_FUNCTION, client="tvm", compiler="TVM",
                     skip=handed_to_tvm)
        self.joiner = DefaultsJoiner(state)
        self.joiner.start()  # TVM's defaults join before any answer, not at the first build
        return state

    def uninstall(self) -> list[str]:
        with self.lock:
            joiner, self.joiner = self.joiner, None
            if joiner is not None:
                joiner.stop()
            return super().uninstall()

    def blocker(self) -> str | None:
        try:
            check(_imported_tvm(), activation=True)  # at ``import tvm``: in the making
        except Exception as exc:  # UnsupportedTVMError, TVMNotFoundError
            return str(exc)
        return None

    def stands_aside(self) -> str | None:
        if tilelang_takes_builds():
            return "TileLang is imported: the TileLang integration applies"
        return None

    def probe_build(self) -> None:
        from ._probe import build_probe
        with self.running_probe():
            build_probe()

    def extension_point(self) -> Native | None:
        if extension_point_names() is None:  # no such point: the adapter is never imported
            return None
        from ._provider import ADAPTER
        where = ADAPTER.point()
        return Native(BUILD_MODULE, None, where) if where is not None else None

    def join_extension_point(self) -> bool:
        _imported_tvm()  # importing it runs its autoload, which registers the adapter where it runs
        if extension_point_names() is None:
            return False
        from ._provider import ADAPTER
        return ADAPTER.register()

    def hints(self) -> list[str]:
        from ._points import POINTS
        return [h for h in (point.hint() for point in POINTS) if h is not None]

    def compiler_switch(self) -> str | None:
        if os.environ.get("TVM_DEVICE_BACKEND_AUTOLOAD", "1") == "0":
            return ("TVM's autoload is off (TVM_DEVICE_BACKEND_AUTOLOAD=0), so `import tvm` does not activate the "
                    "integration; call tilelang_hostcg.tvm.install()")
        return None


def _imported_tvm() -> Any:
    """The imported ``tvm`` (at ``import tvm``: the module in the making), else TVM imported now."""
    tvm = sys.modules.get("tvm")
    if tvm is not None:
        return tvm
    from ..environment import import_tvm  # finding an installed TVM: only where none is imported
    return import_tvm()


CLIENT = TVMClient()


def is_installed() -> bool:
    """Whether :func:`install` is in effect and TVM's builds go through the route: by what the
    last build did while the same objects hold the routes, else by what can be known (each route, or
    another package's function in its place, reaches ours)."""
    return CLIENT.is_installed()


def install(*, registry: Registry | None = None) -> None:
    """Route TVM's host modules through ``registry`` (default: the default registry). Idempotent.
    Raises :class:`UnsupportedTVMError`, changing nothing, for a TVM lacking an integration point or
    whose ``tir_to_runtime`` another package has replaced."""
    CLIENT.install(registry=registry)


def uninstall() -> None:
    """Undo :func:`install`: TVM's original is put back and its defaults leave the registry; a route
    another package wrapped since is left to it (named in a warning) and hands every build to TVM's
    original. No-op when not installed."""
    CLIENT.uninstall()


def add_defaults(registry: Registry) -> None:
    """Register TVM's own codegens in ``registry`` as :func:`install` does, without touching TVM."""
    from ._registering import register_defaults
    register_defaults(registry, {})

"""The route: TVM's ``tvm.tirx.build.tir_to_runtime`` with the host module built through the registry,
and TVM's own codegens joining the registry the route builds into (:class:`DefaultsJoiner`) before that
registry's first answer for a kind, not at the first build: ``resolve_host_codegen(Target("llvm"))`` is
``apache-tvm-llvm`` before the first ``tvm.compile`` as after it. It imports nothing more at ``import
tvm``; the registry (and :mod:`._defaults`) comes with the first build, TVM's defaults
(:mod:`._registering`) with the registry's first decision of a kind."""

from __future__ import annotations

import contextlib
import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..clients import ClientState, hand_on, tilelang_takes_builds
from ..core import PROCESS, ClientDefaults, NoHostCodegenError, notes_apart

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

    from ..registry import Registry

@dataclass(eq=False)
class State(ClientState):
    """One :func:`~tilelang_hostcg.tvm.install`; ``requested``: the registry asked for (``None``: the
    default one, taken at the first build); ``registry``: the one TVM's defaults went into; ``lock``:
    the client's, under which the defaults come in at a build and go out at ``uninstall()``."""

    requested: Registry | None = None
    module: ModuleType | None = None
    original: Callable[..., Any] | None = None
    lock: threading.RLock = field(default_factory=threading.RLock)


def make_route(state: State) -> Callable[..., Any]:
    """The replacement of ``tir_to_runtime`` for ``state`` (its ``__wrapped__`` is TVM's)."""
    original = state.original
    assert original is not None

    def tir_to_runtime(host_mod: Any, device_mod_dict: Any, target_host: Any, *more: Any, **options: Any) -> Any:
        """TVM's ``tir_to_runtime`` with the host module built through tilelang-hostcg's
        registry (TVM's original for a nested build, where TileLang is imported, for a build
        that ``uninstall()`` overtook, and for a call with arguments this one was not written for)."""
        if not state.active or handed_to_tvm():
            return original(host_mod, device_mod_dict, target_host, *more, **options)
        if more or options:
            hand_on(state, state.routes[0], more, options, client="tvm", compiler="TVM")
            return original(host_mod, device_mod_dict, target_host, *more, **options)
        state.called(state.routes[0])
        PROCESS.thread.routing = True
        try:
            from ._defaults import routed

            built = routed(state, host_mod, device_mod_dict, target_host)
        except NoHostCodegenError as exc:
            if state.active:
                _carry_notes(exc)
                raise
            built = None  # uninstall() took TVM's defaults out during this build
        except Exception as exc:
            _carry_notes(exc)
            raise
        finally:
            PROCESS.thread.routing = False
        if built is None:
            return original(host_mod, device_mod_dict, target_host)
        return built

    tir_to_runtime.__wrapped__ = original  # type: ignore[attr-defined]
    return tir_to_runtime


def handed_to_tvm() -> bool:
    """Whether this thread's builds go to TVM's original on purpose: one nested in a routed build (a
    plugin's codegen compiling), or any while TileLang is imported (its integration applies)."""
    return PROCESS.thread.routing or tilelang_takes_builds()


def _carry_notes(exc: Exception) -> None:
    """Put ``exc``'s notes in the message TVM's FFI keeps (``tirx.build``'s global function drops notes)."""
    ffi = getattr(exc, "__tvm_ffi_error__", None)  # an error from C++: its own text is kept
    with contextlib.suppress(Exception):  # another FFI than this one: the notes stay notes
        kind, message, trace = (ffi.kind, ffi.message, ffi.backtrace) if ffi else (type(exc).__name__, str(exc), "")
        # An FFI error's own text holds no note; a Python one's, on 3.10, those add_note joined to it.
        notes = [str(n) for n in getattr(exc, "__notes__", ())] if ffi else notes_apart(exc)
        if notes:
            error = sys.modules["tvm_ffi.core"].Error(kind, "\n".join([message, *notes]), trace)
            exc.__tvm_ffi_error__ = error  # type: ignore[attr-defined]


class DefaultsJoiner:
    """The joiner of one ``install()`` (``state``): called by the registry before it decides a kind,
    it adds TVM's codegen of that kind (and, the first time, all of TVM's defaults) where the route
    builds into that registry; never where TileLang takes the builds or once uninstalled."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.joined: frozenset[str] = frozenset()  # kinds already asked: nothing more to do for them
        requested = state.requested
        self.place: ClientDefaults = PROCESS.client_defaults if requested is None else requested.client_defaults

    def __call__(self, registry: Registry, kind: str) -> None:
        if kind in self.joined or not self.state.active or tilelang_takes_builds():
            return
        from ._registering import join_defaults

        if join_defaults(self.state, registry, kind):
            self.joined = self.joined | {kind}

    def start(self) -> None:
        """Join from now on (the registry's remembered answers are dropped)."""
        self.place.add(self)

    def stop(self) -> None:
        """Join no more (TVM's defaults leave the registry with ``uninstall()``)."""
        self.place.remove(self)

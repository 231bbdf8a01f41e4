"""The one interface of a client (a compiler whose host builds we route: TileLang, Apache TVM):
its state, ``install``/``uninstall``, its defaults, the activation warning and whether its routes
are live. Each client implements :class:`Client`; :mod:`._routing` asks it, knowing no client's
internals. Cheap to import (it runs at ``import tvm``)."""

from __future__ import annotations

import sys
import threading
from abc import ABC, abstractmethod
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple

from _tilelang_hostcg_hook import ENV_AUTO_INSTALL

from ._errors import warn_plugin
from ._names import CODEGEN_GROUP, HOOK_GROUP

if TYPE_CHECKING:
    from ._registry import Registry
    from ._types import HostCodegen, HostCodegenHook

ClientName = Literal["tilelang", "tvm"]


@dataclass(eq=False)
class Route:
    """One attribute of the compiler replaced by ours: ``owner.name`` was ``original``, is ``ours``;
    ``held``: what held the attribute during the last build (the object itself, never its ``id``: a
    freed wrapper is never confused with another at its address)."""

    owner: Any
    name: str
    original: Any
    ours: Any
    carries_builds: bool = True  # False: a cache key, not on the path host code is built by
    held: Any = None

    def current(self) -> Any:
        """What ``owner.name`` is now (a class's own attribute, not an inherited one)."""
        if isinstance(self.owner, type):
            return vars(self.owner).get(self.name)
        return getattr(self.owner, self.name, None)


@dataclass(eq=False)
class ClientState:
    """What one ``install()`` did: its ``routes``, the defaults it registered (by kind) in ``registry``,
    and what the builds showed: ``calls`` counts calls of a route; ``last_build``: the routes the
    last build called, so far (each thread's builds are told apart)."""

    registry: Registry | None
    routes: list[Route] = field(default_factory=list)
    codegens: dict[str, HostCodegen] = field(default_factory=dict)
    hooks: dict[str, HostCodegenHook] = field(default_factory=dict)
    calls: int = 0
    last_build: list[Route] = field(default_factory=list)
    active: bool = True  # False: a route another package's wrapper still holds hands calls to the original
    _thread: threading.local = field(default_factory=threading.local)

    def called(self, route: Route) -> None:
        """A build called our ``route``, held by what holds its attribute now (ours, or another
        package's wrapper that calls ours). A build calls the hooks' route first (the last route that
        carries builds): it, or a route called again in this thread, begins this thread's next build."""
        carrying = self.carrying()
        window: list[Route] | None = getattr(self._thread, "window", None)
        if window is None or route is carrying[-1] or route in window:
            window = self._thread.window = []
            for other in carrying:  # what holds each attribute during this build
                other.held = other.current()
        window.append(route)
        route.held = route.current()
        self.last_build = window  # the list itself: the rest of this build is added to it
        self.calls += 1

    def carrying(self) -> list[Route]:
        """The routes host code is built through, in the order they were put in place."""
        return [r for r in self.routes if r.carries_builds]


class Liveness(NamedTuple):
    """Whether the compiler's builds go through a client's routes: ``routed``, ``installed``; ``by_build``:
    the answer rests on what the last build did (else on what can be known before: each route, or
    what holds its attribute, reaches ours); ``who`` holds a route that is not used; ``unused``: the
    route the last build did not call."""

    routed: bool
    installed: bool
    who: str | None = None
    by_build: bool = False
    unused: str | None = None


def tilelang_takes_builds() -> bool:
    """The one rule between the clients: where TileLang is imported, its integration builds host code,
    and TVM's route hands every build to TVM's original."""
    return "tilelang" in sys.modules


def reaches(func: Any, target: Any, stop: Any = None) -> bool:
    """Whether ``func`` is ``target`` or can call it: wraps it (``__wrapped__``), holds it in its
    closure or names it among its module's globals (``_orig = B.f``); a few levels, never through
    ``stop`` (the compiler's original: what it calls is not another package's)."""
    todo, seen = [func], 0
    while todo and seen < 64:
        func, seen = todo.pop(), seen + 1
        if func is target:
            return True
        if callable(func) and func is not stop:
            todo.append(getattr(func, "__wrapped__", None))
            for cell in getattr(func, "__closure__", None) or ():
                with suppress(ValueError):  # an empty cell
                    todo.append(cell.cell_contents)
            todo.extend(_named_globals(func))
    return False


def _named_globals(func: Any) -> list[Any]:
    """The values of the module globals ``func``'s code names (a plain function's only)."""
    code, names = getattr(func, "__code__", None), getattr(func, "__globals__", None)
    if not isinstance(names, dict) or code is None:
        return []
    return [names[n] for n in getattr(code, "co_names", ()) if n in names and callable(names[n])]


def owner_of(func: Any) -> str:
    """Who defined ``func``: its code file's module (``functools.wraps`` copies ``__module__``)."""
    where = getattr(getattr(func, "__code__", None), "co_filename", None)
    module = next((name for name, m in list(sys.modules.items()) if where and getattr(m, "__file__", None) == where),
                  getattr(func, "__module__", None) or type(func).__name__)
    return f"{module!r} ({where})" if where else repr(module)


def remove_defaults(registry: Registry, codegens: dict[str, HostCodegen], hooks: dict[str, HostCodegenHook]) -> None:
    """Remove a client's defaults from ``registry`` (only those still registered as they were)."""
    for group, held, unregister in ((CODEGEN_GROUP, codegens, registry.unregister_host_codegen),
                                    (HOOK_GROUP, hooks, registry.unregister_host_codegen_hook)):
        for kind, obj in held.items():
            if any(r.obj is obj for r in registry.registrations(group, kind)):
                unregister(kind, obj.name)
        held.clear()


class Client(ABC):
    """A compiler whose host builds can go through the registry. Subclasses say how to enter and
    leave it (:meth:`_prepare`, :meth:`_enter`), what blocks it (:meth:`blocker`) and when it stands
    aside for another client (:meth:`stands_aside`); the rest is written here once."""

    name: ClassVar[ClientName]
    title: ClassVar[str]  # "TileLang integration (tilelang_hostcg.tilelang)"
    compiler: ClassVar[str]  # "TileLang"

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.state: ClientState | None = None
        self.activation_warning: str | None = None  # the warning this process's activation gave

    # -- what each client says ---------------------------------------------------------------
    @abstractmethod
    def _prepare(self, registry: Registry | None) -> Any:
        """What :meth:`install` needs, found before the lock (imports the compiler; raises what blocks it)."""

    @abstractmethod
    def _enter(self, prepared: Any) -> ClientState:
        """Replace the compiler's functions (under the lock); on failure, undo and raise."""

    @abstractmethod
    def blocker(self) -> str | None:
        """What keeps the compiler in use from being routed (a missing point, a rival), else ``None``."""

    def stands_aside(self) -> str | None:
        """Why another client takes this one's builds in this process, else ``None``."""
        return None

    def compiler_switch(self) -> str | None:
        """Why the compiler's own switch keeps activation from running at its import, else ``None``."""
        return None

    @abstractmethod
    def probe_build(self) -> None:
        """Build a tiny kernel with the compiler, as a program would, where no device is needed."""

    def hints(self) -> list[str]:
        """What reading the compiler's code suggests where a build did not call the route."""
        return []

    # -- written once ---------------------------------------------------------------------
    def install(self, *, registry: Registry | None = None) -> None:
        """Route the compiler's host builds through ``registry`` (default: the default registry).
        Idempotent; a failure changes nothing."""
        if self.state is not None:
            return
        prepared = self._prepare(registry)
        with self.lock:
            if self.state is None:
                self.state = self._enter(prepared)

    def uninstall(self) -> list[str]:
        """Undo :meth:`install`: each replaced attribute that is still ours gets the compiler's
        original back; one another package has set since (wrapping ours, or in its place) is theirs
        and left as it is, with one warning each (our route inside a wrapper hands every call to the
        original from now on). The defaults leave the registry. Returns the warnings; no-op when not
        installed."""
        with self.lock:
            state, self.state = self.state, None
            if state is None:
                return []
            state.active = False
            left = []
            for route in reversed(state.routes):
                now = route.current()
                if now is route.ours:
                    setattr(route.owner, route.name, route.original)
                elif now is not route.original:
                    left.append(self._left_text(route, now))
            if state.registry is not None:
                remove_defaults(state.registry, state.codegens, state.hooks)
        for text in left:
            warn_plugin(text)
        return left

    def _left_text(self, route: Route, now: Any) -> str:
        """Why :meth:`uninstall` leaves ``route``'s attribute (``now``, another package's) as it is."""
        if reaches(now, route.ours, route.original):
            held = (f"around tilelang_hostcg's replacement, which from now on hands every call to "
                    f"{self.compiler}'s original")
        else:
            held = "in place of tilelang_hostcg's replacement (which it does not call)"
        return (f"tilelang_hostcg.{self.name}.uninstall() left {_path(route)} as it is: another package put a "
                f"function of {owner_of(now)} there, {held}. That change is the other package's to undo; to have "
                f"{self.compiler}'s own {route.name} back, undo it as that package documents (or uninstall that "
                "package)")

    def live(self) -> Liveness:
        """Whether the compiler's builds go through our routes (see :class:`Liveness`): for each route,
        what the last build did while the same object held its attribute, else whether what holds
        it reaches ours."""
        state = self.state
        if state is None:
            return Liveness(False, installed=False)
        judged_by_build = []
        for route in state.carrying():
            now = route.current()
            seen = bool(state.last_build) and now is route.held  # the object itself, never an id
            judged_by_build.append(seen)
            who = None if now is route.ours else owner_of(now)
            if seen and route not in state.last_build:
                return Liveness(False, installed=True, who=who, by_build=True, unused=_path(route))
            if not seen and now is not route.ours and not reaches(now, route.ours, route.original):
                return Liveness(False, installed=True, who=who)
        return Liveness(True, installed=True, by_build=bool(judged_by_build) and all(judged_by_build))

    def is_installed(self) -> bool:
        """Whether :meth:`install` is in effect and the compiler's host builds go through the registry."""
        return self.live().routed is True

    def activation_failed(self, exc: BaseException) -> None:
        """Activation at ``import <compiler>`` failed with ``exc``: one warning (never raising), kept
        for this process's client line."""
        try:
            cause = f"{type(exc).__name__}: {exc}"
        except Exception:
            cause = type(exc).__name__
        self.activation_warning = message = (
            f"tilelang-hostcg did not activate its {self.compiler} integration: {cause}. {self.compiler} runs "
            f"stock, without plugins. Set {ENV_AUTO_INSTALL}=0 to turn activation off")
        with suppress(Exception):  # never fail the import
            warn_plugin(message)


def _path(route: Route) -> str:
    owner = route.owner
    where = f"{owner.__module__}.{owner.__qualname__}" if isinstance(owner, type) else getattr(owner, "__name__", "?")
    return f"{where}.{route.name}"



"""What one ``install()`` of a client did (:class:`ClientState`: the attributes it replaced, each a
:class:`Route`, and the defaults it registered) and what its builds showed: which routes each build
called, told apart by thread, and whether a build watched to its end (:mod:`._watch`) missed one.
Cheap to import (it runs at ``import tvm``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core import HostCodegen, HostCodegenHook
    from ..registry import Registry


@dataclass(eq=False)
class Route:
    """One attribute of the compiler replaced by ours: ``owner.name`` was ``original``, is ``ours``;
    ``held``: what held the attribute during the last build (the object itself, never its ``id``: a
    freed wrapper is never confused with another at its address)."""

    owner: Any
    name: str
    original: Any
    ours: Any
    carries_builds: bool = True  # False: a cache key or a build's watch, not on the path host code is built by
    held: Any = None
    unserved: str | None = None  # what its last call passed that it cannot serve (the compiler's own served it)

    def current(self) -> Any:
        """What ``owner.name`` is now (a class's own attribute, not an inherited one)."""
        if isinstance(self.owner, type):
            return vars(self.owner).get(self.name)
        return getattr(self.owner, self.name, None)

    def path(self) -> str:
        """``module.Class.name`` (or ``module.name``) of the attribute replaced: the point."""
        owner = self.owner
        where = (f"{owner.__module__}.{owner.__qualname__}" if isinstance(owner, type)
                 else getattr(owner, "__name__", "?"))
        return f"{where}.{self.name}"


@dataclass(eq=False)
class ClientState:
    """What one ``install()`` did: its ``routes``, the defaults it registered (by kind) in ``registry``,
    and what the builds showed: ``calls`` counts calls of a route; ``last_build``: the routes the
    last build called (``None``: no build seen yet; each thread's builds are told apart); ``noticed``:
    what a build has been warned of (:mod:`._watch`)."""

    registry: Registry | None
    routes: list[Route] = field(default_factory=list)
    codegens: dict[str, HostCodegen] = field(default_factory=dict)
    hooks: dict[str, HostCodegenHook] = field(default_factory=dict)
    calls: int = 0
    last_build: list[Route] | None = None
    active: bool = True  # False: a route another package's wrapper still holds hands calls to the original
    noticed: set[str] = field(default_factory=set)
    _thread: threading.local = field(default_factory=threading.local)

    def called(self, route: Route, unserved: str | None = None) -> None:
        """A build called our ``route`` (``unserved``: with arguments it cannot serve, handed to the
        compiler's own function), held by what holds its attribute now (ours, or another package's
        wrapper that calls ours). Inside a watched build (:meth:`begin_build`) the call joins that
        build; else a build calls the hooks' route first (the last route that carries builds): it,
        or a route called again in this thread, begins this thread's next build."""
        route.unserved = unserved
        window: list[Route] | None = getattr(self._thread, "window", None)
        if getattr(self._thread, "depth", 0):
            assert window is not None
            if route not in window:
                window.append(route)
        else:
            carrying = self.carrying()
            if window is None or route is carrying[-1] or route in window:
                window = self._thread.window = []
                self._hold(carrying)
            window.append(route)
            self.last_build = window  # the list itself: the rest of this build is added to it
        route.held = route.current()
        self.calls += 1

    def begin_build(self) -> None:
        """A build of this thread begins in the compiler's own function we watch (nested: joins the outer)."""
        depth = getattr(self._thread, "depth", 0)
        self._thread.depth = depth + 1
        if not depth:
            self._thread.window = []
            self._hold(self.carrying())

    def end_build(self, *, completed: bool) -> list[Route]:
        """The watched build of this thread ended: what it called becomes the last build (a build that
        failed before it called a route shows nothing). Returns the routes a completed build did not
        call (empty for a nested or failed one)."""
        depth = self._thread.depth = self._thread.depth - 1
        if depth:
            return []
        window: list[Route] = self._thread.window
        self._thread.window = None  # a call outside a watched build begins a build of its own
        if not completed and not window:
            return []
        self.last_build = window
        return [r for r in self.carrying() if r not in window] if completed else []

    @property
    def probing(self) -> bool:
        """Whether this thread runs ``check``'s probe build (:meth:`running_probe`)."""
        return bool(getattr(self._thread, "probing", False))

    @contextmanager
    def running_probe(self) -> Iterator[None]:
        """``check``'s probe build runs in the block: what it shows is ``check``'s to report, not warned of."""
        before, self._thread.probing = self.probing, True
        try:
            yield
        finally:
            self._thread.probing = before

    @staticmethod
    def _hold(routes: list[Route]) -> None:
        for route in routes:  # what holds each attribute during this build
            route.held = route.current()

    def carrying(self) -> list[Route]:
        """The routes host code is built through, in the order they were put in place."""
        return [r for r in self.routes if r.carries_builds]

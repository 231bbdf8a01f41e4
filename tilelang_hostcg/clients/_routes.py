"""A client's routes: the integration points they go in, what one ``install()`` did and what its builds
showed, and the watch on those builds. Cheap to import (it runs at ``import tvm``).

- **Points** (:class:`Point`): a function, dict or field of a compiler that a client of ours replaces
  or reads, checked in the compiler the program imported by its shape: what its callers can call, as
  they call it (so many arguments by position, these by keyword), decorators followed through
  ``__wrapped__``. Whether the point is on the compiler's path is shown by a build, never by reading
  code: reading the callers' code only gives a :meth:`Point.hint`.
- **State** (:class:`ClientState`): the attributes one ``install()`` replaced, each a :class:`Route`,
  and the defaults it registered; which routes each build called, told apart by thread, and whether a
  build watched to its end missed one. :func:`reaches` and :func:`owner_of` tell what holds an
  attribute now.
- **The watch** (:func:`watch_builds`): the compiler's own function that a build of host code runs
  through (TileLang's lowering's ``host_codegen``, TVM's ``tvm.tirx.build``) is handed on unchanged
  by a watch that, once the function has returned, knows which of the client's routes that build
  called: the first build that completed without one is one warning naming it, and
  ``is_installed()`` goes by that build from then on (:meth:`~._interface.Client.live`). A route
  called with arguments it was not written for (:func:`hand_on`) gives the call to the compiler's own
  function, with one warning naming it: the user's compile never fails for it. Nothing here reads the
  compiler's code: what a build did decides."""

from __future__ import annotations

import functools
import inspect
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from importlib import import_module
from types import CodeType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

if TYPE_CHECKING:
    from ..core import HostCodegen, HostCodegenHook
    from ..registry import Registry

__all__ = ["ClientState", "Point", "Route", "hand_on", "owner_of", "reaches", "watch_builds"]


Shape = tuple[str, ...] | Literal["dict", "field", "mapping", "callable"]
"""A function's arguments as its callers pass them by position (their names only say what they are:
a parameter renamed is the same shape); ``dict`` (a module's dict); ``field`` (a class's);
``mapping`` (a function of no parameters that returns a mapping); ``callable`` (any function: a link
in the chain of callers)."""


class Point(NamedTuple):
    """``module``'s ``path`` (through a class for a method), of ``shape``, called with ``keywords`` by
    name too; ``called_by`` (``module:qualname``): the compiler's own functions that call it, read for
    a hint only."""

    module: str
    path: str
    shape: Shape
    called_by: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.module}.{self.path}"

    def _owner_and_value(self) -> tuple[object, object]:
        owner: object = import_module(self.module)
        *owners, name = self.path.split(".")
        for part in owners:
            owner = getattr(owner, part, None)
        if isinstance(owner, type):
            return owner, vars(owner).get(name)
        return owner, getattr(owner, name, None)

    def value(self) -> object:
        """The point's object in the imported compiler (``None``: missing or not importable)."""
        try:
            return self._owner_and_value()[1]
        except Exception:  # no such module, or the compiler's own module fails
            return None

    def problem(self) -> str | None:
        """What is wrong with this point in the imported compiler (missing, or its callers' call
        would not bind to it), else ``None``."""
        try:
            owner, value = self._owner_and_value()
        except Exception as exc:  # no such module, or the compiler's own module fails: not usable
            return f"{self} ({type(exc).__name__}: {exc})"
        if self.shape == "field":
            name = self.path.rpartition(".")[2]
            found = name in (getattr(owner, "__dataclass_fields__", None) or {}) or hasattr(owner, name)
            return None if found else f"{self} (no such field)"
        if value is None:
            return f"{self} (missing)"
        if self.shape == "dict":
            return None if isinstance(value, dict) else f"{self} (not a dict)"
        return self._function_problem(value)

    def _function_problem(self, value: object) -> str | None:
        try:
            signature = inspect.signature(value, follow_wrapped=True)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            if callable(value) and isinstance(self.shape, tuple) and not self.keywords:
                return None  # a compiled function (an FFI one): its callers call it by position
            return f"{self} (not a function: {type(value).__name__})"
        if self.shape == "callable":
            return None
        params = list(signature.parameters.values())
        if self.shape == "mapping":
            return self._mapping_problem(value) if not params else f"{self} (takes parameters: {_listed(params)})"
        assert isinstance(self.shape, tuple)
        try:
            signature.bind(*self.shape, **{name: name for name in self.keywords})
        except TypeError as exc:
            return f"{self} (parameters ({_listed(params)}) where its callers pass {self.calls()}: {exc})"
        return None

    def calls(self) -> str:
        """How the compiler's callers call the point: ``(self, target_host)``, keywords as ``name=``."""
        assert isinstance(self.shape, tuple)
        return f"({', '.join([*self.shape, *(f'{k}=' for k in self.keywords)])})"

    def _mapping_problem(self, value: object) -> str | None:
        try:
            result = value()  # type: ignore[operator]
        except Exception as exc:  # the compiler's own function fails: not usable
            return f"{self} (raised {type(exc).__name__}: {exc})"
        return None if isinstance(result, Mapping) else f"{self} (returns a {type(result).__name__}, not a mapping)"

    def hint(self) -> str | None:
        """Where reading the callers' code (decorators followed) does not find the point's name: a
        hint for a build that did not call it; never a verdict."""
        name = self.path.rpartition(".")[2]
        for caller in self.called_by:
            module, _, qualname = caller.partition(":")
            try:
                func: object = import_module(module)
                for part in qualname.split("."):
                    func = inspect.getattr_static(func, part)
            except Exception:  # the caller itself is gone
                return f"{self}: its caller {module}.{qualname} is missing"
            codes = _codes(func)
            if codes and not any(_names(code, name) for code in codes):
                return f"{self}: the code of {module}.{qualname} does not name it (a renamed or leftover point?)"
        return None


def _codes(func: object) -> list[CodeType]:
    """The code of ``func`` and of each function it wraps (``__wrapped__``, a few levels)."""
    out = []
    for _ in range(8):
        func = getattr(func, "__func__", func)  # a staticmethod or classmethod
        code = getattr(func, "__code__", None)
        if isinstance(code, CodeType):
            out.append(code)
        inner = None
        with suppress(Exception):
            inner = getattr(func, "__wrapped__", None)
        if inner is None:
            break
        func = inner
    return out


def _listed(params: list[inspect.Parameter]) -> str:
    """The parameters as a signature writes them (a ``*`` before keyword-only ones)."""
    return str(inspect.Signature(params))[1:-1]


def _names(code: CodeType, name: str) -> bool:
    """Whether ``code`` (or a function nested in it) looks ``name`` up."""
    if name in code.co_names:
        return True
    return any(isinstance(const, CodeType) and _names(const, name) for const in code.co_consts)


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
    what a build has been warned of (:mod:`._routes`)."""

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


def watch_builds(state: ClientState, owner: Any, name: str, *, client: str, compiler: str,
                 skip: Callable[[], bool] | None = None) -> Route | None:
    """Put a watch on ``owner.name`` (the compiler's function a build of host code runs through), a
    route that carries no build (:meth:`~._interface.Client.uninstall` puts the function back);
    ``skip``: builds the client hands to the compiler on purpose (nested, another client's). ``None``
    where the compiler has no such function: then only a route's call shows a build."""
    original = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
    if not callable(original):
        return None

    def watched(*args: Any, **kwargs: Any) -> Any:
        if not state.active or (skip is not None and skip()):
            return original(*args, **kwargs)
        state.begin_build()
        try:
            built = original(*args, **kwargs)
        except BaseException:
            state.end_build(completed=False)
            raise
        missed = state.end_build(completed=True)
        if missed and state.active:  # uninstalled meanwhile: the routes handed the build to the compiler
            _notice(state, missed, client, compiler)
        return built

    functools.update_wrapper(watched, original)  # its name and docstring; ``__wrapped__``: the compiler's
    route = Route(owner, name, original, watched, carries_builds=False)
    state.routes.append(route)
    setattr(owner, name, watched)
    return route


def hand_on(state: ClientState, route: Route, more: tuple[Any, ...], options: dict[str, Any], *,
            client: str, compiler: str) -> None:
    """``route`` was called with ``more`` arguments by position and ``options`` by keyword beyond what
    it serves: the build reached it (so no second warning), the caller gives the call to the
    compiler's own function, and one warning (per install and arguments) names the point."""
    extra = [f"{len(more)} more positional argument{'s' if len(more) > 1 else ''}"] if more else []
    extra += [f"{key}=" for key in sorted(options)]
    what = ", ".join(extra)
    state.called(route, unserved=what)
    point = route.path()
    if f"{point}({what})" in state.noticed or state.probing:
        return
    state.noticed.add(f"{point}({what})")
    from ..core import UnservedArgumentsPluginWarning  # a warning's class: only where one is given
    from ..diagnosis import Finding, warn  # a finding's words: only where one is given
    warn(Finding.of(UnservedArgumentsPluginWarning, client, client=client, point=point, arguments=what,
                    compiler=compiler, function=route.name), shown=True)


def _notice(state: ClientState, missed: list[Route], client: str, compiler: str) -> None:
    """A build completed without calling ``missed``: one warning for the points not warned of yet."""
    new = [route for route in missed if route.path() not in state.noticed]
    if not new or state.probing:
        return
    state.noticed.update(route.path() for route in new)
    from ..core import BypassedPluginWarning  # a warning's class: only where one is given
    from ..diagnosis import Finding, held_by, warn  # a finding's words: only where one is given
    holders = {route.path(): None if route.current() is route.ours else owner_of(route.current()) for route in new}
    points = " or ".join(held_by(path, holder, compiler) for path, holder in holders.items())
    held = None if all(holder is None for holder in holders.values()) else "another package"
    warn(Finding.of(BypassedPluginWarning, client, client=client, compiler=compiler, points=points, held=held),
         shown=True)
